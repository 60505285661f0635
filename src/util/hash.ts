import crypto, { createHash } from 'node:crypto';

/** JSON with sorted object keys and no whitespace: the input of every content hash in probate. */
export function canonicalJson(value: unknown): string {
  return directCanonical(value) ?? JSON.stringify(sortKeys(value));
}

/**
 * The same text written directly, without a sorted copy of the value: for plain data (plain objects,
 * arrays, strings, numbers, booleans, null; undefined properties skipped). Anything it is not sure to
 * write as JSON.stringify(sortKeys(value)) would — a class instance, a function or symbol, a key that
 * looks like an array index (JSON.stringify puts those first) — makes it give up (undefined), and the
 * caller takes the general path. Every ledger record is hashed through here.
 */
function directCanonical(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
    case 'number':
    case 'boolean':
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      return undefined;
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      const e = value[i];
      const text = e === undefined ? 'null' : directCanonical(e);
      if (text === undefined) return undefined;
      out += i === 0 ? text : `,${text}`;
    }
    return `${out}]`;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const keys = Object.keys(value).sort();
  let out = '{';
  let first = true;
  for (const key of keys) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (INDEX_LIKE.test(key)) return undefined;
    const text = directCanonical(v);
    if (text === undefined) return undefined;
    out += `${first ? '' : ','}${JSON.stringify(key)}:${text}`;
    first = false;
  }
  return `${out}}`;
}

/** Keys an object orders before all others (array indices); conservatively, any key starting with a digit. */
const INDEX_LIKE = /^\d/;

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
