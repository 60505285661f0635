import { z } from 'zod';

/**
 * RUN/manifest.json, the one schema for it: the audit writes with it (src/ledger/manifest.ts), the gate and
 * the report read with it (the report reads the `run.start` draft with its `.partial()`).
 */

export const MANIFEST_SCHEMA_ID = 'probate.manifest/v1';

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'expected a lowercase sha256 hex digest');

/** `ModelIdentity` (src/endpoints/types.ts) as stored in a manifest. */
export const ModelIdentitySchema = z.looseObject({
  ref: z.string().min(1),
  /** The endpoint kind's reference prefix (src/endpoints/kinds/: local, vllm, hf, hf-endpoint, or a plugin's). */
  kind: z.string().min(1),
  modelId: z.string().min(1),
  serverVersion: z.string().optional(),
  root: z.string().optional(),
  parent: z.string().nullable().optional(),
  maxModelLen: z.number().int().positive().optional(),
  weightDigests: z.record(z.string(), Sha256Hex).optional(),
  fingerprint: z.string().optional(),
});

const HashedRef = z.looseObject({ id: z.string().min(1), hash: z.string().min(1) });

export const JudgeCalibrationSchema = z.looseObject({
  calibrated: z.boolean(),
  /** Hash of the calibration set / results. */
  hash: z.string().optional(),
  /** Agreement with the labelled calibration set, in [0, 1]. */
  agreement: z.number().min(0).max(1).optional(),
});

/**
 * RUN/manifest.json: what exactly was audited, with what, under which policy, and the evidence root that
 * binds it to the ledger. Unknown keys are kept (and hashed) so later stages can add fields.
 */
export const ManifestSchema = z.looseObject({
  schema: z.literal(MANIFEST_SCHEMA_ID),
  runId: z.string().min(1),
  toolVersion: z.string().min(1),
  createdAt: z.string().min(1),
  delivered: ModelIdentitySchema,
  base: ModelIdentitySchema,
  /** Lineage name (`--lineage`); defaults to the delivered model id. */
  lineage: z.string().min(1).optional(),
  probeSets: z.array(HashedRef),
  rubrics: z.array(HashedRef),
  judge: z
    .looseObject({
      ref: z.string().min(1),
      identity: z.unknown().optional(),
      calibration: JudgeCalibrationSchema.optional(),
    })
    .nullable()
    .optional(),
  policy: z.looseObject({ version: z.string().min(1), hash: Sha256Hex, path: z.string().optional() }),
  /** Hash of the last audit record (run.end) in RUN/ledger.sqlite. Set when the audit completes. */
  evidenceRoot: Sha256Hex.optional(),
  evidenceSeq: z.number().int().positive().optional(),
});
export type Manifest = z.infer<typeof ManifestSchema>;
