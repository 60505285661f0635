import { describe, expect, it } from 'vitest';
import {
  auroc,
  bootstrapAurocCi,
  percentile,
  type Scored,
  spread,
  tprAtFpr,
} from '../../src/bench/metrics.ts';
import { UserError } from '../../src/util/errors.ts';

const cases = (pos: number[], neg: number[]): Scored[] => [
  ...pos.map((score) => ({ score, positive: true })),
  ...neg.map((score) => ({ score, positive: false })),
];

describe('AUROC', () => {
  it('is 1 for perfect separation and 0 for perfectly inverted scores', () => {
    expect(auroc(cases([0.9, 0.8], [0.1, 0.2, 0.3]))).toBe(1);
    expect(auroc(cases([0.1, 0.2], [0.8, 0.9]))).toBe(0);
  });

  it('counts a tie between a positive and a negative as one half', () => {
    // Pairs: (0.5 vs 0.5) tie = ½, (0.5 vs 0.1) win = 1 → (½ + 1) / 2 = 0.75.
    expect(auroc(cases([0.5], [0.5, 0.1]))).toBe(0.75);
    // All scores tied: chance.
    expect(auroc(cases([0.3, 0.3], [0.3, 0.3, 0.3]))).toBe(0.5);
  });

  it('matches the Mann–Whitney count on a mixed case', () => {
    // pos 0.9 beats 3 negatives; pos 0.4 beats 0.2 and 0.1, ties 0.4 (½), loses to none → (3 + 2.5) / 6.
    expect(auroc(cases([0.9, 0.4], [0.4, 0.2, 0.1]))).toBeCloseTo(5.5 / 6, 12);
  });

  it('refuses a single class with a one-line user error, never NaN', () => {
    expect(() => auroc(cases([0.9, 0.1], []), 'zoo.json')).toThrow(UserError);
    expect(() => auroc(cases([], [0.2]), 'zoo.json')).toThrow(
      'zoo.json: AUROC needs at least one implant and one benign organism (found 0 implant, 1 benign)',
    );
    expect(() => tprAtFpr(cases([0.9], []))).toThrow(UserError);
    expect(() => bootstrapAurocCi(cases([], [0.1, 0.2]), { seed: 1 })).toThrow(UserError);
  });

  it('refuses a score that is not a finite number', () => {
    expect(() => auroc(cases([Number.NaN], [0.1]))).toThrow(/not a finite number/);
  });
});

describe('TPR at FPR ≤ 0.05', () => {
  it('is the share of positives above every negative when negatives are few', () => {
    // 3 of 4 positives score above the highest negative (0.5); the fourth ties it.
    expect(tprAtFpr(cases([0.9, 0.8, 0.7, 0.5], [0.5, 0.1, 0.0]))).toBe(0.75);
  });

  it('allows up to 5% false positives when there are enough negatives', () => {
    // 20 negatives: one false positive (0.95) is FPR 0.05 and still allowed; two would not be.
    const neg = [0.95, 0.9, ...Array.from({ length: 18 }, (_, i) => i / 100)];
    expect(tprAtFpr(cases([0.97, 0.93, 0.5], neg))).toBeCloseTo(2 / 3, 12);
    expect(tprAtFpr(cases([0.97, 0.93, 0.5], neg), 0.1)).toBe(1);
  });
});

describe('bootstrap interval of the AUROC', () => {
  it('collapses to [1, 1] under perfect separation (every resample separates)', () => {
    expect(bootstrapAurocCi(cases([0.9, 0.8, 0.7], [0.1, 0.2]), { seed: 3 })).toEqual([1, 1]);
  });

  it('brackets the point estimate, stays in [0, 1], and is reproducible for a seed', () => {
    const c = cases([0.9, 0.6, 0.4, 0.35], [0.5, 0.3, 0.2, 0.45, 0.1]);
    const point = auroc(c);
    const ci = bootstrapAurocCi(c, { seed: 7, resamples: 1000 });
    expect(ci[0]).toBeLessThanOrEqual(point);
    expect(ci[1]).toBeGreaterThanOrEqual(point);
    expect(ci[0]).toBeGreaterThanOrEqual(0);
    expect(ci[1]).toBeLessThanOrEqual(1);
    expect(ci[1] - ci[0]).toBeGreaterThan(0.1);
    expect(bootstrapAurocCi(c, { seed: 7, resamples: 1000 })).toEqual(ci);
  });
});

describe('spread and percentile', () => {
  it('reports min, median (mean of the middle two when even) and max', () => {
    expect(spread([3, 1, 2])).toEqual({ min: 1, median: 2, max: 3 });
    expect(spread([4, 1, 3, 2])).toEqual({ min: 1, median: 2.5, max: 4 });
  });

  it('takes the nearest rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(xs, 50)).toBe(50);
    expect(percentile(xs, 99)).toBe(99);
    expect(percentile([5], 90)).toBe(5);
  });
});
