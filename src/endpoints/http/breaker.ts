/**
 * A circuit breaker for one replica. Closed: requests flow. Open: the replica is out for a cool-down (1 s,
 * doubling on each failed probe up to `maxOpenMs`). Half-open: one real request is let through as a probe;
 * its success closes the breaker, its failure opens it again. A dead replica (refused connections) is out
 * after `consecutive` failures in a row; a replica that turned flaky is taken out by the replica set, which
 * compares its recent failure rate with its peers' (`failureRate`).
 */
export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  /** Failures in a row that open the breaker. Default 5. */
  consecutive?: number;
  /** First cool-down. Default 1000 ms. */
  openMs?: number;
  /** Longest cool-down. Default 30 s. */
  maxOpenMs?: number;
  /** Outcomes remembered for the failure rate. Default 20. */
  window?: number;
  now?: () => number;
}

export class CircuitBreaker {
  private state: BreakerState = 'closed';
  private streak = 0;
  private openUntil = 0;
  private cooldown: number;
  private probing = false;
  private readonly outcomes: boolean[] = [];
  private readonly consecutive: number;
  private readonly openMs: number;
  private readonly maxOpenMs: number;
  private readonly window: number;
  private readonly now: () => number;
  /** How many times the breaker opened (for doctor and the benchmarks). */
  opened = 0;

  constructor(opts: BreakerOptions = {}) {
    this.consecutive = opts.consecutive ?? 5;
    this.openMs = opts.openMs ?? 1000;
    this.maxOpenMs = opts.maxOpenMs ?? 30_000;
    this.window = opts.window ?? 20;
    this.now = opts.now ?? Date.now;
    this.cooldown = this.openMs;
  }

  get current(): BreakerState {
    if (this.state === 'open' && this.now() >= this.openUntil) this.state = 'half-open';
    return this.state;
  }

  /** Whether a request may go here now; a half-open breaker admits one probe at a time. */
  admits(): boolean {
    const s = this.current;
    return s === 'closed' || (s === 'half-open' && !this.probing);
  }

  /** Called when a request is sent here; returns true when it is the half-open probe. */
  onSend(): boolean {
    if (this.current !== 'half-open' || this.probing) return false;
    this.probing = true;
    return true;
  }

  /** When the replica would admit again (for choosing among replicas that are all out). */
  get reopensAt(): number {
    return this.state === 'open' ? this.openUntil : 0;
  }

  /** Failures among the last `window` outcomes (0 with fewer than half a window seen). */
  get failureRate(): number {
    if (this.outcomes.length < this.window / 2) return 0;
    return this.outcomes.filter((ok) => !ok).length / this.outcomes.length;
  }

  onSuccess(probe: boolean): void {
    this.remember(true);
    this.streak = 0;
    if (probe || this.state !== 'closed') {
      this.probing = false;
      this.state = 'closed';
      this.cooldown = this.openMs;
      this.outcomes.length = 0; // a fresh start: the old failures are what the probe just disproved
    }
  }

  onFailure(probe: boolean): void {
    this.remember(false);
    this.streak++;
    if (probe) {
      this.probing = false;
      this.cooldown = Math.min(this.maxOpenMs, this.cooldown * 2);
      this.open();
      return;
    }
    if (this.state === 'closed' && this.streak >= this.consecutive) this.open();
  }

  /** Abandoned (cancelled) requests say nothing about the replica; a cancelled probe frees the slot. */
  onCancel(probe: boolean): void {
    if (probe) this.probing = false;
  }

  /** Taken out by the replica set (flaky compared with its peers). */
  trip(): void {
    if (this.state === 'closed') this.open();
  }

  private open(): void {
    this.state = 'open';
    this.opened++;
    this.openUntil = this.now() + this.cooldown;
    this.outcomes.length = 0;
  }

  private remember(ok: boolean): void {
    this.outcomes.push(ok);
    if (this.outcomes.length > this.window) this.outcomes.shift();
  }
}
