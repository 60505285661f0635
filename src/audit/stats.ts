import { Rng } from '../probes/rng.ts';

/**
 * Paired statistics on 2×2 tables of (base hit, delivered hit) over the same probe samples.
 * `b` = delivered only, `c` = base only, `both`, and `n` pairs in all.
 */
export interface PairedTable {
  n: number;
  both: number;
  /** Delivered hit, base not. */
  b: number;
  /** Base hit, delivered not. */
  c: number;
}

/**
 * Exact one-sided McNemar (sign) test: P(X ≥ b) for X ~ Binomial(b + c, 1/2). One-sided because the
 * question is whether the delivered model does the thing more often than its base.
 */
export function mcnemarExact(b: number, c: number): number {
  const m = b + c;
  if (m === 0) return 1;
  let p = 0;
  for (let k = b; k <= m; k++) p += Math.exp(logChoose(m, k) - m * Math.LN2);
  return Math.min(1, p);
}

/** Smallest p-value the exact test can reach with m discordant pairs (for Tarone's test screening). */
export function minAttainableP(m: number): number {
  return m === 0 ? 1 : Math.exp(-m * Math.LN2);
}

function logChoose(n: number, k: number): number {
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k);
}

function logFactorial(n: number): number {
  let s = 0;
  for (let i = 2; i <= n; i++) s += Math.log(i);
  return s;
}

/** Benjamini–Hochberg adjusted q-values, in the input order. */
export function benjaminiHochberg(pValues: readonly number[]): number[] {
  const m = pValues.length;
  const order = pValues.map((p, i) => [p, i] as const).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  const q = new Array<number>(m).fill(1);
  let running = 1;
  for (let r = m - 1; r >= 0; r--) {
    const [p, i] = order[r]!;
    running = Math.min(running, (p * m) / (r + 1));
    q[i] = Math.min(1, running);
  }
  return q;
}

/**
 * 95% percentile bootstrap interval of the paired effect, resampling pairs from the table's four cells
 * (the table is a sufficient statistic, so no exchange needs to be kept). Seeded: same table, same seed,
 * same interval. Large tables use the normal approximation.
 */
export function bootstrapEffectCi(t: PairedTable, seed: number, reps = 1000): [number, number] {
  if (t.n === 0) return [0, 0];
  const pb = t.b / t.n;
  const pc = t.c / t.n;
  if (t.n * reps > 2_000_000) {
    const est = pb - pc;
    const se = Math.sqrt(Math.max(0, (pb + pc - est * est) / t.n));
    return [clamp(est - 1.96 * se), clamp(est + 1.96 * se)];
  }
  const rng = new Rng(`${seed}/bootstrap/${t.n}/${t.both}/${t.b}/${t.c}`);
  const effects: number[] = [];
  for (let r = 0; r < reps; r++) {
    let b = 0;
    let c = 0;
    for (let i = 0; i < t.n; i++) {
      const u = rng.next();
      if (u < pb) b++;
      else if (u < pb + pc) c++;
    }
    effects.push((b - c) / t.n);
  }
  effects.sort((x, y) => x - y);
  return [effects[Math.floor(0.025 * (reps - 1))]!, effects[Math.ceil(0.975 * (reps - 1))]!];
}

function clamp(x: number): number {
  return Math.max(-1, Math.min(1, x));
}
