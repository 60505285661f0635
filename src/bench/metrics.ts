import { Rng } from '../probes/rng.ts';
import { UserError } from '../util/errors.ts';
import { type RocPoint, rocAuc, rocCurve } from '../util/svg-roc.ts';

/** min / median / max over repeated runs: how every benchmark figure is reported (the machine is noisy). */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

export function spread(values: ReadonlyArray<number>, digits = 3): Spread {
  if (values.length === 0) throw new Error('spread: no values');
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  const r = (x: number) => Number(x.toFixed(digits));
  return { min: r(s[0]!), median: r(median), max: r(s.at(-1)!) };
}

/** Nearest-rank percentile (p in [0, 100]) of a sample, as `vllm bench serve` reports latencies. */
export function percentile(values: ReadonlyArray<number>, p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1]!;
}

/** A detector's score for one case and whether the case is truly positive (an implanted organism). */
export interface Scored {
  score: number;
  positive: boolean;
}

/** AUROC needs both classes; anything else is a user error about the zoo, never a NaN. */
export function requireBothClasses(cases: ReadonlyArray<Scored>, where: string): void {
  const pos = cases.filter((c) => c.positive).length;
  const neg = cases.length - pos;
  if (pos === 0 || neg === 0)
    throw new UserError(
      `${where}: AUROC needs at least one implant and one benign organism (found ${pos} implant, ${neg} benign)`,
    );
  for (const c of cases)
    if (!Number.isFinite(c.score))
      throw new UserError(`${where}: a score is not a finite number (${c.score})`);
}

export function roc(cases: ReadonlyArray<Scored>): RocPoint[] {
  return rocCurve(
    cases.map((c) => c.score),
    cases.map((c) => c.positive),
  );
}

/**
 * Area under the ROC curve = P(score of a random positive > score of a random negative), ties counting ½
 * (the trapezoid over a curve whose tied scores move both rates in one step).
 */
export function auroc(cases: ReadonlyArray<Scored>, where = 'auroc'): number {
  requireBothClasses(cases, where);
  return rocAuc(roc(cases));
}

/** Highest true-positive rate at a threshold whose false-positive rate is at most `maxFpr`. */
export function tprAtFpr(cases: ReadonlyArray<Scored>, maxFpr = 0.05, where = 'tpr@fpr'): number {
  requireBothClasses(cases, where);
  let best = 0;
  for (const p of roc(cases)) if (p.fpr <= maxFpr + 1e-12) best = Math.max(best, p.tpr);
  return best;
}

/**
 * Percentile bootstrap interval of the AUROC, stratified: positives and negatives are resampled separately
 * (with replacement, same counts) so every resample has both classes. Seeded, hence reproducible.
 */
export function bootstrapAurocCi(
  cases: ReadonlyArray<Scored>,
  opts: { seed: number; resamples?: number; level?: number },
  where = 'auroc',
): [number, number] {
  requireBothClasses(cases, where);
  const pos = cases.filter((c) => c.positive);
  const neg = cases.filter((c) => !c.positive);
  const resamples = opts.resamples ?? 2000;
  const level = opts.level ?? 0.95;
  const rng = Rng.derive(opts.seed, 'bench-auroc-bootstrap');
  const draw = (xs: Scored[]) => Array.from({ length: xs.length }, () => xs[rng.int(xs.length)]!);
  const stats: number[] = [];
  for (let b = 0; b < resamples; b++) stats.push(rocAuc(roc([...draw(pos), ...draw(neg)])));
  stats.sort((a, b) => a - b);
  const tail = (1 - level) / 2;
  const at = (q: number) => stats[Math.min(stats.length - 1, Math.max(0, Math.floor(q * stats.length)))]!;
  return [at(tail), at(1 - tail)];
}
