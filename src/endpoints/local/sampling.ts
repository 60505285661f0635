import { createHash, randomBytes } from 'node:crypto';

/** Per-sequence sampling settings after defaults are applied. */
export interface SamplerSettings {
  /** 0 = greedy. */
  temperature: number;
  topP: number;
  /** 0 = no top-k cut. */
  topK: number;
}

/** sfc32: a small, fast, well-mixed 32-bit generator; one per sequence, so samples never share state. */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seedBytes: Uint8Array) {
    const v = new DataView(seedBytes.buffer, seedBytes.byteOffset, 16);
    this.a = v.getUint32(0);
    this.b = v.getUint32(4);
    this.c = v.getUint32(8);
    this.d = v.getUint32(12);
    for (let i = 0; i < 12; i++) this.next();
  }

  /** Seeded from (request seed, sample index): the same seed gives the same samples, in any batch. */
  static forSample(seed: number | undefined, index: number): Prng {
    const material = seed === undefined ? randomBytes(16) : Buffer.from(`${seed}:${index}`);
    return new Prng(createHash('sha256').update(material).digest());
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
    const t = (this.a + this.b + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t / 4294967296;
  }
}

/** log(sum(exp(row))) of one row of logits, in float64 (the shift that turns logits into log-probabilities). */
export function logSumExp(logits: Float32Array, offset: number, size: number): number {
  let max = -Infinity;
  for (let i = 0; i < size; i++) max = Math.max(max, logits[offset + i]!);
  let sum = 0;
  for (let i = 0; i < size; i++) sum += Math.exp(logits[offset + i]! - max);
  return max + Math.log(sum);
}

/** log-softmax of one row of logits, in float64, into `out` (reused across rows to spare the GC). */
export function logSoftmax(
  logits: Float32Array,
  offset: number,
  size: number,
  out: Float64Array = new Float64Array(size),
): Float64Array {
  const lse = logSumExp(logits, offset, size);
  for (let i = 0; i < size; i++) out[i] = logits[offset + i]! - lse;
  return out;
}

/**
 * Greedy choice straight from logits: the id whose log-probability (computed exactly as logSoftmax does, so
 * ties break the same way) is highest, and that log-probability; nothing is allocated.
 */
export function greedyFromLogits(
  logits: Float32Array,
  offset: number,
  size: number,
): { id: number; logprob: number } {
  const lse = logSumExp(logits, offset, size);
  let best = -1;
  let bestValue = -Infinity;
  for (let i = 0; i < size; i++) {
    const v = logits[offset + i]! - lse;
    if (v > bestValue) {
      best = i;
      bestValue = v;
    }
  }
  return { id: best, logprob: bestValue };
}

export function argmax(values: ArrayLike<number>): number {
  let best = -1;
  let bestValue = -Infinity;
  for (let i = 0; i < values.length; i++) {
    if (values[i]! > bestValue) {
      best = i;
      bestValue = values[i]!;
    }
  }
  return best;
}

/** The k highest entries, best first (ties: lower id first). */
export function topK(values: ArrayLike<number>, k: number): { id: number; value: number }[] {
  const out: { id: number; value: number }[] = [];
  if (k <= 0) return out;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (out.length === k && v <= out[k - 1]!.value) continue;
    let at = out.length;
    while (at > 0 && out[at - 1]!.value < v) at--;
    out.splice(at, 0, { id: i, value: v });
    if (out.length > k) out.pop();
  }
  return out;
}

/** 1-based rank of `id` (1 + how many tokens score strictly higher), as vLLM reports it. */
export function rankOf(values: ArrayLike<number>, id: number): number {
  const v = values[id]!;
  let rank = 1;
  for (let i = 0; i < values.length; i++) if (values[i]! > v) rank++;
  return rank;
}

/**
 * Picks the next token from log-probabilities: greedy at temperature 0, else temperature, top-k and top-p
 * (nucleus) then one draw. `allowed` restricts the choice (structured output); -1 if nothing is allowed.
 */
export function pickToken(
  logprobs: Float64Array,
  s: SamplerSettings,
  rng: Prng,
  allowed?: (id: number) => boolean,
): number {
  if (s.temperature === 0 && !allowed) return argmax(logprobs);
  const ids = Array.from({ length: logprobs.length }, (_, i) => i).sort(
    (x, y) => logprobs[y]! - logprobs[x]! || x - y,
  );
  // Greedy under a constraint: the best allowed token, checking candidates best first.
  if (s.temperature === 0) return ids.find((id) => allowed!(id)) ?? -1;
  if (allowed) ids.splice(0, ids.length, ...ids.filter((id) => allowed(id)));
  if (ids.length === 0) return -1;
  const kept = s.topK > 0 ? ids.slice(0, s.topK) : ids;
  const max = logprobs[kept[0]!]!;
  const weights = kept.map((id) => Math.exp((logprobs[id]! - max) / s.temperature));
  let total = weights.reduce((a, b) => a + b, 0);
  let cut = kept.length;
  if (s.topP < 1) {
    let acc = 0;
    for (let i = 0; i < kept.length; i++) {
      acc += weights[i]! / total;
      if (acc >= s.topP) {
        cut = i + 1;
        break;
      }
    }
    total = weights.slice(0, cut).reduce((a, b) => a + b, 0);
  }
  let u = rng.next() * total;
  for (let i = 0; i < cut; i++) {
    u -= weights[i]!;
    if (u < 0) return kept[i]!;
  }
  return kept[cut - 1]!;
}

/** A token with its log-probability under the model's raw distribution and the top alternatives. */
export interface ScoredToken {
  id: number;
  logprob: number;
  /** 1-based rank in the model's distribution (vLLM's `rank`). */
  rank: number;
  top: { id: number; logprob: number }[];
}

/** The token `id` at one row of logits: its log-probability, rank and the `k` most likely alternatives. */
export function scoreAt(
  logits: Float32Array,
  offset: number,
  vocab: number,
  id: number,
  k: number,
  scratch?: Float64Array,
): ScoredToken {
  const lp = logSoftmax(logits, offset, vocab, scratch);
  return {
    id,
    logprob: lp[id]!,
    rank: rankOf(lp, id),
    top: topK(lp, k).map((t) => ({ id: t.id, logprob: t.value })),
  };
}
