import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import type { Manifest } from '../ledger/manifest.ts';
import { UserError } from '../util/errors.ts';
import { hashJson } from '../util/hash.ts';

/** Files that carry model weights. Their digests are the attestation subject. */
export const WEIGHT_FILE_RE = /\.(onnx|onnx_data|onnx\.data|safetensors|bin|gguf|pt|pth|ckpt|npz)$/i;

export interface Subject {
  name: string;
  digest: { sha256: string };
}

export function sha256File(file: string): Promise<string> {
  return new Promise((ok, fail) => {
    const h = createHash('sha256');
    createReadStream(file)
      .on('data', (chunk) => h.update(chunk))
      .on('error', fail)
      .on('end', () => ok(h.digest('hex')));
  });
}

function walk(dir: string, root: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) walk(full, root, out);
    else if (entry.isFile() && WEIGHT_FILE_RE.test(entry.name))
      out.push(relative(root, full).split(sep).join('/'));
  }
}

/** sha256 of every weight file under a model directory, keyed by POSIX relative path. */
export async function digestWeights(dir: string): Promise<Record<string, string>> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UserError(`${dir}: not a model directory`);
  const files: string[] = [];
  walk(dir, dir, files);
  const out: Record<string, string> = {};
  for (const f of files.sort()) out[f] = await sha256File(join(dir, f));
  return out;
}

/** A local model directory named by a ref (`local:DIR` or a plain path), or undefined for endpoints. */
export function localModelDir(ref: string): string | undefined {
  if (ref.startsWith('local:')) return resolve(ref.slice('local:'.length));
  if (/^[a-z-]+:/.test(ref)) return undefined;
  return resolve(ref);
}

/**
 * The attestation subject: the delivered model's weight digests; for an endpoint without weight files, a
 * digest over its identity (model id, root, server version, fingerprint).
 */
export function subjectsOf(manifest: Manifest): Subject[] {
  const d = manifest.delivered;
  const weights = Object.entries(d.weightDigests ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (weights.length) return weights.map(([name, sha256]) => ({ name, digest: { sha256 } }));
  const identity = {
    modelId: d.modelId,
    root: d.root,
    serverVersion: d.serverVersion,
    fingerprint: d.fingerprint,
  };
  return [{ name: `endpoint:${d.modelId}`, digest: { sha256: hashJson(identity) } }];
}

/** Compares presented weight digests with the subject; returns the first mismatch, or null. */
export function compareSubjects(
  subjects: ReadonlyArray<Subject>,
  present: Record<string, string>,
): string | null {
  const names = new Set(subjects.map((s) => s.name));
  for (const s of subjects) {
    const got = present[s.name];
    if (got === undefined) return `${s.name}: missing`;
    if (got !== s.digest.sha256)
      return `${s.name}: sha256 ${got.slice(0, 12)}… differs from attested ${s.digest.sha256.slice(0, 12)}…`;
  }
  for (const name of Object.keys(present))
    if (!names.has(name)) return `${name}: weight file not in the attestation`;
  return null;
}
