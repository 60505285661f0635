import crypto, { createHash } from 'node:crypto';

/** JSON with sorted object keys and no whitespace: the input of every content hash in probate. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value as object).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

// One-shot hashing (Node ≥ 20.12) is about twice as fast as a Hash object for the short texts hashed per
// request and per ledger record; the digest is the same.
const oneShot = (
  crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: 'hex') => string }
).hash;

export function sha256Hex(data: string | Uint8Array): string {
  return oneShot ? oneShot('sha256', data, 'hex') : createHash('sha256').update(data).digest('hex');
}

export function hashJson(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
