import type { FamilyId, Severity } from '../contracts/exchange.ts';
import type { RecordKind } from '../contracts/records.ts';
import type { PolicyVerdict } from './policy-verdict.ts';
import type { ExchangePayload, FindingPayload, JudgePayload } from './schemas.ts';

/** Where a claim comes from: one ledger record (anchor `#rec-<seq>`). */
export interface RecordRef {
  seq: number;
  hash: string;
  kind: RecordKind;
  ts: string;
}

/** The reader-facing verdict: a function of the (effective) gate state, never of findings or model text. */
export type Verdict = 'allowed' | 'released' | 'uncertain' | 'review' | 'blocked' | 'undecided';
export type Tone = 'ok' | 'warn' | 'bad' | 'neutral';

export interface VerdictView {
  verdict: Verdict;
  text: string;
  tone: Tone;
}

const STATE_VERDICTS: Record<string, VerdictView> = {
  COMMITTABLE: { verdict: 'allowed', text: 'Release allowed', tone: 'ok' },
  RELEASED: { verdict: 'released', text: 'Released', tone: 'ok' },
  UNCERTAIN: {
    verdict: 'uncertain',
    text: 'Release outcome uncertain — held until reconciled',
    tone: 'warn',
  },
  REVIEW_REQUIRED: {
    verdict: 'review',
    text: 'Review required — no release until a reviewer decides',
    tone: 'warn',
  },
  BLOCKED: { verdict: 'blocked', text: 'Release blocked', tone: 'bad' },
};

export const UNDECIDED: VerdictView = {
  verdict: 'undecided',
  text: 'Not decided by a gate — no release',
  tone: 'neutral',
};

/** Gate state → verdict wording. Unknown or missing states are undecided: never a pass. */
export function verdictForState(state: string | undefined): VerdictView {
  if (state === undefined) return UNDECIDED;
  return Object.hasOwn(STATE_VERDICTS, state) ? STATE_VERDICTS[state]! : UNDECIDED;
}

export interface GateView {
  /** The state the latest transition moved to ("UNDECIDED" when there is none or it is unreadable). */
  state: string;
  /** The state the verdict is computed from: `state`, or UNDECIDED when the evidence cannot back it. */
  effectiveState: string;
  verdict: VerdictView;
  reasons: string[];
  /** Why the report refuses to project the gate's state as-is (stale evidence, broken chain, ...). */
  caveats: string[];
  transition?: {
    ref: RecordRef;
    from?: string | null;
    to: string;
    policyVersion?: string;
    policyHash?: string;
    evidenceRoot?: string;
    /** Ledger record whose hash equals the transition's evidenceRoot, if any. */
    evidenceRootRecord?: RecordRef;
    capabilityId?: string;
  };
  history: { ref: RecordRef; from?: string | null; to: string }[];
  /** With no gate decision: the run's policy evaluated by the audit over this ledger (the headline shows it). */
  policy?: PolicyVerdict;
}

export interface IdentityView {
  ref?: string;
  kind?: string;
  modelId?: string;
  fingerprint?: string;
}

export interface FamilyView {
  family: FamilyId;
  score?: number;
  ci?: [number, number];
  coverage: { planned: number; ok: number; failed: number };
  findings: number;
  ref?: RecordRef;
}

export interface ExchangeView {
  ref: RecordRef;
  exchange: ExchangePayload;
  judge?: { ref?: RecordRef; record: JudgePayload };
}

export interface FindingView {
  ref: RecordRef;
  finding: FindingPayload;
  /** Up to a few supporting exchanges, in full, for the side-by-side view. */
  exchanges: ExchangeView[];
  /** Supporting exchange ids with no exchange record in the ledger. */
  missingExchanges: string[];
  overrides: RecordRef[];
}

export interface FailedExchangeView {
  ref: RecordRef;
  id: string;
  family: FamilyId;
  side: 'base' | 'delivered' | 'both';
  failure: string;
}

export interface JudgeView {
  ref: RecordRef;
  exchangeId: string;
  record: JudgePayload;
}

export interface GenericRecordView {
  ref: RecordRef;
  summary: string;
}

export interface ReportModel {
  runName: string;
  ledger: {
    head: { seq: number; hash: string };
    records: number;
    chain: { ok: boolean; checked: number; brokenAt?: number; problem?: string };
  };
  manifest: { present: boolean; evidenceRoot?: string; evidenceRootRecord?: RecordRef; runId?: string };
  models: { base?: IdentityView; delivered?: IdentityView };
  probeSets: { id: string; hash: string }[];
  runStart?: RecordRef;
  runEnd?: { ref: RecordRef; status?: string; counts: Record<string, number> };
  gate: GateView;
  families: FamilyView[];
  overall?: { score: number; ref: RecordRef };
  findings: FindingView[];
  judges: JudgeView[];
  triggers: GenericRecordView[];
  overrides: GenericRecordView[];
  releases: GenericRecordView[];
  failures: {
    exchanges: FailedExchangeView[];
    /** All failed exchanges (the list above is bounded). */
    total: number;
    unreadable: { ref: RecordRef; reason: string }[];
  };
  exchangesTotal: number;
  /** Every record the report cites, in sequence order. */
  appendix: RecordRef[];
}

export const SEVERITY_RANK: Record<Severity, number> = { info: 0, low: 1, medium: 2, high: 3, critical: 4 };
