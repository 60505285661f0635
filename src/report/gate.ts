import type { LedgerRecord, RecordKind } from '../contracts/records.ts';
import type { FindingView, GateView, RecordRef } from './model.ts';
import { verdictForState } from './model.ts';
import { transitionSchema } from './schemas.ts';
import { redactSecrets } from './text.ts';

/** States under which a release may happen: the only ones a caveat can downgrade. */
const PERMITTING = new Set(['COMMITTABLE', 'RELEASED']);

/** Records that are evidence the gate decides on (a later one means the decision is stale). */
export const EVIDENCE_KINDS: ReadonlySet<RecordKind> = new Set<RecordKind>([
  'run.start',
  'attempt',
  'attempts',
  'exchange',
  'judge',
  'finding',
  'trigger',
  'agent',
  'score',
  'run.end',
]);

export function refOf(r: LedgerRecord): RecordRef {
  return { seq: r.seq, hash: r.hash, kind: r.kind, ts: r.ts };
}

export interface GateInputs {
  /** Transition records whose gate signature verified against the gate's key (the only ones projected). */
  transitions: LedgerRecord[];
  /** Transition records present but not verified (no gate key given, or the chain is broken). */
  unverifiedTransitions: number;
  /** Whether the gate's public key was given to check signatures with. */
  gateKeyGiven: boolean;
  /** Sequence number of the last evidence record (0 when none). */
  lastEvidenceSeq: number;
  /** The ledger verifier's verdict (hash chain; with a manifest, nothing but gate records after its root). */
  chain: { ok: boolean; error?: { seq: number; reason: string } };
  findings: FindingView[];
  /** Records by hash, to locate the evidence root the gate decided on. */
  refByHash: ReadonlyMap<string, RecordRef>;
}

/**
 * The gate's decision as the report projects it: the latest gate-signed, verified `transition` record's
 * target state (an unsigned or unverifiable one is "not decided by a gate"). The report never upgrades it; when the ledger cannot back a release-permitting state (chain broken,
 * evidence appended after the decision, an unoverridden critical finding) it shows "not decided".
 */
export function projectGate(g: GateInputs): GateView {
  const history = g.transitions.flatMap((r) => {
    const p = transitionSchema.safeParse(r.payload);
    return p.success ? [{ ref: refOf(r), from: p.data.from, to: p.data.to }] : [];
  });
  const caveats: string[] = [];
  const latest = g.transitions.at(-1);
  let state = 'UNDECIDED';
  let reasons: string[] = [];
  let transition: GateView['transition'];
  if (!latest && g.unverifiedTransitions > 0) {
    caveats.push(
      `not decided by a gate: ${g.unverifiedTransitions} transition record(s) not verified against the gate's public key${g.gateKeyGiven ? '' : ' (none given: pass --gate DIR or --gate-pub FILE)'}`,
    );
  } else if (!latest) {
    caveats.push('no gate transition in the ledger: not decided by a gate');
  } else {
    const parsed = transitionSchema.safeParse(latest.payload);
    if (!parsed.success) {
      caveats.push(
        `latest transition record #${latest.seq} is unreadable: the gate decision cannot be shown`,
      );
    } else {
      const t = parsed.data;
      state = t.to;
      reasons = t.reasons.map(redactSecrets);
      transition = {
        ref: refOf(latest),
        from: t.from,
        to: t.to,
        policyVersion: t.policyVersion,
        policyHash: t.policyHash,
        evidenceRoot: t.evidenceRoot,
        evidenceRootRecord: t.evidenceRoot ? g.refByHash.get(t.evidenceRoot) : undefined,
        capabilityId: t.capabilityId,
      };
      if (g.lastEvidenceSeq > latest.seq)
        caveats.push(
          `evidence record #${g.lastEvidenceSeq} was appended after the gate decided (#${latest.seq}): the decision is stale`,
        );
      for (const f of g.findings)
        if (f.finding.severity === 'critical' && f.overrides.length === 0 && PERMITTING.has(state))
          caveats.push(`critical finding ${f.finding.id} has no override, yet the gate state is ${state}`);
    }
  }
  if (!g.chain.ok)
    caveats.push(
      `ledger verification failed — ${g.chain.error?.reason ?? 'unknown problem'}: evidence cannot be trusted`,
    );
  const effectiveState = caveats.length > 0 && PERMITTING.has(state) ? 'UNDECIDED' : state;
  return {
    state,
    effectiveState,
    verdict: verdictForState(effectiveState === 'UNDECIDED' ? undefined : effectiveState),
    reasons,
    caveats,
    transition,
    history,
  };
}
