import { afterEach, describe, expect, it } from 'vitest';
import { HttpEndpointError } from '../../../src/endpoints/http/errors.ts';
import { VllmEndpoint, type VllmOptions } from '../../../src/endpoints/http/vllm.ts';
import type { AttemptRecord, ChatRequest } from '../../../src/endpoints/types.ts';
import { type FakeVllmOptions, type Fault, startFakeVllm } from '../../../src/testing/fake-vllm.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function setup(faults: Fault[], server: FakeVllmOptions = {}, client: Partial<VllmOptions> = {}) {
  const fake = await startFakeVllm({ ...server, faults });
  const attempts: AttemptRecord[] = [];
  const sleeps: number[] = [];
  const ep = new VllmEndpoint({
    urls: [fake.url],
    model: 'delivered',
    ref: `vllm:${fake.url}#delivered`,
    observer: (a) => attempts.push(a),
    retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 4 },
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    fingerprint: false,
    ...client,
  });
  open.push(ep, fake);
  await ep.capabilities(); // detection first, so attempts below are the generation's only
  attempts.length = 0;
  return { fake, ep, attempts, sleeps };
}

const hello: ChatRequest = {
  messages: [{ role: 'user', content: 'hello' }],
  params: { maxTokens: 64, temperature: 0 },
};

describe('faults: retried failures are recorded, never returned as replies', () => {
  it('503 with Retry-After seconds: waits as told, records the failed attempt, then completes', async () => {
    const { ep, attempts, sleeps } = await setup([{ kind: 'status', status: 503, retryAfter: '2' }]);
    const [reply] = await ep.chat(hello);
    expect(reply?.text).toBe('Reply to: hello');
    expect(attempts.map((a) => [a.attempt, a.ok, a.status, a.failure?.kind])).toEqual([
      [1, false, 503, 'server_error'],
      [2, true, 200, undefined],
    ]);
    expect(sleeps[0]).toBeGreaterThanOrEqual(2000);
    expect(sleeps[0]).toBeLessThanOrEqual(2200);
    expect(attempts[0]?.requestHash).toBe(attempts[1]?.requestHash);
  });

  it('429 with an HTTP-date Retry-After is honoured as a floor', async () => {
    const when = new Date(Date.now() + 3000).toUTCString();
    const { ep, attempts, sleeps } = await setup([{ kind: 'status', status: 429, retryAfter: when }]);
    await ep.chat(hello);
    expect(attempts[0]?.failure?.kind).toBe('rate_limited');
    expect(sleeps[0]).toBeGreaterThan(1000);
  });

  it('a Retry-After beyond the bound ends retries with the failure', async () => {
    const { ep, attempts } = await setup([{ kind: 'status', status: 503, retryAfter: '3600' }]);
    const err = await ep.chat(hello).catch((e) => e);
    expect(err).toMatchObject({ kind: 'server_error', status: 503, attempts: 1 });
    expect(attempts).toHaveLength(1);
  });

  it('mid-body connection reset is a connection failure and is retried', async () => {
    const { ep, attempts } = await setup([{ kind: 'reset' }]);
    const [reply] = await ep.chat(hello);
    expect(reply?.text).toBe('Reply to: hello');
    expect(attempts[0]).toMatchObject({ ok: false, failure: { kind: 'connection' } });
    expect(attempts[1]?.ok).toBe(true);
  });

  it('gives up after the bounded attempts and throws with kind, status and count', async () => {
    const five = Array.from({ length: 5 }, () => ({ kind: 'status', status: 502 }) as Fault);
    const { ep, attempts, sleeps } = await setup(five);
    const err = await ep.chat(hello).catch((e) => e);
    expect(err).toBeInstanceOf(HttpEndpointError);
    expect(err).toMatchObject({ kind: 'server_error', status: 502, attempts: 4 });
    expect(attempts.map((a) => a.ok)).toEqual([false, false, false, false]);
    expect(sleeps).toHaveLength(3);
    for (const [i, ms] of sleeps.entries()) expect(ms).toBeLessThanOrEqual(Math.min(4, 2 ** i));
  });

  it('a stall past the headers timeout fails as timeout and is not retried', async () => {
    const { ep, attempts } = await setup([{ kind: 'stall', ms: 2000 }], {}, { timeouts: { headersMs: 150 } });
    const err = await ep.chat(hello).catch((e) => e);
    expect(err).toMatchObject({ kind: 'timeout', attempts: 1 });
    expect(attempts).toHaveLength(1);
    expect(attempts[0]?.failure?.message).toMatch(/HEADERS_TIMEOUT/);
  });

  it('SSE: a 200 stream carrying an error event is a failure, then the retry succeeds', async () => {
    const { ep, attempts } = await setup([{ kind: 'sse_error' }], {}, { stream: true });
    const [reply] = await ep.chat(hello);
    expect(reply?.text).toBe('Reply to: hello');
    expect(attempts[0]).toMatchObject({ ok: false, status: 500, failure: { kind: 'stream_error' } });
    expect(attempts[0]?.failure?.message).toMatch(/engine died mid-stream/);
  });

  it('SSE: aggregates streamed reasoning, content and usage', async () => {
    const { ep } = await setup([], {}, { stream: true });
    const [reply] = await ep.chat({ ...hello, messages: [{ role: 'user', content: 'think: 3 > 2?' }] });
    expect(reply).toMatchObject({ text: 'yes', reasoning: 'compare the two numbers', finishReason: 'stop' });
    expect(reply?.usage.completionTokens).toBeGreaterThan(0);
  });

  it('context-length 400 is reported once with the parsed limit (caller decides)', async () => {
    const { ep, attempts } = await setup([{ kind: 'context' }]);
    const err = await ep.chat(hello).catch((e) => e);
    expect(err).toMatchObject({ kind: 'context_length', maxContextLength: 512, attempts: 1 });
    expect(attempts).toHaveLength(1);
  });

  it('a 200 whose body is not a completion is invalid_response, not a reply, and not retried', async () => {
    const { ep, attempts } = await setup([{ kind: 'garbage' }]);
    const err = await ep.chat(hello).catch((e) => e);
    expect(err).toBeInstanceOf(HttpEndpointError);
    expect(err).toMatchObject({ kind: 'invalid_response', attempts: 1 });
    expect(err.message).toMatch(/choices/);
    expect(attempts).toEqual([expect.objectContaining({ ok: false, status: 200 })]);
  });
});

describe('API keys never leak', () => {
  const KEY = 'sk-live-SECRET-4242';
  it('is sent as a bearer token but redacted from errors, attempts and identity', async () => {
    const { ep, attempts, fake } = await setup([{ kind: 'echo_auth' }], { apiKey: KEY }, { apiKey: KEY });
    const err = await ep.chat(hello).catch((e) => e);
    expect(err).toBeInstanceOf(HttpEndpointError);
    expect(err.message).toContain('[redacted]');
    expect(fake.requests.at(-1)?.auth).toBe(`Bearer ${KEY}`);
    const id = await ep.identity();
    const everything = JSON.stringify({ message: err.message, stack: err.stack, attempts, id, ref: ep.ref });
    expect(everything).not.toContain(KEY);
  });

  it('a wrong key is a 401 http failure without retries', async () => {
    const { ep, attempts } = await setup([], { apiKey: KEY }, { apiKey: 'wrong-key' });
    await expect(ep.chat(hello)).rejects.toMatchObject({ kind: 'http', status: 401 });
    expect(attempts).toHaveLength(1);
  });
});
