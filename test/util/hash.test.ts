import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/util/hash.ts';

/** What canonicalJson was before its direct writer: the definition every stored hash depends on. */
function reference(value: unknown): string {
  const sortKeys = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sortKeys);
    if (v && typeof v === 'object' && !(v instanceof Uint8Array)) {
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(v as object).sort()) {
        const x = (v as Record<string, unknown>)[key];
        if (x !== undefined) out[key] = sortKeys(x);
      }
      return out;
    }
    return v;
  };
  return JSON.stringify(sortKeys(value));
}

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const KEYS = [
  'a',
  'b',
  'Z',
  'é',
  '😀',
  '"q"',
  'back\\slash',
  '',
  'toJSON',
  '10',
  '9',
  '01',
  '-1',
  'x.y',
  '\n',
];
const LEAVES: unknown[] = [
  null,
  undefined,
  0,
  -0,
  1.5,
  -9999,
  1e21,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  '',
  'text "quoted" \\ \u2028 \u0000 😀 \ud800',
  new Date(0),
  new Uint8Array([1, 2]),
  () => 1,
  Symbol('s'),
  new Map([[1, 2]]),
];

function randomValue(random: () => number, depth: number): unknown {
  const r = random();
  if (depth > 3 || r < 0.4) return LEAVES[Math.floor(random() * LEAVES.length)];
  if (r < 0.6) return Array.from({ length: Math.floor(random() * 4) }, () => randomValue(random, depth + 1));
  const out: Record<string, unknown> = random() < 0.1 ? Object.create(null) : {};
  for (let i = Math.floor(random() * 5); i > 0; i--)
    out[KEYS[Math.floor(random() * KEYS.length)]!] = randomValue(random, depth + 1);
  return out;
}

describe('canonicalJson', () => {
  it('writes exactly what JSON.stringify of the key-sorted copy writes, for plain data and odd values alike', () => {
    const random = rng(20261202);
    for (let i = 0; i < 20_000; i++) {
      const v = randomValue(random, 0);
      expect(canonicalJson(v), String(i)).toBe(reference(v));
    }
  });

  it('a ledger-shaped record: sorted keys at every level, undefined fields left out', () => {
    const rec = { z: 1, a: { y: [3, { b: undefined, a: 'x' }], x: null }, m: undefined };
    expect(canonicalJson(rec)).toBe('{"a":{"x":null,"y":[3,{"a":"x"}]},"z":1}');
  });
});
