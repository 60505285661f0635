import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { type Manifest, ManifestSchema } from '../contracts/manifest.ts';
import { hashJson } from '../util/hash.ts';
import { readValidated } from '../util/zodfile.ts';

export const MANIFEST_FILE = 'manifest.json';
export {
  JudgeCalibrationSchema,
  MANIFEST_SCHEMA_ID,
  type Manifest,
  ManifestSchema,
  ModelIdentitySchema,
} from '../contracts/manifest.ts';

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
