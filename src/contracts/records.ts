import { z } from 'zod';
import { firstIssue } from '../util/zod-check.ts';
import {
  auditSummarySchema,
  exchangeSchema,
  FAILURE_KINDS,
  findingSchema,
  judgeRecordSchema,
} from './exchange.ts';

/**
 * Kinds of ledger records and the schema of each kind's payload. Every record is append-only and
 * hash-chained; payloads are canonical JSON. The ledger validates each payload against its kind's schema
 * before appending it; the gate and the report parse records with the same schemas. Reports and the gate
 * read only these records, never model or agent text directly. Objects are open (`loose`): a later change
 * may add fields, and readers ignore what they do not know.
 */

/** `run.start`: the manifest draft as known when the run began (src/ledger/manifest.ts). */
export const runStartPayloadSchema = z.object({
  /** Every key here must hold the same value in the final RUN/manifest.json, or the gate refuses. */
  manifest: z.record(z.string(), z.unknown()),
  /** Whether this start is a `--resume` of an interrupted run. */
  resumed: z.boolean().optional(),
  /** The run's settings (seed, samples, concurrency, budget, ...). */
  config: z.record(z.string(), z.unknown()).optional(),
  seed: z.number().optional(),
  /** Planned probe samples per family. */
  planned: z.record(z.string(), z.number()).optional(),
  skippedProbeSets: z.array(z.unknown()).optional(),
});

/** One endpoint attempt (ok or failed), incl. retries (src/endpoints/types.ts AttemptRecord). */
export const attemptPayloadSchema = z.object({
  endpoint: z.string(),
  attempt: z.number().int(),
  startedAt: z.number(),
  durationMs: z.number(),
  status: z.number().int().optional(),
  ok: z.boolean(),
  failure: z.object({ kind: z.enum(FAILURE_KINDS), message: z.string() }).optional(),
  requestHash: z.string(),
  /** Position of the replica in `vllm:URL1,URL2,...#MODEL` (several replicas only). */
  replica: z.number().int().optional(),
  /** A hedge: sent while the first attempt was far slower than its peers. */
  hedge: z.boolean().optional(),
});

/**
 * `attempts`: the endpoint attempts made since the ledger's last transaction, in order, as one record. One
 * record per attempt (the `attempt` kind, which older ledgers hold) was most of an audit's records and about
 * a tenth of the HTTP audit path's CPU (BENCHMARKS.md, issue 16).
 */
export const attemptsPayloadSchema = z.object({ attempts: z.array(attemptPayloadSchema).min(1) });

/** `judge`: the judge's verdict on one exchange, with the evidence behind it. */
export const judgePayloadSchema = judgeRecordSchema.extend({
  exchangeId: z.string().min(1),
  /** `${probeSetId}:${probeId}` of the exchange, for per-probe cost accounting. */
  probeKey: z.string().optional(),
  /** Why the judge saw it: it supports a finding, or it is in the seeded calibration sample. */
  selectedAs: z.enum(['candidate', 'sample']).optional(),
  /** The judge's own words: model text, rendered escaped as quoted data, never as a claim. */
  rationale: z.string().optional(),
  /** Verbatim quotes from the replies, checked against them. */
  citations: z.array(z.string()).optional(),
  /** Each order's outcome (A/B then B/A). */
  orders: z.array(z.object({ order: z.enum(['base_first', 'delivered_first']), ok: z.boolean() })).optional(),
});

/**
 * `trigger`: a trigger-search result (src/audit/trigger-search.ts) tied to the finding it started from, or
 * a discovery hypothesis or sweep summary (src/audit/discovery/), which start from no finding.
 */
export const triggerPayloadSchema = z.object({
  findingId: z.string().optional(),
  /** Where the search started (a transformation, or `discovery: ...`). */
  start: z.string(),
  source: z.string().optional(),
  reproduced: z.boolean(),
  signature: z.array(z.string()).optional(),
  condition: z.string().optional(),
  minimal: z.object({ kind: z.string() }).optional(),
  variant: z.string().optional(),
  hitRateWith: z.number().optional(),
  hitRateWithout: z.number().optional(),
  baseHitRateWith: z.number().optional(),
  pValue: z.number().optional(),
  prompts: z.number().int().nonnegative().optional(),
  tried: z.array(z.unknown()).optional(),
  requests: z.number().int().nonnegative(),
  exhausted: z.boolean().optional(),
});

/** `agent`: an auditor-agent proposal, accepted or rejected with a reason. */
export const agentPayloadSchema = z.object({
  policy: z.string(),
  round: z.number().int().nonnegative(),
  accepted: z.boolean(),
  reason: z.string().optional(),
  /** The agent's proposal (agent text: data, never a claim) and what running it measured. */
  proposal: z.unknown().optional(),
  outcome: z.unknown().optional(),
  /** A proposal that did not parse, truncated. */
  raw: z.string().optional(),
});

/** `score`: per-family and overall suspicion. */
export const scorePayloadSchema = auditSummarySchema.pick({ families: true, overall: true });

/** `run.end`: counts written when the audit completed (or `aborted`, with why, when it failed after run.start). */
export const runEndPayloadSchema = z.object({
  exchanges: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  findings: z.number().int().nonnegative(),
  /** An aborted run is incomplete: ledger verify and report say so, and --resume finishes it. */
  status: z.literal('aborted').optional(),
  reason: z.string().optional(),
});

/**
 * What the gate adds to each of its records when it appends them (src/ledger/gate-sig.ts): the manifest
 * the decision was made on, and its signature over the record's kind, position and payload.
 */
const gateRecordFields = {
  manifestHash: z.string().optional(),
  gateSig: z.object({ keyid: z.string(), sig: z.string() }).optional(),
};

/** `transition`: a gate decision (src/gate/service.ts, release.ts). */
export const transitionPayloadSchema = z.object({
  ...gateRecordFields,
  from: z.string().nullable().optional(),
  to: z.string().min(1),
  reasons: z.array(z.string()),
  policy: z.object({ version: z.string(), hash: z.string() }).optional(),
  lineage: z.string().optional(),
  capabilityId: z.string().optional(),
  /** The evidence root the decision was made on, when the gate records it. */
  evidenceRoot: z.string().optional(),
  /** The BLOCKED audit a REMEDIATED transition remediates. */
  previousAudit: z.string().nullable().optional(),
});

/** `override`: a principal's signed DSSE envelope; the statement is its base64 payload. */
export const overridePayloadSchema = z.object({
  ...gateRecordFields,
  payloadType: z.string(),
  payload: z.string(),
  signatures: z.array(z.object({ keyid: z.string().optional(), sig: z.string() })).min(1),
});

/** The statement inside an override envelope. */
export const overrideStatementSchema = z.object({
  findingId: z.string().min(1),
  principal: z.string().min(1),
  reason: z.string().optional(),
  policyVersion: z.string().optional(),
});

/** `release`: capability reservation / consumption / reconciliation. */
export const releasePayloadSchema = z.object({
  ...gateRecordFields,
  event: z.string(),
  capabilityId: z.string().optional(),
  target: z.string().optional(),
});

/** Every record kind and its payload schema. Adding a kind is adding an entry here. */
export const RECORD_PAYLOADS = {
  'run.start': runStartPayloadSchema,
  /** Written by probate before the `attempts` batch: still read and verified, no longer written. */
  attempt: attemptPayloadSchema,
  attempts: attemptsPayloadSchema,
  exchange: exchangeSchema,
  judge: judgePayloadSchema,
  finding: findingSchema,
  trigger: triggerPayloadSchema,
  agent: agentPayloadSchema,
  score: scorePayloadSchema,
  'run.end': runEndPayloadSchema,
  transition: transitionPayloadSchema,
  override: overridePayloadSchema,
  release: releasePayloadSchema,
} as const;

export type RecordKind = keyof typeof RECORD_PAYLOADS;
export const RECORD_KINDS = Object.keys(RECORD_PAYLOADS) as RecordKind[];
/** What a writer hands the ledger for a record of kind K (the schema's input type). */
export type RecordPayload<K extends RecordKind> = z.input<(typeof RECORD_PAYLOADS)[K]>;
export type RecordItem = { [K in RecordKind]: { kind: K; payload: RecordPayload<K> } }[RecordKind];

/**
 * Kinds the gate appends after the audit closed its evidence (after the manifest's evidence root).
 * Any other kind after the root is tampering: `verifyLedger` rejects it.
 */
export const GATE_RECORD_KINDS: ReadonlySet<RecordKind> = new Set(['transition', 'override', 'release']);

export interface LedgerRecord<P = unknown> {
  seq: number;
  ts: string;
  kind: RecordKind;
  payload: P;
  prevHash: string;
  /** sha256(canonicalJson({seq, ts, kind, payload, prevHash})). */
  hash: string;
}

/**
 * Checks a payload against its kind's schema; returns a one-line reason when it does not fit. The payload
 * itself is stored as given (fields a schema does not know are kept), so its hash is the writer's.
 */
export function payloadProblem(kind: RecordKind, payload: unknown): string | undefined {
  const schema = RECORD_PAYLOADS[kind] as z.ZodType | undefined;
  if (!schema) return `unknown record kind '${kind}'`;
  // Certified without zod's copy when certainly valid (src/util/zod-check.ts); zod judges and words the rest.
  const issue = firstIssue(schema, payload);
  if (!issue) return undefined;
  return `${kind} payload: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`;
}
