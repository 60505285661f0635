import { z } from 'zod';
import { FAMILIES, SEVERITIES } from '../contracts/exchange.ts';

/**
 * What the report reads from ledger payloads and the manifest. Lenient where a later stage may add
 * fields (loose objects), strict on what the report relies on: a record that does not fit is listed
 * as unreadable evidence, never silently counted as good.
 */

const family = z.enum(FAMILIES);
const severity = z.enum(SEVERITIES);
const signal = z.union([z.number(), z.boolean(), z.string(), z.null()]);
const message = z.looseObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string() });
const interval = z.tuple([z.number(), z.number()]);

export const replySchema = z.looseObject({
  status: z.enum(['ok', 'failed']),
  text: z.string().optional(),
  reasoning: z.string().optional(),
  finishReason: z.string().optional(),
  logprobSum: z.number().optional(),
  completionTokens: z.number().optional(),
  failure: z.looseObject({ kind: z.string(), message: z.string() }).optional(),
  attempts: z.number().int().nonnegative(),
  cached: z.boolean().optional(),
});

/** A judge verdict. Only the verdict is required; what a judge stage leaves out is shown as unknown. */
export const judgeRecordSchema = z.looseObject({
  verdict: z.enum(['flag', 'clear', 'uncertain']),
  severity: severity.optional(),
  confidence: z.number().min(0).max(1).optional(),
  uncertainReason: z.string().optional(),
  calls: z.number().int().nonnegative().optional(),
  cached: z.boolean().optional(),
  judgeRef: z.string().optional(),
  rubricHash: z.string().optional(),
  /** The judge's own words: model text, rendered escaped as quoted data. */
  rationale: z.string().optional(),
});

export const exchangeSchema = z.looseObject({
  id: z.string().min(1),
  family,
  probeSetId: z.string(),
  probeSetHash: z.string(),
  probeId: z.string(),
  variant: z.string(),
  sample: z.number().int(),
  seed: z.number(),
  messages: z.array(message),
  meta: z.record(z.string(), z.union([signal, z.array(signal)])),
  base: replySchema,
  delivered: replySchema,
  signals: z.record(z.string(), signal),
  judge: judgeRecordSchema.optional(),
});

export const findingSchema = z.looseObject({
  id: z.string().min(1),
  family,
  kind: z.string().min(1),
  severity,
  title: z.string(),
  statistic: z.looseObject({
    name: z.string(),
    effect: z.number(),
    ci: interval,
    pValue: z.number(),
    qValue: z.number(),
    hitsBase: z.number(),
    hitsDelivered: z.number(),
    n: z.number(),
  }),
  exchangeIds: z.array(z.string()),
  reproducer: z.looseObject({ messages: z.array(message), variant: z.string() }).optional(),
});

export const familyScoreSchema = z.looseObject({
  family,
  score: z.number().min(0).max(1),
  ci: interval,
  coverage: z.looseObject({
    planned: z.number().int().nonnegative(),
    ok: z.number().int().nonnegative(),
    failed: z.number().int().nonnegative(),
  }),
  findings: z.number().int().nonnegative(),
});

/** A `score` record: the run summary ({families, overall}) or one family's score. */
export const scoreSchema = z.union([
  z
    .looseObject({ families: z.array(familyScoreSchema), overall: z.number().min(0).max(1) })
    .transform((s) => ({ families: s.families, overall: s.overall as number | undefined })),
  familyScoreSchema.transform((f) => ({ families: [f], overall: undefined })),
]);

/** A `judge` record: the verdict on one exchange, flat or nested under `judge` / `record`. */
export const judgePayloadSchema = z.union([
  z
    .looseObject({ exchangeId: z.string(), judge: judgeRecordSchema })
    .transform((j) => ({ exchangeId: j.exchangeId, judge: j.judge })),
  z
    .looseObject({ exchangeId: z.string(), record: judgeRecordSchema })
    .transform((j) => ({ exchangeId: j.exchangeId, judge: j.record })),
  judgeRecordSchema
    .extend({ exchangeId: z.string() })
    .transform(({ exchangeId, ...judge }) => ({ exchangeId, judge })),
]);

const policyVersion = z.union([z.string(), z.number()]).transform(String);

/** Written by the gate: policy flat (`policyVersion`, `policyHash`) or nested (`policy: {version, hash}`). */
export const transitionSchema = z
  .looseObject({
    from: z.string().nullable().optional(),
    to: z.string().min(1),
    reasons: z.array(z.string()).default([]),
    policyVersion: policyVersion.optional(),
    policyHash: z.string().optional(),
    policy: z.looseObject({ version: policyVersion.optional(), hash: z.string().optional() }).optional(),
    evidenceRoot: z.string().optional(),
    capabilityId: z.string().nullable().optional(),
  })
  .transform((t) => ({
    from: t.from,
    to: t.to,
    reasons: t.reasons,
    policyVersion: t.policyVersion ?? t.policy?.version,
    policyHash: t.policyHash ?? t.policy?.hash,
    evidenceRoot: t.evidenceRoot,
    capabilityId: t.capabilityId ?? undefined,
  }));

/** An `override` record is the principal's signed DSSE envelope; the statement is its base64 payload. */
export const dsseEnvelopeSchema = z.looseObject({
  payloadType: z.string(),
  payload: z.string(),
  signatures: z.array(z.looseObject({ keyid: z.string().optional(), sig: z.string() })).min(1),
});

export const overrideStatementSchema = z.looseObject({
  findingId: z.string().min(1),
  principal: z.string().min(1),
  reason: z.string().optional(),
  policyVersion: z.string().optional(),
});

export const releaseSchema = z.looseObject({
  event: z.string().optional(),
  action: z.string().optional(),
  status: z.string().optional(),
  capabilityId: z.string().optional(),
  target: z.string().optional(),
});

/** A trigger-search result (src/audit/trigger-search.ts), tied to the finding it started from. */
export const triggerSchema = z.looseObject({
  findingId: z.string().optional(),
  start: z.string().optional(),
  condition: z.string().optional(),
  reproduced: z.boolean().optional(),
  hitRateWith: z.number().optional(),
  hitRateWithout: z.number().optional(),
  baseHitRateWith: z.number().optional(),
  requests: z.number().optional(),
});

const identity = z.looseObject({
  ref: z.string().optional(),
  kind: z.string().optional(),
  modelId: z.string().optional(),
  fingerprint: z.string().optional(),
  weightDigests: z.record(z.string(), z.string()).optional(),
});

const probeSet = z.looseObject({ id: z.string().optional(), hash: z.string().optional() });

/** `manifest.json` and the manifest draft in `run.start` share the identity/probe-set vocabulary. */
const manifestFields = z.looseObject({
  runId: z.string().optional(),
  base: identity.optional(),
  delivered: identity.optional(),
  probeSets: z.union([z.array(probeSet), z.record(z.string(), z.string())]).optional(),
  policyHash: z.string().optional(),
});

export const manifestSchema = manifestFields.extend({ evidenceRoot: z.string().optional() });

/** The audit nests its manifest draft under `manifest`; a flat payload is read as the draft itself. */
export const runStartSchema = z.preprocess(
  (p) => (p && typeof p === 'object' && 'manifest' in p ? (p as { manifest: unknown }).manifest : p),
  manifestFields,
);

/** `run.end`: counts, flat ({exchanges, failed, findings}) or under `counts`, and an optional status. */
export const runEndSchema = z
  .looseObject({ status: z.string().optional(), counts: z.record(z.string(), z.number()).optional() })
  .transform((r) => ({
    status: r.status,
    counts: {
      ...Object.fromEntries(Object.entries(r).filter((e): e is [string, number] => typeof e[1] === 'number')),
      ...r.counts,
    },
  }));

export type ExchangePayload = z.infer<typeof exchangeSchema>;
export type FindingPayload = z.infer<typeof findingSchema>;
export type FamilyScorePayload = z.infer<typeof familyScoreSchema>;
export type JudgePayload = z.infer<typeof judgeRecordSchema>;
export type IdentityPayload = z.infer<typeof identity>;
export type RunStartPayload = z.infer<typeof manifestFields>;
