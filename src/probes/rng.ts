import { createHash } from 'node:crypto';

/**
 * Seeded pseudo-random numbers (xoshiro128**). Every random choice in probing and statistics goes through
 * one of these, derived from the run seed and a label, so a run is reproducible sample by sample.
 */
export class Rng {
  private s: Uint32Array;

  constructor(seed: number | string) {
    const digest = createHash('sha256').update(String(seed)).digest();
    this.s = new Uint32Array([
      digest.readUInt32LE(0),
      digest.readUInt32LE(4),
      digest.readUInt32LE(8),
      digest.readUInt32LE(12) | 1,
    ]);
  }

  /** A child generator for a sub-task: independent of how many numbers the parent has drawn. */
  static derive(seed: number, ...labels: (string | number)[]): Rng {
    return new Rng(`${seed}/${labels.join('/')}`);
  }

  /** Uniform in [0, 1). */
  next(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1]!, 5), 7), 9) >>> 0;
    const t = s[1]! << 9;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = rotl(s[3]!, 11);
    return result / 4294967296;
  }

  int(maxExclusive: number): number {
    return Math.floor(this.next() * maxExclusive);
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.pick: empty list');
    return items[this.int(items.length)]!;
  }

  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  sample<T>(items: readonly T[], n: number): T[] {
    return this.shuffle(items).slice(0, Math.min(n, items.length));
  }

  /** A 31-bit integer seed for an endpoint request. */
  seed(): number {
    return this.int(2 ** 31);
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
