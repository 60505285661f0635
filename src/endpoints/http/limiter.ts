/**
 * Client-side in-flight cap with adaptive concurrency (AIMD): the limit halves on overload signals
 * (429/503) and shrinks by one when latency rises well above its observed baseline; it grows back by one
 * after a full window (`limit` successes in a row) of healthy replies. vLLM batches continuously, so the
 * client wants as many requests in flight as the server can take, and no more.
 */
export interface LimiterOptions {
  /** Upper bound (and starting point) of the in-flight limit. */
  max: number;
  min?: number;
  /** Latency above `latencyFactor` × baseline counts as congestion. Default 3. */
  latencyFactor?: number;
  /** After a decrease, further overload signals within this many ms are treated as the same event. */
  cooldownMs?: number;
  now?: () => number;
}

export class AdaptiveLimiter {
  private current: number;
  private inFlight = 0;
  private readonly waiters: Array<() => void> = [];
  private readonly min: number;
  private readonly max: number;
  private readonly latencyFactor: number;
  private readonly cooldownMs: number;
  private readonly now: () => number;
  private successesSinceChange = 0;
  private lastDecreaseAt = Number.NEGATIVE_INFINITY;
  /** Smoothed latency per unit of work and its slowly rising floor. */
  private ewma: number | undefined;
  private baseline: number | undefined;

  constructor(opts: LimiterOptions) {
    this.max = Math.max(1, Math.floor(opts.max));
    this.min = Math.max(1, Math.min(this.max, Math.floor(opts.min ?? 1)));
    this.current = this.max;
    this.latencyFactor = opts.latencyFactor ?? 3;
    this.cooldownMs = opts.cooldownMs ?? 1000;
    this.now = opts.now ?? Date.now;
  }

  get limit(): number {
    return this.current;
  }

  get active(): number {
    return this.inFlight;
  }

  /** Resolves when a slot is free; the caller must call `release()` exactly once afterwards. */
  async acquire(): Promise<void> {
    if (this.inFlight < this.current && this.waiters.length === 0) {
      this.inFlight++;
      return;
    }
    await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    this.inFlight--;
    this.drain();
  }

  /** A healthy reply; `cost` normalises latency by work done (e.g. tokens + 1). */
  onSuccess(latencyMs: number, cost = 1): void {
    const perUnit = latencyMs / Math.max(1, cost);
    this.ewma = this.ewma === undefined ? perUnit : 0.8 * this.ewma + 0.2 * perUnit;
    // The baseline follows improvements at once and degradations only very slowly.
    this.baseline =
      this.baseline === undefined ? perUnit : Math.min(this.ewma, this.baseline * 1.01 + 0.01 * perUnit);
    if (this.baseline > 0 && this.ewma > this.latencyFactor * this.baseline) {
      // Congested: shrink (once per cooldown) and never count it towards recovery.
      if (this.inCooldownPassed()) this.setLimit(this.current - 1);
      return;
    }
    this.successesSinceChange++;
    if (this.successesSinceChange >= this.current && this.current < this.max) this.setLimit(this.current + 1);
  }

  /** 429 / 503: the server says it is overloaded. */
  onOverload(): void {
    if (!this.inCooldownPassed()) return;
    this.setLimit(Math.floor(this.current / 2));
  }

  private inCooldownPassed(): boolean {
    return this.now() - this.lastDecreaseAt >= this.cooldownMs;
  }

  private setLimit(next: number): void {
    const clamped = Math.max(this.min, Math.min(this.max, next));
    if (clamped < this.current) this.lastDecreaseAt = this.now();
    this.current = clamped;
    this.successesSinceChange = 0;
    this.drain();
  }

  private drain(): void {
    while (this.inFlight < this.current && this.waiters.length > 0) {
      this.inFlight++;
      this.waiters.shift()?.();
    }
  }
}
