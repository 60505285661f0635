/**
 * When to send a second attempt for a request that is slower than its peers (hedging, "The Tail at Scale"):
 * after the `quantile` of recent successful latencies of the same path and at least `medianFactor` times
 * their median, never before `minDelayMs`, only once enough replies are known, and within a budget (`ratio`
 * hedges per attempt, with a small burst) so a slow server is not sent twice the load. The median factor
 * keeps a busy client (whose own event loop stretches every latency) from hedging its ordinary tail: a hedge
 * is for a request stuck far outside the distribution, like a stalled connection.
 */
export interface HedgeOptions {
  /** Default 0.95. */
  quantile?: number;
  /**
   * Default 50 ms. The budget, not this floor, bounds the extra load; a 250 ms floor let every stall on a
   * fast server hold its slot 250 ms, which on the issue-16 profile (a stall in 13 attempts) cost more
   * than all the replies.
   */
  minDelayMs?: number;
  /**
   * Default 2: twice the median is far outside a healthy reply's spread (the p95 also applies), and each
   * stalled attempt holds its slot until then (at 4×, stalls alone took a quarter of the slots' time).
   */
  medianFactor?: number;
  /** Replies of a path needed before hedging it. Default 20. */
  minSamples?: number;
  /** Hedges per attempt allowed on average. Default 0.2 (a server that stalls one attempt in 13 needs 0.08). */
  ratio?: number;
  /** Hedges that may be spent at once from the saved budget. Default 20. */
  burst?: number;
}

export class HedgePolicy {
  private readonly quantile: number;
  readonly minDelayMs: number;
  private readonly medianFactor: number;
  private readonly minSamples: number;
  private readonly ratio: number;
  private readonly burst: number;
  /** Per key: the last 200 latencies in arrival order, and the same values kept sorted (no sort per request). */
  private readonly latencies = new Map<string, { order: number[]; sorted: number[] }>();
  private readonly cached = new Map<string, number | undefined>();
  private tokens: number;

  constructor(opts: HedgeOptions = {}) {
    this.quantile = opts.quantile ?? 0.95;
    this.minDelayMs = opts.minDelayMs ?? 50;
    this.medianFactor = opts.medianFactor ?? 2;
    this.minSamples = opts.minSamples ?? 20;
    this.ratio = opts.ratio ?? 0.2;
    this.burst = opts.burst ?? 20;
    this.tokens = this.burst / 2;
  }

  /** A successful reply's latency for `key` (method and path). */
  observe(key: string, latencyMs: number): void {
    let xs = this.latencies.get(key);
    if (!xs) {
      xs = { order: [], sorted: [] };
      this.latencies.set(key, xs);
    }
    xs.order.push(latencyMs);
    xs.sorted.splice(sortedIndex(xs.sorted, latencyMs), 0, latencyMs);
    if (xs.order.length > 200) {
      const oldest = xs.order.shift()!;
      xs.sorted.splice(sortedIndex(xs.sorted, oldest), 1);
    }
    this.cached.delete(key);
  }

  /**
   * Each attempt of a generation earns a fraction of a hedge: stalls strike attempts, not requests, and a
   * budget earned per request ran dry on a server that stalls one attempt in thirteen.
   */
  onAttempt(): void {
    this.tokens = Math.min(this.burst, this.tokens + this.ratio);
  }

  /** Milliseconds after which a request to `key` is hedged, or undefined (not enough data yet). */
  delayFor(key: string): number | undefined {
    if (this.cached.has(key)) return this.cached.get(key);
    const sorted = this.latencies.get(key)?.sorted;
    let delay: number | undefined;
    if (sorted && sorted.length >= this.minSamples) {
      const q = sorted[Math.min(sorted.length - 1, Math.floor(this.quantile * sorted.length))]!;
      const median = sorted[sorted.length >> 1]!;
      delay = Math.max(this.minDelayMs, q, this.medianFactor * median);
    }
    this.cached.set(key, delay);
    return delay;
  }

  /** Spends one hedge from the budget; false when the budget is empty. */
  take(): boolean {
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

/** First index whose value is not below `x` (binary search; latencies are finite numbers). */
function sortedIndex(sorted: number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Called, or (another Cancel) aborted, when a Cancel aborts. */
type AbortListener = (() => void) | Cancel;

/**
 * A cancel handle: a lost hedge race or a deadline aborts an attempt through it. Not an EventEmitter (nor an
 * AbortController: no DOMException, no EventTarget): a request makes one or two, each with a listener or two,
 * and an emitter's construction was a measurable share of the audit path's own CPU. Listeners run once, in the
 * order added.
 */
export class Cancel {
  aborted = false;
  private listeners: AbortListener[] | undefined;

  /** A listener is a function, or another Cancel aborted with this one. */
  once(_event: 'abort', listener: AbortListener): this {
    if (this.listeners) this.listeners.push(listener);
    else this.listeners = [listener];
    return this;
  }

  removeListener(_event: 'abort', listener: AbortListener): this {
    const at = this.listeners?.indexOf(listener) ?? -1;
    if (at >= 0) this.listeners!.splice(at, 1);
    return this;
  }

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners)
      for (const listener of listeners) {
        if (typeof listener === 'function') listener();
        else listener.abort();
      }
  }
}
