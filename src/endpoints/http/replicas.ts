import { Pool } from 'undici';
import { type BreakerOptions, CircuitBreaker } from './breaker.ts';

export interface Replica {
  /** Position in the reference's URL list (recorded with each attempt). */
  index: number;
  root: URL;
  /** The root's path without trailing slashes, prefixed to every request path (computed once). */
  basePath: string;
  pool: Pool;
  outstanding: number;
  breaker: CircuitBreaker;
}

export interface PoolSettings {
  connections: number;
  keepAliveMs: number;
  connectMs: number;
  headersMs: number;
  bodyMs: number;
}

/**
 * The replicas serving one model: least-outstanding choice among those whose breaker admits requests,
 * rotating ties; a replica whose recent failure rate is far above its peers' is taken out (its breaker
 * opens) and probed back in. When every breaker is open the one that reopens first is used anyway, so a
 * fully failing deployment ends in recorded failures (bounded by the retry policy), never in a hang.
 */
export class ReplicaSet {
  readonly replicas: Replica[];
  private nextTie = 0;

  constructor(roots: string[], pool: PoolSettings, breaker: BreakerOptions = {}) {
    this.replicas = roots.map((r, index) => {
      const root = new URL(r);
      return {
        index,
        root,
        basePath: root.pathname.replace(/\/+$/, ''),
        outstanding: 0,
        breaker: new CircuitBreaker(breaker),
        pool: new Pool(root.origin, {
          connections: pool.connections,
          pipelining: 1,
          keepAliveTimeout: pool.keepAliveMs,
          keepAliveMaxTimeout: pool.keepAliveMs,
          connectTimeout: pool.connectMs,
          headersTimeout: pool.headersMs,
          bodyTimeout: pool.bodyMs,
        }),
      };
    });
  }

  /** The replica for the next attempt; `avoid` (the one that just failed) only if nothing else admits. */
  pick(avoid?: Replica): { replica: Replica; probe: boolean } {
    const n = this.replicas.length;
    let best: Replica | undefined;
    for (let i = 0; i < n; i++) {
      const r = this.replicas[(this.nextTie + i) % n]!;
      if (r === avoid && n > 1) continue;
      if (!r.breaker.admits()) continue;
      if (!best || r.outstanding < best.outstanding) best = r;
    }
    this.nextTie = (this.nextTie + 1) % n;
    if (!best && avoid?.breaker.admits()) best = avoid;
    if (!best) best = this.replicas.reduce((a, b) => (b.breaker.reopensAt < a.breaker.reopensAt ? b : a));
    return { replica: best, probe: best.breaker.onSend() };
  }

  /** A replica other than `than` that admits requests now (for a hedge), if any. */
  other(than: Replica): { replica: Replica; probe: boolean } | undefined {
    let best: Replica | undefined;
    for (const r of this.replicas)
      if (r !== than && r.breaker.admits() && (!best || r.outstanding < best.outstanding)) best = r;
    return best ? { replica: best, probe: best.breaker.onSend() } : undefined;
  }

  onSuccess(r: Replica, probe: boolean): void {
    r.breaker.onSuccess(probe);
  }

  onFailure(r: Replica, probe: boolean): void {
    r.breaker.onFailure(probe);
    if (this.replicas.length < 2 || r.breaker.current !== 'closed') return;
    const rate = r.breaker.failureRate;
    if (rate < 0.5) return;
    const peers = this.replicas.filter((p) => p !== r && p.breaker.current === 'closed');
    if (peers.length === 0) return;
    const peerRate = peers.reduce((s, p) => s + p.breaker.failureRate, 0) / peers.length;
    if (rate >= peerRate + 0.3) r.breaker.trip();
  }

  /** Per replica: breaker state, outstanding requests, times taken out. */
  health(): Array<{ url: string; state: string; outstanding: number; opened: number }> {
    return this.replicas.map((r) => ({
      url: r.root.origin,
      state: r.breaker.current,
      outstanding: r.outstanding,
      opened: r.breaker.opened,
    }));
  }

  close(): Promise<void> {
    return Promise.all(
      this.replicas.map((r) => (r.pool.closed || r.pool.destroyed ? undefined : r.pool.close())),
    ).then(() => undefined);
  }
}
