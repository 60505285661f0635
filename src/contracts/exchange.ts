import type { ChatMessage, FailureKind, FinishReason } from '../endpoints/types.ts';

/** The four probe families. Adding one is adding a registry entry (src/probes/families/). */
export const FAMILIES = ['triggers', 'preferences', 'reasoning', 'injection'] as const;
export type FamilyId = (typeof FAMILIES)[number];

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** What one model said to one probe sample, or why it said nothing. */
export interface ReplyRecord {
  status: 'ok' | 'failed';
  text?: string;
  reasoning?: string;
  finishReason?: FinishReason;
  /** Sum of the reply's token logprobs under the model that produced it. */
  logprobSum?: number;
  completionTokens?: number;
  failure?: { kind: FailureKind; message: string };
  /** Number of attempts it took (a retried sample is a new sample: each attempt is its own ledger record). */
  attempts: number;
  cached?: boolean;
}

/** Signal values are plain data so they hash and store canonically. */
export type SignalValue = number | boolean | string | null;

/**
 * The one record that travels endpoints → probes → audit → judges → gate → report.
 * Later stages add fields (signals, judge); they never rewrite earlier ones.
 */
export interface Exchange {
  /** Stable id: `${probeSetId}:${probeId}:${variant}:${sample}`. */
  id: string;
  family: FamilyId;
  probeSetId: string;
  probeSetHash: string;
  probeId: string;
  /** 'clean' or the id of the transformation applied (e.g. 'trigger:year-2027'). */
  variant: string;
  sample: number;
  seed: number;
  /** Exactly what both models were sent. */
  messages: ChatMessage[];
  /** Probe-specific facts the detectors need (option order, canary string, ...). */
  meta: Record<string, SignalValue | SignalValue[]>;
  base: ReplyRecord;
  delivered: ReplyRecord;
  signals: Record<string, SignalValue>;
  judge?: JudgeRecord;
}

export interface JudgeRecord {
  verdict: 'flag' | 'clear' | 'uncertain';
  severity: Severity;
  confidence: number;
  /** Why uncertain, when it is: 'order_disagreement' | 'malformed' | 'invalid_citation' | 'failed'. */
  uncertainReason?: string;
  calls: number;
  cached: boolean;
  judgeRef: string;
  rubricHash: string;
}

export function isOk(r: ReplyRecord): boolean {
  return r.status === 'ok';
}

/** Paired statistic behind a finding: delivered vs base on the same probe samples. */
export interface FindingStatistic {
  name: string;
  /** Effect size (e.g. hit-rate difference delivered − base, in [−1, 1]). */
  effect: number;
  /** 95% bootstrap interval of the effect. */
  ci: [number, number];
  pValue: number;
  /** Benjamini–Hochberg adjusted p across the run's tests. */
  qValue: number;
  hitsBase: number;
  hitsDelivered: number;
  n: number;
}

/**
 * A finding is computed by deterministic analysis of exchanges: its title and fields are generated from
 * data by templates, never copied from model or agent text (model text appears only as quoted evidence
 * in `reproducer`/exchanges, which reports escape).
 */
export interface Finding {
  /** Stable id: `${family}:${kind}:${short hash of the defining facts}`. */
  id: string;
  family: FamilyId;
  /** Detector/statistic kind, e.g. 'conditional-divergence', 'entity-preference', 'canary-obeyed'. */
  kind: string;
  severity: Severity;
  title: string;
  statistic: FindingStatistic;
  /** Supporting exchange ids (a bounded sample when there are many). */
  exchangeIds: string[];
  /** Minimal prompt that reproduces the behaviour. */
  reproducer?: { messages: ChatMessage[]; variant: string };
}

export interface FamilyScore {
  family: FamilyId;
  /** Suspicion in [0, 1]. */
  score: number;
  ci: [number, number];
  coverage: { planned: number; ok: number; failed: number };
  findings: number;
}

export interface AuditSummary {
  families: FamilyScore[];
  /** Overall suspicion in [0, 1]. */
  overall: number;
  findings: Finding[];
}
