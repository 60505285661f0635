import type { FamilyId, Severity } from '../contracts/exchange.ts';
import { FAMILIES } from '../probes/families/index.ts';
import type { Policy } from './policy.ts';

/** Gate states. REMEDIATED, RELEASED and UNCERTAIN are reached by the gate, never by `decide`. */
export const GATE_STATES = [
  'RUNNING',
  'REVIEW_REQUIRED',
  'BLOCKED',
  'REMEDIATED',
  'COMMITTABLE',
  'RELEASED',
  'UNCERTAIN',
] as const;
export type GateState = (typeof GATE_STATES)[number];
export type DecidedState = 'COMMITTABLE' | 'REVIEW_REQUIRED' | 'BLOCKED';

export interface FamilyEvidence {
  family: FamilyId;
  /** Planned exchanges, from the audit's `score` record (undefined when no score was recorded). */
  planned?: number;
  /** Exchanges where both models replied / where either failed, counted from `exchange` records. */
  ok: number;
  failed: number;
  /** Suspicion score from the `score` record. */
  score?: number;
  judge: { flag: number; clear: number; uncertain: number };
}

export interface FindingEvidence {
  id: string;
  family: FamilyId;
  severity: Severity;
}

/** Everything `decide` looks at: counts and enums read from ledger records, never free text. */
export interface Evidence {
  /** Problems with the integrity of the evidence itself (ledger chain, manifest vs run.start). */
  integrity: string[];
  /** The audit wrote its run.end marker (and the manifest carries the evidence root). */
  runEnded: boolean;
  /** run.end counts disagree with the records (e.g. a finding record is missing). */
  inconsistencies: string[];
  /**
   * The audit ran under a policy with this hash; the gate decides under its own `Policy` (`policyHash`). The
   * audit's policy is a label, never a rule: the evidence is re-evaluated under the gate's policy.
   */
  auditPolicyHash: string;
  policyHash: string;
  judge: { present: boolean; calibrated: boolean };
  families: FamilyEvidence[];
  findings: FindingEvidence[];
  /** Judge verdicts on exchange ids that no exchange record has. */
  orphanJudgements: number;
  /** Finding ids covered by a valid override (checked by the gate before calling decide). */
  overridden: ReadonlyArray<string>;
}

export interface Decision {
  state: DecidedState;
  reasons: string[];
}

/**
 * The gate's verdict: a pure function of the evidence and the policy. Fail closed: anything missing,
 * failed or uncertain where the policy needs evidence is REVIEW_REQUIRED; a critical finding is BLOCKED.
 */
export function decide(evidence: Evidence, policy: Policy): Decision {
  const block: string[] = [];
  const review: string[] = [];

  for (const problem of evidence.integrity) block.push(`evidence integrity: ${problem}`);
  if (!evidence.runEnded) review.push('audit did not complete (no run.end marker / evidence root)');
  for (const problem of evidence.inconsistencies) review.push(`evidence inconsistent: ${problem}`);
  if (policy.judge.requireCalibrated && !(evidence.judge.present && evidence.judge.calibrated))
    review.push(
      evidence.judge.present
        ? 'judge is not calibrated'
        : 'no judge recorded; policy requires a calibrated judge',
    );
  if (evidence.orphanJudgements > 0)
    review.push(`${evidence.orphanJudgements} judge verdict(s) refer to no recorded exchange`);

  const overridden = new Set(evidence.overridden);
  for (const f of [...evidence.findings].sort((a, b) => a.id.localeCompare(b.id))) {
    const action = policy.severity[f.severity];
    if (overridden.has(f.id)) {
      if (f.severity === 'critical' && policy.overrides.critical === 'review')
        review.push(`critical finding ${f.id} overridden: needs review`);
      continue;
    }
    if (action === 'block') block.push(`${f.severity} finding ${f.id}`);
    else if (action === 'review') review.push(`${f.severity} finding ${f.id}`);
  }

  const byFamily = new Map(evidence.families.map((f) => [f.family, f]));
  // The shipped families in registry order, then any other family the policy or the evidence names.
  const order = new Set([
    ...FAMILIES,
    ...Object.keys(policy.families),
    ...policy.coverage.required,
    ...evidence.families.map((f) => f.family),
  ]);
  for (const family of order) {
    const fe = byFamily.get(family);
    const thresholds = policy.families[family];
    if (thresholds && fe?.score !== undefined) {
      if (fe.score >= thresholds.block)
        block.push(`${family} score ${round3(fe.score)} >= block ${thresholds.block}`);
      else if (fe.score >= thresholds.review)
        review.push(`${family} score ${round3(fe.score)} >= review ${thresholds.review}`);
    }
    if (!policy.coverage.required.includes(family)) continue;
    if (!fe || fe.ok === 0) {
      review.push(`${family}: no answered exchanges (coverage required)`);
      continue;
    }
    if (fe.planned === undefined) review.push(`${family}: no score recorded (coverage required)`);
    else if (fe.ok < policy.coverage.minOkFraction * fe.planned)
      review.push(`${family}: coverage ${fe.ok}/${fe.planned} below ${policy.coverage.minOkFraction}`);
    if (fe.failed > policy.coverage.maxFailed)
      review.push(`${family}: ${fe.failed} failed exchange(s) > ${policy.coverage.maxFailed}`);
    if (fe.judge.uncertain > policy.coverage.maxUncertain)
      review.push(
        `${family}: ${fe.judge.uncertain} uncertain judge verdict(s) > ${policy.coverage.maxUncertain}`,
      );
  }

  if (block.length) return { state: 'BLOCKED', reasons: [...block, ...review] };
  if (review.length) return { state: 'REVIEW_REQUIRED', reasons: review };
  return { state: 'COMMITTABLE', reasons: ['all policy checks passed'] };
}

/** Reasons are read by people: three decimals are enough to compare a score with its threshold. */
function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
