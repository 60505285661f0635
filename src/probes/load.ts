import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { describeZodIssue, UserError } from '../util/errors.ts';
import { checkFileSize, FILE_LIMITS } from '../util/file-size.ts';
import { sha256Hex } from '../util/hash.ts';
import { parseErrorPosition } from '../util/zodfile.ts';
import { FAMILY_REGISTRY } from './families/index.ts';
import type { FamilyRegistry } from './families/types.ts';
import { type ProbeSet, ProbeSetSchema, probeSetSchema } from './schema.ts';
import { readSealedFile, type SealKey, unseal } from './seal.ts';

export interface LoadedProbeSet {
  set: ProbeSet;
  /** sha256 of the plaintext file: the probe set's content hash. */
  hash: string;
  file: string;
  /** For sealed sets: sha256 of the sealed file as stored (the manifest records both). */
  sealedFileHash?: string;
}

export interface SkippedProbeSet {
  file: string;
  id: string;
  version: number;
  reason: string;
}

/** Parses probe-set text (YAML or JSON) and validates it with the families' schemas; errors name `where`. */
export function parseProbeSet(
  text: string,
  where: string,
  families: FamilyRegistry = FAMILY_REGISTRY,
): ProbeSet {
  let data: unknown;
  try {
    data = YAML.parse(text);
  } catch (err) {
    throw new UserError(`${where}: not valid YAML/JSON${parseErrorPosition(err, text)}`);
  }
  const schema = families === FAMILY_REGISTRY ? ProbeSetSchema : probeSetSchema(families);
  const parsed = schema.safeParse(data);
  if (!parsed.success) throw new UserError(describeZodIssue(where, parsed.error.issues));
  return parsed.data as unknown as ProbeSet;
}

export function loadProbeFile(file: string, key?: SealKey): LoadedProbeSet {
  checkFileSize(file, FILE_LIMITS.probeSet, 'a probe set');
  if (file.endsWith('.sealed.json')) {
    const raw = readFileSync(file);
    const sealed = readSealedFile(file);
    if (!key) throw new UserError(`${file}: sealed held-out set needs --seal-key-file or PROBATE_SEAL_KEY`);
    const plain = unseal(sealed, key, file);
    const set = parseProbeSet(plain.toString('utf8'), `${file} (unsealed)`);
    if (set.id !== sealed.id || set.version !== sealed.version)
      throw new UserError(`${file}: id/version: sealed header does not match the unsealed set`);
    return { set, hash: sealed.plaintextSha256, file, sealedFileHash: sha256Hex(raw) };
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  return { set: parseProbeSet(text, file), hash: sha256Hex(text), file };
}

/**
 * Loads every probe set under the given folders (`<dir>/<family>/*.yaml|*.json|*.sealed.json`, or the files
 * directly in `<dir>`). Sealed sets without a key are returned as skipped (the caller reports and records
 * that); a sealed set with a wrong key is an error.
 */
export function loadProbeDirs(
  dirs: string[],
  key?: SealKey,
): { sets: LoadedProbeSet[]; skipped: SkippedProbeSet[] } {
  const sets: LoadedProbeSet[] = [];
  const skipped: SkippedProbeSet[] = [];
  for (const file of dirs.flatMap(listProbeFiles)) {
    if (file.endsWith('.sealed.json') && !key) {
      const sealed = readSealedFile(file);
      skipped.push({ file, id: sealed.id, version: sealed.version, reason: 'no seal key' });
      continue;
    }
    sets.push(loadProbeFile(file, key));
  }
  const ids = new Map<string, string>();
  for (const s of sets) {
    const prior = ids.get(s.set.id);
    if (prior) throw new UserError(`${s.file}: id: probe set ${s.set.id} is also defined in ${prior}`);
    ids.set(s.set.id, s.file);
  }
  if (sets.length === 0 && skipped.length === 0)
    throw new UserError(`${dirs.join(', ')}: no probe sets found (expected <family>/dev.yaml)`);
  return { sets, skipped };
}

function listProbeFiles(dir: string): string[] {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(dir);
  } catch {
    throw new UserError(`--probes ${dir}: no such file or folder`);
  }
  if (st.isFile()) return [dir];
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      out.push(
        ...readdirSync(path)
          .sort()
          .filter(isProbeFile)
          .map((f) => join(path, f)),
      );
    } else if (isProbeFile(entry.name)) out.push(path);
  }
  return out;
}

function isProbeFile(name: string): boolean {
  return /\.(ya?ml|sealed\.json)$/.test(name);
}
