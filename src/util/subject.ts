import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from './errors.ts';

/**
 * The subject of an audit and of its approval: every file a model loads from its folder. One definition,
 * shared by the auditor's fingerprint (src/endpoints/local/folder.ts), the gate's digest, `verify` and
 * `release`, so the artifact approved is exactly the artifact measured and the artifact promoted.
 *
 * - weights and their external data, anywhere (by extension), and every file under `onnx/`, `adapters/`
 *   or `adapter/` (ONNX external-data files may have any name);
 * - at the top level: config, generation config, tokenizer files, chat templates, adapter config/weights.
 *
 * Symlinks and special files (FIFOs, sockets, devices) anywhere in the folder are refused: a subject is
 * regular files only, so what is hashed is what is loaded and what is copied.
 */
export const WEIGHT_FILE_RE = /\.(onnx|onnx_data|onnx\.data|safetensors|bin|gguf|pt|pth|ckpt|npz|data)$/i;
const WEIGHT_DIRS = new Set(['onnx', 'adapters', 'adapter']);
const TOP_LEVEL_RE =
  /^(config|generation_config|tokenizer|tokenizer_config|special_tokens_map|added_tokens|preprocessor_config|processor_config|adapter_config|chat_template)\.json$|\.jinja$|^vocab\.(json|txt)$|^merges\.txt$|^(tokenizer|spiece|sentencepiece\.bpe)\.model$/i;

export interface Subject {
  name: string;
  digest: { sha256: string };
}

/** Whether a file (POSIX path relative to the model folder) is part of the subject. */
export function isSubjectFile(rel: string): boolean {
  const parts = rel.split('/');
  if (parts.length > 1 && WEIGHT_DIRS.has(parts[0]!)) return true;
  const name = parts.at(-1)!;
  if (WEIGHT_FILE_RE.test(name)) return true;
  return parts.length === 1 && TOP_LEVEL_RE.test(name);
}

function kindOf(mode: number): string {
  const t = mode & constants.S_IFMT;
  if (t === constants.S_IFLNK) return 'a symlink';
  if (t === constants.S_IFIFO) return 'a FIFO';
  if (t === constants.S_IFSOCK) return 'a socket';
  if (t === constants.S_IFCHR || t === constants.S_IFBLK) return 'a device';
  return 'not a regular file';
}

/**
 * Lists the subject files of a model folder (sorted POSIX relative paths). Refuses, with a one-line error
 * naming the path, any symlink or special file anywhere in the folder, and a folder that is itself a symlink.
 */
export function listSubjectFiles(dir: string): string[] {
  let top: ReturnType<typeof lstatSync>;
  try {
    top = lstatSync(dir);
  } catch {
    throw new UserError(`${dir}: not a model directory`);
  }
  if (top.isSymbolicLink())
    throw new UserError(`${dir}: is a symlink; a model directory must be a real directory (copy it)`);
  if (!top.isDirectory()) throw new UserError(`${dir}: not a model directory`);
  const out: string[] = [];
  const walk = (abs: string, rel: string): void => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      const full = join(abs, entry.name);
      if (entry.isDirectory()) walk(full, relPath);
      else if (entry.isFile()) {
        if (isSubjectFile(relPath)) out.push(relPath);
      } else
        throw new UserError(
          `${full}: ${kindOf(lstatSync(full).mode)} in the model directory; only regular files are accepted (copy with cp -rL)`,
        );
    }
  };
  walk(dir, '');
  return out.sort();
}

/**
 * Reads one subject file without following symlinks and streams it to `sink` (if given) while hashing:
 * the bytes hashed are exactly the bytes seen. Returns the sha256 hex.
 */
export function hashRegularFile(file: string, sink?: (chunk: Buffer) => void): string {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new UserError(`${file}: a symlink; only regular files are accepted`);
    throw new UserError(`${file}: cannot read (${code ?? 'error'})`);
  }
  try {
    if (!fstatSync(fd).isFile()) throw new UserError(`${file}: not a regular file`);
    const h = createHash('sha256');
    const buf = Buffer.allocUnsafe(1 << 20);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      const chunk = buf.subarray(0, n);
      h.update(chunk);
      sink?.(Buffer.from(chunk));
    }
    return h.digest('hex');
  } finally {
    closeSync(fd);
  }
}

/** sha256 of every subject file of a model folder, keyed by POSIX relative path (sorted). */
export async function digestSubject(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const rel of listSubjectFiles(dir)) {
    out[rel] = hashRegularFile(join(dir, rel));
    // Yield between files: a large folder must not starve the event loop (gate serve answers others).
    await new Promise<void>((ok) => setImmediate(ok));
  }
  return out;
}

/** Digests → the attestation's subject list (sorted by name). */
export function subjectList(digests: Record<string, string>): Subject[] {
  return Object.entries(digests)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, sha256]) => ({ name, digest: { sha256 } }));
}

/** Compares presented digests with the subject exactly; returns the first mismatch, or null. */
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
    if (!names.has(name)) return `${name}: loaded by the model but not in the attestation`;
  return null;
}
