import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { hashJson } from '../util/hash.ts';
import { readValidated } from '../util/zodfile.ts';

export const MANIFEST_FILE = 'manifest.json';
export const MANIFEST_SCHEMA_ID = 'probate.manifest/v1';

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'expected a lowercase sha256 hex digest');

/** `ModelIdentity` (src/endpoints/types.ts) as stored in a manifest. */
export const ModelIdentitySchema = z.looseObject({
  ref: z.string().min(1),
  kind: z.enum(['local', 'vllm', 'hf', 'hf-endpoint']),
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

/** Content hash of a manifest (canonical JSON): what approvals and overrides bind to. */
export function manifestHash(manifest: Manifest): string {
  return hashJson(manifest);
}

export function readManifest(runDir: string): Manifest {
  return readValidated(join(runDir, MANIFEST_FILE), ManifestSchema);
}

/** Validates and writes RUN/manifest.json atomically (temp file, fsync, rename). */
export function writeManifest(runDir: string, manifest: Manifest): string {
  const parsed = ManifestSchema.parse(manifest);
  writeFileAtomic(join(runDir, MANIFEST_FILE), `${JSON.stringify(parsed, null, 2)}\n`);
  return manifestHash(parsed);
}

/** Writes a file so that readers see either the old content or the whole new content, never a part. */
export function writeFileAtomic(file: string, content: string, mode = 0o644): void {
  const tmp = `${file}.tmp-${process.pid}-${Date.now()}`;
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}
