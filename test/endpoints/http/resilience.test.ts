import { afterEach, describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../../src/endpoints/http/breaker.ts';
import { VllmEndpoint, type VllmOptions } from '../../../src/endpoints/http/vllm.ts';
import type { AttemptRecord, ChatRequest } from '../../../src/endpoints/types.ts';
import { type FakeVllm, type FakeVllmOptions, startFakeVllm } from '../../../src/testing/fake-vllm.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close().catch(() => undefined)));
});

const hello = (i = 0): ChatRequest => ({
  messages: [{ role: 'user', content: `hello ${i}` }],
  params: { maxTokens: 32, temperature: 0.7, seed: 1000 + i },
});

/** An endpoint over the replicas, its version already detected (attempts below are generations only). */
async function endpoint(fakes: FakeVllm[], extra: Partial<VllmOptions> = {}) {
  const attempts: AttemptRecord[] = [];
  const ep = new VllmEndpoint({
    urls: fakes.map((f) => f.url),
    model: 'delivered',
    ref: 'vllm:replicas#delivered',
    observer: (a) => attempts.push(a),
    fingerprint: false,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    ...extra,
  });
  open.push(ep);
  await ep.capabilities();
  attempts.length = 0;
  return { ep, attempts };
}

async function fake(opts: FakeVllmOptions = {}) {
  const f = await startFakeVllm(opts);
  open.push(f);
  return f;
}

describe('CircuitBreaker', () => {
  it('opens after failures in a row, lets one half-open probe through, closes on its success', () => {
    let now = 0;
    const b = new CircuitBreaker({ consecutive: 3, openMs: 100, now: () => now });
    for (let i = 0; i < 3; i++) b.onFailure(false);
    expect(b.current).toBe('open');
    expect(b.admits()).toBe(false);
    now = 100;
    expect(b.current).toBe('half-open');
    expect(b.onSend()).toBe(true); // the probe
    expect(b.admits()).toBe(false); // one probe at a time
    b.onFailure(true);
    expect(b.current).toBe('open');
    now = 250; // the cool-down doubled: still out
    expect(b.current).toBe('open');
    now = 300;
    expect(b.onSend()).toBe(true);
    b.onSuccess(true);
    expect(b.current).toBe('closed');
    expect(b.opened).toBe(2);
  });
});

describe('hedged requests', () => {
  it('a request slower than its peers gets a second attempt; the first answer wins; both are recorded', async () => {
    const f = await fake();
    // A 200 ms floor: a warm-up request slowed by a loaded machine must not spend the hedge budget (or leave a
    // cancelled loser behind) before the request under test.
    const { ep, attempts } = await endpoint([f], { hedge: { minSamples: 5, minDelayMs: 200 } });
    for (let i = 0; i < 10; i++) await ep.chat(hello(i)); // latency history for the path
    attempts.length = 0;
    f.faults.push({ kind: 'stall', ms: 20_000 });
    const [reply] = await ep.chat(hello(99)); // long before the stall ends (the test would time out)
    expect(reply?.text).toBe('Reply to: hello 99 (sample 0)');
    const won = attempts.find((a) => a.ok);
    const lost = attempts.find((a) => !a.ok && a.requestHash === won?.requestHash);
    expect(won).toMatchObject({ hedge: true, attempt: 2 });
    expect(lost).toMatchObject({ attempt: 1, failure: { kind: 'cancelled' } });
    expect(lost?.hedge).toBeUndefined();
    expect(won?.requestHash).toBe(lost?.requestHash);
  });

  it('a hedge that fails while its primary still hangs abandons both and retries at once', async () => {
    const f = await fake();
    const { ep, attempts } = await endpoint([f], { hedge: { minSamples: 5, minDelayMs: 50 } });
    for (let i = 0; i < 10; i++) await ep.chat(hello(i));
    attempts.length = 0;
    // The primary hangs for 20 s; its hedge is refused at once. Waiting out the primary would hold its
    // slot (and the request) for the whole stall.
    f.faults.push({ kind: 'stall', ms: 20_000 }, { kind: 'status', status: 500 });
    const t0 = performance.now();
    const [reply] = await ep.chat(hello(99));
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(reply?.text).toBe('Reply to: hello 99 (sample 0)');
    const mine = attempts.filter((a) => a.requestHash === attempts.at(-1)?.requestHash);
    expect(mine.map((a) => [a.attempt, a.hedge === true, a.ok, a.failure?.kind])).toEqual([
      [2, true, false, 'server_error'],
      [1, false, false, 'cancelled'],
      [3, false, true, undefined],
    ]);
  });

  it('the hedge clock starts when a request is sent, not while it queues for a slot', async () => {
    const f = await fake({ latencyMs: 50 });
    // One request at a time: the last of 14 sent together queues for about 650 ms, past the hedge delay
    // (8 × the 50 ms median), though none of them is slow once sent.
    const { ep, attempts } = await endpoint([f], {
      concurrency: 1,
      hedge: { minSamples: 5, minDelayMs: 20, medianFactor: 8 },
    });
    for (let i = 0; i < 6; i++) await ep.chat(hello(i));
    attempts.length = 0;
    await Promise.all(Array.from({ length: 14 }, (_, i) => ep.chat(hello(10 + i))));
    expect(attempts).toHaveLength(14);
    expect(attempts.filter((a) => a.hedge || !a.ok)).toEqual([]);
  });

  it('metadata calls and cold paths are never hedged', async () => {
    const f = await fake();
    const { ep, attempts } = await endpoint([f], { hedge: { minSamples: 5, minDelayMs: 20 } });
    f.faults.push({ kind: 'stall', ms: 300 });
    await ep.chat(hello(1)); // no latency history yet: no hedge, the stall is a failed attempt, retried
    expect(attempts.filter((a) => a.hedge)).toEqual([]);
    expect(attempts[0]).toMatchObject({ ok: false, failure: { kind: 'connection' } });
  });
});

describe('streams', () => {
  it('a stream ending in an error event is retried with the same seed; only the complete reply counts', async () => {
    const f = await fake({ faults: [{ kind: 'sse_error' }, { kind: 'sse_error' }] });
    const { ep, attempts } = await endpoint([f], { stream: true });
    const [reply] = await ep.chat(hello(7));
    expect(reply?.text).toBe('Reply to: hello 7 (sample 0)');
    expect(attempts.map((a) => [a.ok, a.failure?.kind])).toEqual([
      [false, 'stream_error'],
      [false, 'stream_error'],
      [true, undefined],
    ]);
    const bodies = f.requests.filter((r) => r.path === '/v1/chat/completions').map((r) => r.body);
    expect(bodies).toHaveLength(3);
    expect(new Set(bodies.map((b) => b.seed))).toEqual(new Set([1007]));
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    expect(new Set(attempts.map((a) => a.requestHash)).size).toBe(1);
  });
});

describe('replica failover (vllm:URL1,URL2,URL3#model)', () => {
  it('a replica killed mid-run is taken out, probed back in when it returns, and every attempt is recorded', async () => {
    const replicas = [
      await fake({ latencyMs: 5 }),
      await fake({ latencyMs: 5 }),
      await fake({ latencyMs: 5 }),
    ];
    const { ep, attempts } = await endpoint(replicas, { concurrency: 6 });
    const port = Number(new URL(replicas[1]!.url).port);
    const first = await Promise.all(Array.from({ length: 30 }, (_, i) => ep.chat(hello(i))));
    expect(first).toHaveLength(30);
    expect(replicas[1]!.stats.generations).toBeGreaterThan(0);
    await replicas[1]!.close(); // dies mid-audit
    const during = await Promise.all(Array.from({ length: 60 }, (_, i) => ep.chat(hello(100 + i))));
    expect(during.every((r) => r[0]?.text.startsWith('Reply to: hello'))).toBe(true);
    const health = ep.transport.replicaSet.health();
    expect(health[1]!.opened).toBeGreaterThanOrEqual(1);
    const failedOnDead = attempts.filter((a) => a.replica === 1 && !a.ok);
    expect(failedOnDead.length).toBeGreaterThan(0);
    expect(failedOnDead.length).toBeLessThan(15); // taken out quickly, not tried for every request
    // It comes back on the same port: the half-open probe lets it in again.
    const back = await fake({ latencyMs: 5, port });
    await new Promise((r) => setTimeout(r, 1100));
    await Promise.all(Array.from({ length: 60 }, (_, i) => ep.chat(hello(300 + i))));
    expect(back.stats.generations).toBeGreaterThan(0);
    expect(ep.transport.replicaSet.health()[1]!.state).toBe('closed');
    // Every attempt is in the record: oks equal the requests, failures are there too, with their replica.
    expect(attempts.filter((a) => a.ok).length).toBe(150);
    expect(attempts.every((a) => a.replica !== undefined)).toBe(true);
  });

  it('a replica that turns flaky is taken out while its peers are healthy', async () => {
    const replicas = [await fake(), await fake(), await fake()];
    const { ep, attempts } = await endpoint(replicas, { concurrency: 6 });
    await Promise.all(Array.from({ length: 30 }, (_, i) => ep.chat(hello(i))));
    // Replica 2 now answers 502 to most requests.
    replicas[2]!.faults.push(
      ...Array.from({ length: 200 }, () => ({ kind: 'status' as const, status: 502 as const })),
    );
    const replies = await Promise.all(Array.from({ length: 120 }, (_, i) => ep.chat(hello(100 + i))));
    expect(replies).toHaveLength(120);
    expect(ep.transport.replicaSet.health()[2]!.opened).toBeGreaterThanOrEqual(1);
    const late = attempts.slice(-120);
    expect(late.filter((a) => a.replica === 2).length).toBeLessThan(30);
  });
});
