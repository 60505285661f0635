import type { z } from 'zod';
import type { JudgeRecord } from '../contracts/exchange.ts';
import { ManifestSchema, type ModelIdentitySchema } from '../contracts/manifest.ts';
import {
  type judgePayloadSchema,
  runEndPayloadSchema,
  runStartPayloadSchema,
  transitionPayloadSchema,
} from '../contracts/records.ts';

/**
 * What the report reads from ledger payloads and the manifest. Ledger payloads are read with the record
 * contracts (src/contracts/), the same schemas the ledger writer validates with; what follows adds only the
 * report's own views of them. A record that does not fit is listed as unreadable evidence, never silently
 * counted as good.
 */
export {
  exchangeSchema,
  familyScoreSchema,
  findingSchema,
  judgeRecordSchema,
  replyRecordSchema as replySchema,
} from '../contracts/exchange.ts';
export {
  judgePayloadSchema,
  overridePayloadSchema as dsseEnvelopeSchema,
  overrideStatementSchema,
  releasePayloadSchema as releaseSchema,
  scorePayloadSchema as scoreSchema,
  triggerPayloadSchema as triggerSchema,
} from '../contracts/records.ts';

/** A gate transition, with its policy's version and hash brought to the top for the renderers. */
export const transitionSchema = transitionPayloadSchema.transform((t) => ({
  from: t.from,
  to: t.to,
  reasons: t.reasons,
  policyVersion: t.policy?.version,
  policyHash: t.policy?.hash,
  evidenceRoot: t.evidenceRoot,
  capabilityId: t.capabilityId,
}));

/** `manifest.json`: the manifest's one schema (src/contracts/manifest.ts), as the writer validates it. */
export { ManifestSchema as manifestSchema } from '../contracts/manifest.ts';

/** `run.start`: the audit's manifest draft, read with a partial view of the same schema. */
export const runStartSchema = runStartPayloadSchema
  .transform((p) => p.manifest)
  .pipe(ManifestSchema.partial());

/** `run.end`: the counts the audit wrote when it completed. */
export const runEndSchema = runEndPayloadSchema.transform((r) => ({
  status: undefined as string | undefined,
  counts: { exchanges: r.exchanges, failed: r.failed, findings: r.findings } as Record<string, number>,
}));

export type {
  Exchange as ExchangePayload,
  FamilyScore as FamilyScorePayload,
  Finding as FindingPayload,
} from '../contracts/exchange.ts';
/** A judge verdict as the report shows it: the exchange's judge field, or a judge record with its rationale. */
export type JudgePayload = JudgeRecord &
  Partial<Pick<z.infer<typeof judgePayloadSchema>, 'rationale' | 'citations'>>;
export type IdentityPayload = z.infer<typeof ModelIdentitySchema>;
export type RunStartPayload = z.infer<typeof runStartSchema>;
