import { afterEach, describe, expect, it } from 'vitest';
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
  it('halves on overload, honours a cooldown, and recovers one step per healthy window', () => {
    let now = 0;
    const l = new AdaptiveLimiter({ max: 16, cooldownMs: 100, now: () => now });
    l.onOverload();
    expect(l.limit).toBe(8);
    l.onOverload(); // same burst
    expect(l.limit).toBe(8);
    now = 200;
    l.onOverload();
    expect(l.limit).toBe(4);
    for (let i = 0; i < 4; i++) l.onSuccess(10);
    expect(l.limit).toBe(5);
    for (let i = 0; i < 4; i++) l.onSuccess(10);
    expect(l.limit).toBe(5); // the next step needs 5 successes
    l.onSuccess(10);
    expect(l.limit).toBe(6);
  });

  it('shrinks when latency per unit rises well above its baseline', () => {
    let now = 0;
    const l = new AdaptiveLimiter({ max: 8, now: () => now });
    for (let i = 0; i < 5; i++) l.onSuccess(10);
    const before = l.limit;
    now = 5000;
    for (let i = 0; i < 10; i++) l.onSuccess(200);
    expect(l.limit).toBeLessThan(before);
    // The same latency for proportionally more work is not congestion.
    const m = new AdaptiveLimiter({ max: 8, now: () => now });
    for (let i = 0; i < 5; i++) m.onSuccess(10, 1);
    for (let i = 0; i < 10; i++) m.onSuccess(200, 20);
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
    const replies = await Promise.all(Array.from({ length: 40 }, () => ep.chat(hello)));
    expect(replies.every((r) => r[0]?.text === 'Reply to: hello')).toBe(true);
    expect(ep.transport.limiter.limit).toBeLessThan(16);
    const rejected = attempts.filter((a) => a.status === 429);
    expect(rejected.length).toBe(fake.stats.rejected);
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.every((a) => a.failure?.kind === 'rate_limited')).toBe(true);
  });
});

describe('replicas', () => {
  it('balances by least outstanding requests: a slow replica gets fewer', async () => {
    const fast = await startFakeVllm({ latencyMs: 5 });
    const slow = await startFakeVllm({ latencyMs: 120 });
    const ep = new VllmEndpoint({
      urls: [fast.url, slow.url],
      model: 'delivered',
      ref: 'vllm:a,b#delivered',
      concurrency: 4,
      fingerprint: false,
    });
    open.push(ep, fast, slow);
    await Promise.all(Array.from({ length: 40 }, () => ep.chat(hello)));
    expect(fast.stats.generations + slow.stats.generations).toBe(40);
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
