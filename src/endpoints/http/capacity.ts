/**
 * Tells a capacity signal from a steady fault rate. An overloaded server refuses more the more it is sent:
 * its 429/503s cluster at high concurrency. A flaky proxy refuses a fixed fraction whatever the load, and
 * cutting the limit for that only slows the audit down. Each finished request is recorded with the number
 * of requests in flight when it was sent; every `window` outcomes the refusal rates of the busier and the
 * quieter half are compared. When the concurrency barely varied (the limit is pegged) the window cannot
 * tell, and says so (`spread: false`): the limiter then runs an experiment at a lower limit.
 */
export interface WindowVerdict {
  /** Refused fraction of the window. */
  rate: number;
  /** The window's concurrency varied enough to compare a busier with a quieter half. */
  spread: boolean;
  /** Refusals rise with concurrency (only meaningful with `spread`), or most requests were refused. */
  rising: boolean;
}

export interface CapacityOptions {
  /** Outcomes per judgement. Default 100. */
  window?: number;
  /**
   * How sure the comparison must be: the busier half's refusal rate must exceed the quieter half's by this
   * many standard errors (a two-proportion z-test). Default 3: a steady 1-in-7 fault rate then trips it
   * about once in 700 windows, an overload that refuses above some concurrency almost always.
   */
  z?: number;
  /** Refusing more than this fraction is overload whatever the spread (most requests fail anyway). */
  saturation?: number;
}

export class CapacitySignal {
  private readonly window: number;
  private readonly z: number;
  private readonly saturation: number;
  private inFlight: number[] = [];
  private refused: boolean[] = [];

  constructor(opts: CapacityOptions = {}) {
    this.window = Math.max(8, opts.window ?? 100);
    this.z = opts.z ?? 3;
    this.saturation = opts.saturation ?? 0.5;
  }

  /** Records one finished request; returns the window's verdict when this outcome closed a window. */
  record(inFlightAtSend: number, refused: boolean): WindowVerdict | undefined {
    this.inFlight.push(inFlightAtSend);
    this.refused.push(refused);
    if (this.inFlight.length < this.window) return undefined;
    const verdict = this.judge();
    this.inFlight = [];
    this.refused = [];
    return verdict;
  }

  private judge(): WindowVerdict {
    const n = this.refused.length;
    const total = this.refused.filter(Boolean).length;
    const rate = total / n;
    if (total === 0) return { rate, spread: true, rising: false };
    if (rate > this.saturation) return { rate, spread: true, rising: true };
    // Split at the median concurrency; ties go to neither side's advantage (both halves are compared).
    const sorted = [...this.inFlight].sort((a, b) => a - b);
    const median = sorted[Math.floor(n / 2)]!;
    let hiN = 0;
    let hiRefused = 0;
    let loN = 0;
    let loRefused = 0;
    for (let i = 0; i < n; i++) {
      if (this.inFlight[i]! >= median) {
        hiN++;
        if (this.refused[i]) hiRefused++;
      } else {
        loN++;
        if (this.refused[i]) loRefused++;
      }
    }
    // No spread in concurrency: nothing says the refusals depend on load.
    if (loN < n / 5 || hiN < n / 5) return { rate, spread: false, rising: false };
    const hi = hiRefused / hiN;
    const lo = loRefused / loN;
    const pooled = total / n;
    const se = Math.sqrt(pooled * (1 - pooled) * (1 / hiN + 1 / loN));
    return { rate, spread: true, rising: se > 0 && (hi - lo) / se >= this.z };
  }
}
