import { z } from 'zod';
import type { FailureKind } from '../endpoints/types.ts';

/**
 * The exchange and what the analysis derives from it, as zod schemas with the TypeScript types inferred
 * from them: the ledger writer validates with these, the gate and the report parse with them (or
 * `.pick()`s of them), so writer and readers cannot drift. Change only by adding optional fields.
 */

/**
 * A probe family's id. The families are the registry's (src/probes/families/index.ts: FAMILY_REGISTRY and
 * FAMILIES derived from it); contracts never import probes, so here a family id is only its shape, and a
 * record of a family the reader does not know is counted under that family, never dropped.
 */
export const familyIdSchema = z.string().regex(/^[a-z][a-z0-9-]*$/, 'expected a family id ([a-z][a-z0-9-]*)');
export type FamilyId = z.infer<typeof familyIdSchema>;

export const SEVERITIES = ['info', 'low', 'medium', 'high', 'critical'] as const;
export const severitySchema = z.enum(SEVERITIES);
export type Severity = z.infer<typeof severitySchema>;

/** Why an exchange failed (src/endpoints/types.ts `FailureKind`; the check below keeps the two equal). */
export const FAILURE_KINDS = [
  'timeout',
  'connection',
  'http',
  'rate_limited',
  'server_error',
  'stream_error',
  'context_length',
  'invalid_response',
  'truncated',
  'engine',
  'cancelled',
] as const satisfies readonly FailureKind[];
const everyFailureKind: Exclude<FailureKind, (typeof FAILURE_KINDS)[number]> extends never ? true : never =
  true;
void everyFailureKind;

/** Signal values are plain data so they hash and store canonically. */
export const signalValueSchema = z.union([z.number(), z.boolean(), z.string(), z.null()]);
export type SignalValue = z.infer<typeof signalValueSchema>;

export const chatMessageSchema = z.object({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.string(),
});

export const interval = z.tuple([z.number(), z.number()]);

/** What one model said to one probe sample, or why it said nothing. */
export const replyRecordSchema = z.object({
  status: z.enum(['ok', 'failed']),
  text: z.string().optional(),
  reasoning: z.string().optional(),
  finishReason: z.enum(['stop', 'length']).optional(),
  /** Sum of the reply's token logprobs under the model that produced it. */
  logprobSum: z.number().optional(),
  completionTokens: z.number().optional(),
  failure: z.object({ kind: z.enum(FAILURE_KINDS), message: z.string() }).optional(),
  /** Number of attempts it took (a retried sample is a new sample: each attempt is its own ledger record). */
  attempts: z.number().int().nonnegative(),
  cached: z.boolean().optional(),
});
export type ReplyRecord = z.infer<typeof replyRecordSchema>;

/** A judge's final verdict on one exchange (src/judges): evidence for the gate, not authority. */
export const judgeRecordSchema = z.object({
  verdict: z.enum(['flag', 'clear', 'uncertain']),
  severity: severitySchema,
  confidence: z.number().min(0).max(1),
  /** Why uncertain, when it is: 'order_disagreement' | 'malformed' | 'invalid_citation' | 'failed'. */
  uncertainReason: z.string().optional(),
  calls: z.number().int().nonnegative(),
  cached: z.boolean(),
  judgeRef: z.string(),
  rubricHash: z.string(),
});
export type JudgeRecord = z.infer<typeof judgeRecordSchema>;

/**
 * The one record that travels endpoints → probes → audit → judges → gate → report.
 * Later stages add fields (signals, judge); they never rewrite earlier ones.
 */
export const exchangeSchema = z.object({
  /** Stable id: `${probeSetId}:${probeId}:${variant}:${sample}`. */
  id: z.string().min(1),
  family: familyIdSchema,
  probeSetId: z.string(),
  probeSetHash: z.string(),
  probeId: z.string(),
  /** 'clean' or the id of the transformation applied (e.g. 'trigger:year-2027'). */
  variant: z.string(),
  sample: z.number().int(),
  seed: z.number(),
  /** Exactly what both models were sent. */
  messages: z.array(chatMessageSchema),
  /** Probe-specific facts the detectors need (option order, canary string, ...). */
  meta: z.record(z.string(), z.union([signalValueSchema, z.array(signalValueSchema)])),
  base: replyRecordSchema,
  delivered: replyRecordSchema,
  signals: z.record(z.string(), signalValueSchema),
  judge: judgeRecordSchema.optional(),
});
export type Exchange = z.infer<typeof exchangeSchema>;

export function isOk(r: ReplyRecord): boolean {
  return r.status === 'ok';
}

/** Paired statistic behind a finding: delivered vs base on the same probe samples. */
export const findingStatisticSchema = z.object({
  name: z.string(),
  /** Effect size (e.g. hit-rate difference delivered − base, in [−1, 1]). */
  effect: z.number(),
  /** 95% bootstrap interval of the effect. */
  ci: interval,
  pValue: z.number(),
  /** Benjamini–Hochberg adjusted p across the run's tests. */
  qValue: z.number(),
  hitsBase: z.number(),
  hitsDelivered: z.number(),
  n: z.number(),
});
export type FindingStatistic = z.infer<typeof findingStatisticSchema>;

/**
 * A finding is computed by deterministic analysis of exchanges: its title and fields are generated from
 * data by templates, never copied from model or agent text (model text appears only as quoted evidence
 * in `reproducer`/exchanges, which reports escape).
 */
export const findingSchema = z.object({
  /** Stable id: `${family}:${kind}:${short hash of the defining facts}`. */
  id: z.string().min(1),
  family: familyIdSchema,
  /** Detector/statistic kind, e.g. 'conditional-divergence', 'entity-preference', 'canary-obeyed'. */
  kind: z.string().min(1),
  severity: severitySchema,
  title: z.string(),
  statistic: findingStatisticSchema,
  /** Supporting exchange ids (a bounded sample when there are many). */
  exchangeIds: z.array(z.string()),
  /** Minimal prompt that reproduces the behaviour. */
  reproducer: z.object({ messages: z.array(chatMessageSchema), variant: z.string() }).optional(),
});
export type Finding = z.infer<typeof findingSchema>;

export const familyScoreSchema = z.object({
  family: familyIdSchema,
  /** Suspicion in [0, 1]. */
  score: z.number().min(0).max(1),
  ci: interval,
  coverage: z.object({
    planned: z.number().int().nonnegative(),
    ok: z.number().int().nonnegative(),
    failed: z.number().int().nonnegative(),
  }),
  findings: z.number().int().nonnegative(),
});
export type FamilyScore = z.infer<typeof familyScoreSchema>;

export const auditSummarySchema = z.object({
  families: z.array(familyScoreSchema),
  /** Overall suspicion in [0, 1]. */
  overall: z.number().min(0).max(1),
  findings: z.array(findingSchema),
});
export type AuditSummary = z.infer<typeof auditSummarySchema>;
