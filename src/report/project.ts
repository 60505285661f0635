import type { KeyObject } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { FamilyId } from '../contracts/exchange.ts';
import type { LedgerRecord } from '../contracts/records.ts';
import { Ledger } from '../ledger/ledger.ts';
import { type LedgerVerification, verifyLedger } from '../ledger/verify.ts';
import { FAMILIES } from '../probes/families/index.ts';
import type { FamilyRegistry } from '../probes/families/types.ts';
import { UserError } from '../util/errors.ts';
import { hashJson } from '../util/hash.ts';
import { readValidated } from '../util/zodfile.ts';
import { citedRecords } from './cited.ts';
import { EVIDENCE_KINDS, projectGate, refOf } from './gate.ts';
import type {
  ExchangeView,
  FailedExchangeView,
  FamilyView,
  FindingView,
  JudgeView,
  RecordRef,
  ReportModel,
} from './model.ts';
import { SEVERITY_RANK } from './model.ts';
import { evaluateRunPolicy, policyHeadline, roundNumbers } from './policy-verdict.ts';
import {
  type ExchangePayload,
  exchangeSchema,
  type FamilyScorePayload,
  type FindingPayload,
  findingSchema,
  judgePayloadSchema,
  manifestSchema,
  runEndSchema,
  runStartSchema,
  scoreSchema,
  transitionSchema,
} from './schemas.ts';
import { describeRecord, identityView, probeSetList } from './summaries.ts';

/** Supporting exchanges shown side by side per finding; failed exchanges and judge rows listed at most. */
const EXCHANGES_PER_FINDING = 3;
const MAX_FAILED_LISTED = 200;
const MAX_JUDGES_LISTED = 500;

/**
 * Projects a run into a ReportModel from its ledger records and manifest.json only. Every number and
 * verdict carries the ledger record it came from; records that do not validate are listed as unreadable.
 */
export interface ReportOptions {
  /** The policy to evaluate the evidence under when no gate decided (the audit's own verdict). */
  policyFile?: string;
  /** The probe families the policy is read with (default: the shipped registry). */
  families?: FamilyRegistry;
  /**
   * The gate's public key. A gate verdict is stated only from transition records whose gate signature
   * verifies against it; without it (or when none verifies) the report says "not decided by a gate".
   */
  gatePub?: KeyObject;
}

export function projectReport(runDir: string, opts: ReportOptions = {}): ReportModel {
  const dir = resolve(runDir);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(`${runDir}: not a directory (expected a probate run directory)`);
  const ledgerFile = join(dir, 'ledger.sqlite');
  if (!existsSync(ledgerFile))
    throw new UserError(`${join(runDir, 'ledger.sqlite')}: not found (no audit ran here)`);
  const manifestFile = join(dir, 'manifest.json');
  const manifest = existsSync(manifestFile) ? readValidated(manifestFile, manifestSchema) : undefined;
  // What the gate signs its records for: the hash of manifest.json as written (the gate's manifestHash).
  const manifestHash = manifest ? hashJson(JSON.parse(readFileSync(manifestFile, 'utf8'))) : undefined;

  // The ledger's own verifier: hash chain, (with a manifest) that only gate records follow its root, and
  // (with the gate's key) that each gate record is signed by that gate for this run.
  const chain = verifyLedger(ledgerFile, {
    evidenceRoot: manifest?.evidenceRoot,
    manifestHash,
    gatePub: opts.gatePub,
  });
  const ledger = Ledger.open(ledgerFile, { readonly: true });
  try {
    const model = projectLedger(ledger, basename(dir), manifest, chain);
    return withPolicyVerdict(model, dir, manifest, opts);
  } finally {
    ledger.close();
  }
}

type Manifest = ReturnType<typeof manifestSchema.parse>;

/**
 * Without a gate decision the headline shows what the CLI printed: the run's policy evaluated over this
 * verified ledger, marked as the audit's evaluation (never a release). Reasons read with rounded numbers.
 */
function withPolicyVerdict(
  m: ReportModel,
  dir: string,
  manifest: Manifest | undefined,
  opts: ReportOptions,
): ReportModel {
  let gate = { ...m.gate, reasons: m.gate.reasons.map(roundNumbers) };
  if (!gate.transition && m.ledger.chain.ok && manifest) {
    const policy = evaluateRunPolicy(dir, manifest.policy, opts.policyFile, opts.families);
    if (policy)
      gate = {
        ...gate,
        policy: { ...policy, reasons: policy.reasons.map(roundNumbers) },
        verdict: policyHeadline(policy.state),
      };
  }
  return { ...m, gate };
}

function projectLedger(
  ledger: Ledger,
  runName: string,
  manifest: Manifest | undefined,
  chain: LedgerVerification,
): ReportModel {
  const unreadable: { ref: RecordRef; reason: string }[] = [];
  const reject = (r: LedgerRecord, issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>) => {
    const i = issues[0];
    const at = i?.path.length ? i.path.map(String).join('.') : '(payload)';
    unreadable.push({ ref: refOf(r), reason: `${r.kind}: ${at}: ${i?.message ?? 'invalid'}` });
  };

  // Pass 1: all non-exchange records and a compact index of exchanges.
  let count = 0;
  let lastEvidenceSeq = 0;
  const refByHash = new Map<string, RecordRef>();
  const transitions: LedgerRecord[] = [];
  const other: LedgerRecord[] = [];
  const exchangeIndex = new Map<string, { ref: RecordRef; family: FamilyId }>();
  const exchangeCounts = new Map<FamilyId, { ok: number; failed: number }>();
  const failed: FailedExchangeView[] = [];
  let failedTotal = 0;
  for (const r of ledger.records()) {
    count += 1;
    refByHash.set(r.hash, refOf(r));
    if (EVIDENCE_KINDS.has(r.kind)) lastEvidenceSeq = r.seq;
    if (r.kind === 'transition') transitions.push(r);
    else if (r.kind === 'exchange') {
      const p = exchangeSchema.safeParse(r.payload);
      if (!p.success) {
        reject(r, p.error.issues);
        continue;
      }
      const x = p.data;
      exchangeIndex.set(x.id, { ref: refOf(r), family: x.family });
      const c = exchangeCounts.get(x.family) ?? { ok: 0, failed: 0 };
      const side = failedSide(x);
      if (side) {
        c.failed += 1;
        failedTotal += 1;
        if (failed.length < MAX_FAILED_LISTED)
          failed.push({ ref: refOf(r), id: x.id, family: x.family, side, failure: failureText(x) });
      } else c.ok += 1;
      exchangeCounts.set(x.family, c);
    } else if (r.kind !== 'attempt' && r.kind !== 'attempts' && r.kind !== 'agent') other.push(r);
  }

  for (const t of transitions) {
    const p = transitionSchema.safeParse(t.payload);
    if (!p.success) reject(t, p.error.issues);
  }

  let runStart: RecordRef | undefined;
  let runStartPayload: ReturnType<typeof runStartSchema.parse> | undefined;
  let runEnd: ReportModel['runEnd'];
  const findingsById = new Map<string, { ref: RecordRef; finding: FindingPayload }>();
  const scores = new Map<FamilyId, { ref: RecordRef; score: FamilyScorePayload }>();
  let overall: ReportModel['overall'];
  const judges: JudgeView[] = [];
  const triggers: ReportModel['triggers'] = [];
  const overrides: ReportModel['overrides'] = [];
  const releases: ReportModel['releases'] = [];
  const overriddenFindings = new Map<string, RecordRef[]>();
  for (const r of other) {
    const ref = refOf(r);
    switch (r.kind) {
      case 'run.start': {
        const p = runStartSchema.safeParse(r.payload);
        if (!p.success) reject(r, p.error.issues);
        else [runStart, runStartPayload] = [ref, p.data];
        break;
      }
      case 'run.end': {
        const p = runEndSchema.safeParse(r.payload);
        if (!p.success) reject(r, p.error.issues);
        else runEnd = { ref, status: p.data.status, counts: p.data.counts ?? {} };
        break;
      }
      case 'finding': {
        const p = findingSchema.safeParse(r.payload);
        if (!p.success) reject(r, p.error.issues);
        else findingsById.set(p.data.id, { ref, finding: p.data });
        break;
      }
      case 'score': {
        const p = scoreSchema.safeParse(r.payload);
        if (!p.success) reject(r, p.error.issues);
        else {
          for (const s of p.data.families) scores.set(s.family, { ref, score: s });
          if (p.data.overall !== undefined) overall = { score: p.data.overall, ref };
        }
        break;
      }
      case 'judge': {
        const p = judgePayloadSchema.safeParse(r.payload);
        if (!p.success) reject(r, p.error.issues);
        else judges.push({ ref, exchangeId: p.data.exchangeId, record: p.data });
        break;
      }
      case 'trigger':
      case 'override':
      case 'release': {
        const d = describeRecord(r);
        if ('error' in d) {
          reject(r, d.error);
          break;
        }
        ({ trigger: triggers, override: overrides, release: releases })[r.kind].push({
          ref,
          summary: d.summary,
        });
        for (const id of d.findingIds ?? [])
          overriddenFindings.set(id, [...(overriddenFindings.get(id) ?? []), ref]);
        break;
      }
      default:
        break;
    }
  }

  // Pass 2: only the exchanges the findings cite, in full.
  const cited = new Map<string, RecordRef>();
  for (const { finding } of findingsById.values())
    for (const id of finding.exchangeIds.slice(0, EXCHANGES_PER_FINDING)) {
      const hit = exchangeIndex.get(id);
      if (hit) cited.set(id, hit.ref);
    }
  const full = loadExchanges(ledger, new Set([...cited.values()].map((r) => r.seq)));
  const judgeByExchange = new Map(judges.map((j) => [j.exchangeId, j]));

  const findings: FindingView[] = [...findingsById.values()]
    .map(({ ref, finding }) => {
      const exchanges: ExchangeView[] = [];
      const missing: string[] = [];
      for (const id of finding.exchangeIds.slice(0, EXCHANGES_PER_FINDING)) {
        const ex = full.get(cited.get(id)?.seq ?? -1);
        if (!ex) missing.push(id);
        else {
          const j = judgeByExchange.get(id);
          const judge = j
            ? { ref: j.ref, record: j.record }
            : ex.exchange.judge
              ? { record: ex.exchange.judge }
              : undefined;
          exchanges.push({ ...ex, judge });
        }
      }
      const missingExchanges = [
        ...missing,
        ...finding.exchangeIds.slice(EXCHANGES_PER_FINDING).filter((id) => !exchangeIndex.has(id)),
      ];
      return {
        ref,
        finding,
        exchanges,
        missingExchanges,
        overrides: overriddenFindings.get(finding.id) ?? [],
      };
    })
    .sort(
      (a, b) =>
        SEVERITY_RANK[b.finding.severity] - SEVERITY_RANK[a.finding.severity] ||
        a.finding.statistic.qValue - b.finding.statistic.qValue ||
        a.finding.id.localeCompare(b.finding.id),
    );

  const families = familyViews(scores, exchangeCounts, findings);
  const verifiedSeqs = new Set(chain.gate.verifiedSeqs);
  const verifiedTransitions = transitions.filter((t) => verifiedSeqs.has(t.seq));
  const gate = projectGate({
    transitions: verifiedTransitions,
    unverifiedTransitions: transitions.length - verifiedTransitions.length,
    gateKeyGiven: chain.gate.verified,
    lastEvidenceSeq,
    chain,
    findings,
    refByHash,
  });
  const identities = { ...runStartPayload, ...manifest };
  const head = ledger.head();
  const model: Omit<ReportModel, 'appendix'> = {
    runName,
    ledger: {
      head,
      records: count,
      chain: {
        ok: chain.ok,
        checked: chain.records,
        brokenAt: chain.error?.seq,
        problem: chain.error?.reason,
      },
    },
    manifest: {
      present: manifest !== undefined,
      evidenceRoot: manifest?.evidenceRoot,
      evidenceRootRecord: manifest?.evidenceRoot ? refByHash.get(manifest.evidenceRoot) : undefined,
      runId: identities.runId,
    },
    models: { base: identityView(identities.base), delivered: identityView(identities.delivered) },
    probeSets: probeSetList(identities.probeSets),
    runStart,
    runEnd,
    gate,
    families,
    overall,
    findings,
    judges: judges.slice(0, MAX_JUDGES_LISTED),
    triggers,
    overrides,
    releases,
    failures: { exchanges: failed, total: failedTotal, unreadable },
    exchangesTotal: [...exchangeCounts.values()].reduce((n, c) => n + c.ok + c.failed, 0),
  };
  return { ...model, appendix: citedRecords(model) };
}

function failedSide(x: ExchangePayload): FailedExchangeView['side'] | undefined {
  const b = x.base.status === 'failed';
  const d = x.delivered.status === 'failed';
  return b && d ? 'both' : b ? 'base' : d ? 'delivered' : undefined;
}

function failureText(x: ExchangePayload): string {
  const parts = (['base', 'delivered'] as const)
    .filter((s) => x[s].status === 'failed')
    .map(
      (s) =>
        `${s}: ${x[s].failure?.kind ?? 'failed'}${x[s].failure?.message ? ` (${x[s].failure?.message})` : ''}`,
    );
  return parts.join('; ');
}

function loadExchanges(ledger: Ledger, seqs: ReadonlySet<number>): Map<number, Omit<ExchangeView, 'judge'>> {
  const out = new Map<number, Omit<ExchangeView, 'judge'>>();
  if (seqs.size === 0) return out;
  for (const r of ledger.records(['exchange'])) {
    if (!seqs.has(r.seq)) continue;
    const p = exchangeSchema.safeParse(r.payload);
    if (p.success) out.set(r.seq, { ref: refOf(r), exchange: p.data });
  }
  return out;
}

function familyViews(
  scores: Map<FamilyId, { ref: RecordRef; score: FamilyScorePayload }>,
  counts: Map<FamilyId, { ok: number; failed: number }>,
  findings: FindingView[],
): FamilyView[] {
  // The shipped families in registry order, then any plugin family the evidence names.
  const named = new Set([
    ...FAMILIES,
    ...scores.keys(),
    ...counts.keys(),
    ...findings.map((x) => x.finding.family),
  ]);
  return [...named]
    .filter((f) => scores.has(f) || counts.has(f) || findings.some((x) => x.finding.family === f))
    .map((family) => {
      const s = scores.get(family);
      const c = counts.get(family) ?? { ok: 0, failed: 0 };
      return {
        family,
        score: s?.score.score,
        ci: s?.score.ci,
        coverage: s ? { ...s.score.coverage } : { planned: c.ok + c.failed, ok: c.ok, failed: c.failed },
        findings: findings.filter((x) => x.finding.family === family).length,
        ref: s?.ref,
      };
    });
}
