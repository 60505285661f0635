import type { Manifest } from '../ledger/manifest.ts';
import { hashJson, sha256Hex } from '../util/hash.ts';

/** Lineage = base identity + lineage name (`--lineage`, else the delivered model id). */
export function lineageOf(m: Manifest): { id: string; name: string } {
  const name = m.lineage ?? m.delivered.modelId;
  const b = m.base;
  const base = {
    modelId: b.modelId,
    root: b.root,
    weightDigests: b.weightDigests,
    fingerprint: b.fingerprint,
  };
  return { id: hashJson({ base, name }), name };
}

export function idempotencyKey(capabilityId: string): string {
  return sha256Hex(`probate-release-v1:${capabilityId}`);
}
