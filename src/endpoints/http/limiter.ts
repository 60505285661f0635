import { type CapacityOptions, CapacitySignal } from './capacity.ts';

/**
 * Client-side in-flight cap that follows the server's capacity without chasing noise (after Netflix's
 * Gradient2 and Envoy's adaptive concurrency filter: latency is the capacity signal, not every error).
 *
 * - Latency gradient: the limit moves towards `limit × clamp(tolerance × long / short, ½, 1) + √limit`, smoothed,
 *   where `short` is the median cost-normalised latency of the last few replies and `long` a slow average.
 *   A median ignores the odd stalled reply, and the limit never goes below `floor` on latency alone, so random
 *   stalls cannot ratchet it down.
 * - Refusals (429/503): a cut (×0.7, once per cooldown of about two round trips, down to `min`) only when they rise with concurrency
 *   (`CapacitySignal`); a steady fault rate independent of load leaves the limit alone. The refused request's
 *   own wait (Retry-After) is the caller's and holds no slot.
 */
export interface LimiterOptions {
  /** Upper bound (and starting point) of the in-flight limit. */
  max: number;
  /** Lowest limit a capacity signal can cut to. Default 1. */
  min?: number;
  /** Lowest limit latency alone can push to. Default ceil(max / 4). */
  floor?: number;
  /** Latency up to this multiple of the long-term average is not congestion. Default 2. */
  tolerance?: number;
  /** Replies in the short (median) window. Default 15. */
  shortWindow?: number;
  /**
   * After a capacity cut, further cuts within this many ms are the same event. Default: two round trips
   * (smoothed reply latency, 20 ms to 1 s): a cut shows only once the requests sent before it have returned,
   * and a fixed second let an overloaded fast server refuse nine requests in ten for a whole second.
   */
  cooldownMs?: number;
  capacity?: CapacityOptions;
  now?: () => number;
}

export class AdaptiveLimiter {
  private current: number;
  private inFlight = 0;
  private readonly waiters: Array<() => void> = [];
  private readonly min: number;
  private readonly max: number;
  private readonly floor: number;
  private readonly tolerance: number;
  private readonly cooldownMs: number | undefined;
  /** Smoothed raw reply latency (ms), for the default cooldown. */
  private rttMs: number | undefined;
  private readonly now: () => number;
  private readonly capacity: CapacitySignal;
  private readonly recent: number[] = [];
  /** Where `median` sorts a copy of `recent` (a typed array sorts numerically, without a comparator or garbage). */
  private readonly scratch: Float64Array;
  private readonly shortWindow: number;
  private longRtt: number | undefined;
  private lastCutAt = Number.NEGATIVE_INFINITY;
  /** A running experiment: the limit before it and the refusal rate that prompted it. */
  private experiment: { before: number; rate: number } | undefined;
  private experimentGap = 1;
  private quietWindows = 0;
  /** Where the server refused for capacity; latency may not grow the limit past it (it rises per window). */
  private ceiling: number;

  constructor(opts: LimiterOptions) {
    this.max = Math.max(1, Math.floor(opts.max));
    this.min = Math.max(1, Math.min(this.max, Math.floor(opts.min ?? 1)));
    this.floor = Math.max(this.min, Math.min(this.max, Math.floor(opts.floor ?? Math.ceil(this.max / 4))));
    this.current = this.max;
    this.ceiling = this.max;
    this.tolerance = opts.tolerance ?? 2;
    this.shortWindow = Math.max(3, opts.shortWindow ?? 15);
    this.scratch = new Float64Array(this.shortWindow);
    this.cooldownMs = opts.cooldownMs;
    this.capacity = new CapacitySignal(opts.capacity);
    this.now = opts.now ?? Date.now;
  }

  /** The whole-request limit (fractional internally; requests are whole). */
  get limit(): number {
    return Math.max(1, Math.floor(this.current));
  }

  get active(): number {
    return this.inFlight;
  }

  /**
   * Resolves when a slot is free, with the number of requests in flight once this one is counted; the
   * caller must call `release()` exactly once afterwards. `retry`: an attempt of a request already tried.
   */
  async acquire(retry = false): Promise<number> {
    if (this.inFlight < this.limit && this.waiters.length === 0) return ++this.inFlight;
    // A retry goes ahead of requests not yet started: finishing started work first keeps the tail short,
    // and the number of requests waiting stays the same.
    await new Promise<void>((resolve) =>
      retry ? this.waiters.unshift(resolve) : this.waiters.push(resolve),
    );
    return this.inFlight;
  }

  release(): void {
    this.inFlight--;
    this.drain();
  }

  /** A healthy reply; `cost` normalises latency by work done (e.g. tokens + 1). */
  onSuccess(latencyMs: number, cost = 1): void {
    this.rttMs = this.rttMs === undefined ? latencyMs : 0.9 * this.rttMs + 0.1 * latencyMs;
    const perUnit = latencyMs / Math.max(1, cost);
    this.recent.push(perUnit);
    if (this.recent.length > this.shortWindow) this.recent.shift();
    if (this.recent.length < this.shortWindow) return;
    const short = median(this.recent, this.scratch);
    this.longRtt = this.longRtt === undefined ? short : 0.95 * this.longRtt + 0.05 * short;
    // A long average far above the present (the server got faster) is let go quickly, as Gradient2 does.
    if (this.longRtt > 2 * short) this.longRtt = 0.9 * this.longRtt + 0.1 * short;
    const gradient = short <= 0 ? 1 : Math.max(0.5, Math.min(1, (this.tolerance * this.longRtt) / short));
    const target = this.current * gradient + Math.sqrt(this.current);
    if (this.experiment) return; // the experiment's limit holds for its window
    this.setLimit(Math.min(this.ceiling, 0.8 * this.current + 0.2 * target), this.floor);
  }

  /**
   * Every finished generation request: `inFlightAtSend` as returned by acquire, `refused` for 429/503.
   * Returns true when this outcome cut the limit.
   *
   * A window whose concurrency varied is judged directly (refusals rising with concurrency: cut). A window
   * at a pegged limit with refusals cannot tell load from flakiness, so the next window runs as an
   * experiment at 60% of the limit: if refusals fall clearly, it was capacity and the cut stays; if not,
   * the limit is restored and the next experiment waits twice as long (up to 16 windows), so a steady fault
   * rate costs at most a few percent of throughput.
   */
  onOutcome(inFlightAtSend: number, refused: boolean): boolean {
    const w = this.capacity.record(inFlightAtSend, refused);
    if (!w) return false;
    if (this.experiment) {
      const { before, rate } = this.experiment;
      this.experiment = undefined;
      if (w.rate <= rate * 0.6 && rate - w.rate >= 0.05) {
        this.experimentGap = 1;
        this.lastCutAt = this.now();
        this.ceiling = this.current;
        return true; // the refusals followed the load: keep the lower limit
      }
      this.setLimit(Math.max(this.current, before), this.current);
      this.quietWindows = 0;
      this.experimentGap = Math.min(16, this.experimentGap * 2);
      return false;
    }
    if (w.rising) return this.cut();
    // A window without a capacity signal lets the ceiling rise by one (additive increase).
    this.ceiling = Math.min(this.max, this.ceiling + 1);
    this.quietWindows++;
    if (!w.spread && w.rate >= 0.05 && this.quietWindows >= this.experimentGap && this.current > this.min) {
      this.experiment = { before: this.current, rate: w.rate };
      this.setLimit(this.current * 0.6, this.min);
    }
    return false;
  }

  private cut(): boolean {
    const cooldown = this.cooldownMs ?? Math.min(1000, Math.max(20, 2 * (this.rttMs ?? 500)));
    if (this.now() - this.lastCutAt < cooldown) return false;
    this.lastCutAt = this.now();
    this.setLimit(this.current * 0.7, this.min);
    this.ceiling = this.current;
    return true;
  }

  private setLimit(next: number, lowest: number): void {
    this.current = Math.max(Math.min(lowest, this.current), Math.min(this.max, next));
    this.drain();
  }

  private drain(): void {
    while (this.inFlight < this.limit && this.waiters.length > 0) {
      this.inFlight++;
      this.waiters.shift()?.();
    }
  }
}

function median(xs: readonly number[], scratch: Float64Array): number {
  const s = scratch.subarray(0, xs.length);
  s.set(xs);
  s.sort();
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
