import { afterEach, describe, expect, it, vi } from 'vitest';
import { AdaptiveLimiter } from '../../../src/endpoints/http/limiter.ts';
import { VllmEndpoint } from '../../../src/endpoints/http/vllm.ts';
import type { AttemptRecord, ChatRequest } from '../../../src/endpoints/types.ts';
import { startFakeVllm } from '../../../src/testing/fake-vllm.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

const hello: ChatRequest = {
  messages: [{ role: 'user', content: 'hello' }],
  params: { maxTokens: 32, temperature: 0 },
};

describe('AdaptiveLimiter', () => {
  /** `rounds` windows of 100 outcomes with in-flight counts spread over 1..16; refusal by `refuse`. */
  function feed(l: AdaptiveLimiter, rounds: number, refuse: (inFlight: number, i: number) => boolean) {
    let cuts = 0;
    for (let i = 0; i < rounds * 100; i++) {
      const inFlight = 1 + (i % 16);
      if (l.onOutcome(inFlight, refuse(inFlight, i))) cuts++;
    }
    return cuts;
  }

  it('a steady refusal rate independent of load never cuts the limit', () => {
    let now = 0;
    const l = new AdaptiveLimiter({ max: 16, cooldownMs: 0, now: () => now });
    // One in seven refused, whatever the concurrency (a flaky proxy): 50 windows, no cut.
    const cuts = feed(l, 50, (_f, i) => i % 7 === 3);
    now += 1;
    expect(cuts).toBe(0);
    expect(l.limit).toBe(16);
  });

  it('refusals that rise with concurrency are a capacity signal and cut the limit', () => {
    let now = 0;
    const l = new AdaptiveLimiter({ max: 16, cooldownMs: 100, now: () => now });
    // An overloaded server: requests sent with more than 8 in flight are refused.
    expect(feed(l, 1, (f) => f > 8)).toBe(1);
    expect(l.limit).toBeLessThan(16);
    expect(l.limit).toBeGreaterThanOrEqual(1);
    const after = l.limit;
    expect(feed(l, 1, (f) => f > 8)).toBe(0); // within the cooldown: the same event
    expect(l.limit).toBe(after);
    now = 1000;
    expect(feed(l, 1, (f) => f > 8)).toBe(1);
    expect(l.limit).toBeLessThan(after);
  });

  it('most requests refused is overload even without a spread in concurrency', () => {
    const l = new AdaptiveLimiter({ max: 16 });
    for (let i = 0; i < 100; i++) l.onOutcome(16, i % 5 !== 0);
    expect(l.limit).toBeLessThan(16);
  });

  it('random stalls do not move the limit; sustained slowness lowers it, never below the floor', () => {
    const l = new AdaptiveLimiter({ max: 16, floor: 8 });
    for (let i = 0; i < 2000; i++) l.onSuccess(i % 13 === 0 ? 3000 : 10);
    expect(l.limit).toBe(16);
    // Latency climbing steadily (a server queueing more and more): the limit falls to the floor, not below.
    let lowest = 16;
    for (let i = 0; i < 150; i++) {
      l.onSuccess(10 * 1.3 ** i);
      lowest = Math.min(lowest, l.limit);
    }
    expect(lowest).toBe(8); // the floor
    // Recovers once latency is steady again.
    for (let i = 0; i < 3000; i++) l.onSuccess(10);
    expect(l.limit).toBe(16);
  });

  it('at a pegged limit, an experiment at a lower limit tells capacity from a steady fault rate', () => {
    const flaky = new AdaptiveLimiter({ max: 16 });
    let lowest = 16;
    for (let i = 0; i < 100 * 40; i++) {
      flaky.onOutcome(flaky.limit, i % 7 === 3); // one in seven refused at any concurrency
      lowest = Math.min(lowest, flaky.limit);
    }
    expect(lowest).toBeLessThan(16); // it did experiment...
    expect(flaky.limit).toBe(16); // ...and restored the limit
    const full = new AdaptiveLimiter({ max: 16 });
    // A server that refuses whatever exceeds 6 in flight.
    for (let i = 0; i < 100 * 10; i++) full.onOutcome(full.limit, i % full.limit >= 6);
    expect(full.limit).toBeLessThanOrEqual(9);
  });

  it('the same latency for proportionally more work is not congestion', () => {
    const m = new AdaptiveLimiter({ max: 8 });
    for (let i = 0; i < 50; i++) m.onSuccess(10, 1);
    for (let i = 0; i < 200; i++) m.onSuccess(200, 20);
    expect(m.limit).toBe(8);
  });

  it('never lets more than the limit run at once', async () => {
    const l = new AdaptiveLimiter({ max: 3 });
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 12 }, async () => {
        await l.acquire();
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 2));
        running--;
        l.release();
      }),
    );
    expect(peak).toBe(3);
    expect(l.active).toBe(0);
  });

  it('a retry waiting for a slot goes ahead of requests not yet started', async () => {
    const l = new AdaptiveLimiter({ max: 1 });
    await l.acquire();
    const order: string[] = [];
    const fresh = l.acquire().then(() => order.push('fresh'));
    const retry = l.acquire(true).then(() => order.push('retry'));
    l.release();
    await retry;
    l.release();
    await fresh;
    expect(order).toEqual(['retry', 'fresh']);
  });
});

describe('adaptive concurrency against an overloaded server', () => {
  it('backs off on 429s and still completes every request', async () => {
    const fake = await startFakeVllm({ maxConcurrent: 3, latencyMs: 15 });
    const attempts: AttemptRecord[] = [];
    const ep = new VllmEndpoint({
      urls: [fake.url],
      model: 'delivered',
      ref: 'vllm:test#delivered',
      concurrency: 16,
      observer: (a) => attempts.push(a),
      retry: { maxAttempts: 30, baseDelayMs: 5, maxDelayMs: 40 },
      fingerprint: false,
    });
    open.push(ep, fake);
    const replies = await Promise.all(Array.from({ length: 200 }, () => ep.chat(hello)));
    expect(replies.every((r) => r[0]?.text === 'Reply to: hello')).toBe(true);
    expect(ep.transport.limiter.limit).toBeLessThan(16);
    const rejected = attempts.filter((a) => a.status === 429);
    // Every refusal the server sent is in the attempts: read as a 429, or abandoned unread when its hedged
    // twin answered first (recorded as cancelled).
    const abandoned = attempts.filter((a) => a.failure?.kind === 'cancelled');
    expect(rejected.length).toBeLessThanOrEqual(fake.stats.rejected);
    expect(rejected.length + abandoned.length).toBeGreaterThanOrEqual(fake.stats.rejected);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.every((a) => a.failure?.kind === 'rate_limited')).toBe(true);
  });
});

describe('replicas', () => {
  it('balances by least outstanding requests: a slow replica gets fewer', async () => {
    const fast = await startFakeVllm({ latencyMs: 5 });
    const slow = await startFakeVllm({ latencyMs: 120 });
    let hedges = 0;
    const ep = new VllmEndpoint({
      urls: [fast.url, slow.url],
      model: 'delivered',
      ref: 'vllm:a,b#delivered',
      concurrency: 4,
      fingerprint: false,
      // A request stuck on the slow replica long past its peers may be hedged on the fast one.
      observer: (r) => {
        if (r.hedge) hedges++;
      },
    });
    open.push(ep, fast, slow);
    await Promise.all(Array.from({ length: 40 }, () => ep.chat(hello)));
    // Every call reached a server; a hedge cancelled before it was written may never reach one.
    await vi.waitFor(() =>
      expect(fast.stats.generations + slow.stats.generations).toBeGreaterThanOrEqual(40),
    );
    expect(fast.stats.generations + slow.stats.generations).toBeLessThanOrEqual(40 + hedges);
    expect(slow.stats.generations).toBeGreaterThan(0);
    expect(fast.stats.generations).toBeGreaterThan(slow.stats.generations * 2);
  });

  it('spreads evenly across equal replicas', async () => {
    const a = await startFakeVllm({ latencyMs: 20 });
    const b = await startFakeVllm({ latencyMs: 20 });
    const ep = new VllmEndpoint({
      urls: [a.url, b.url],
      model: 'delivered',
      ref: 'r',
      concurrency: 8,
      fingerprint: false,
    });
    open.push(ep, a, b);
    await Promise.all(Array.from({ length: 32 }, () => ep.chat(hello)));
    expect(Math.abs(a.stats.generations - b.stats.generations)).toBeLessThanOrEqual(4);
  });
});
