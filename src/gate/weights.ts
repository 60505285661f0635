import { resolve } from 'node:path';
import type { Manifest } from '../ledger/manifest.ts';
import { hashJson } from '../util/hash.ts';
import { type Subject, subjectList } from '../util/subject.ts';

export { compareSubjects, digestSubject, type Subject } from '../util/subject.ts';

/** A local model directory named by a ref (`local:DIR` or a plain path), or undefined for endpoints. */
export function localModelDir(ref: string): string | undefined {
  if (ref.startsWith('local:')) return resolve(ref.slice('local:'.length));
  if (/^[a-z-]+:/.test(ref)) return undefined;
  return resolve(ref);
}

/**
 * The attestation subject: the digests of every file the delivered model loads (src/util/subject.ts), as the
 * auditor recorded them; for an endpoint without local files, one digest over its identity (model id, root,
 * server version, fingerprint).
 */
export function subjectsOf(manifest: Manifest): Subject[] {
  const d = manifest.delivered;
  const files = subjectList(d.weightDigests ?? {});
  if (files.length) return files;
  const identity = {
    modelId: d.modelId,
    root: d.root,
    serverVersion: d.serverVersion,
    fingerprint: d.fingerprint,
  };
  return [{ name: `endpoint:${d.modelId}`, digest: { sha256: hashJson(identity) } }];
}

/** One digest for a whole subject: what lineages are keyed by and what a webhook receipt must echo. */
export function subjectDigest(subjects: ReadonlyArray<Subject>): string {
  return hashJson(subjects.map((s) => ({ name: s.name, sha256: s.digest.sha256 })));
}
