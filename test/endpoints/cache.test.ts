import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { withCache } from '../../src/endpoints/cache.ts';
import { VllmEndpoint } from '../../src/endpoints/http/vllm.ts';
import type { ChatRequest } from '../../src/endpoints/types.ts';
import { type FakeVllmOptions, startFakeVllm } from '../../src/testing/fake-vllm.ts';

const dir = mkdtempSync(join(tmpdir(), 'probate-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function cached(server: FakeVllmOptions, cacheDir: string) {
  const fake = await startFakeVllm(server);
  const inner = new VllmEndpoint({
    urls: [fake.url],
    model: 'delivered',
    ref: 'vllm:x#delivered',
    retry: { maxAttempts: 1 },
  });
  const ep = withCache(inner, cacheDir);
  open.push(ep, fake);
  const generations = () => fake.stats.generations;
  return { fake, ep, generations };
}

const req: ChatRequest = {
  messages: [{ role: 'user', content: 'cache me' }],
  params: { maxTokens: 64, temperature: 1, n: 2, seed: 7 },
};

describe('response cache', () => {
  it('serves a repeated request from disk with cached: true, across reopen', async () => {
    const cacheDir = join(dir, 'a');
    const first = await cached({}, cacheDir);
    const fresh = await first.ep.chat(req);
    expect(fresh.map((c) => c.cached)).toEqual([undefined, undefined]);
    const afterFresh = first.generations();
    const again = await first.ep.chat(req);
    expect(first.generations()).toBe(afterFresh);
    expect(again.map((c) => c.cached)).toEqual([true, true]);
    expect(again.map((c) => c.text)).toEqual(fresh.map((c) => c.text));
    await first.ep.close();

    const second = await cached({}, cacheDir); // same identity (version, models, fingerprint)
    const hit = await second.ep.chat(req);
    expect(hit.every((c) => c.cached === true)).toBe(true);
    // Only the 3 fingerprint prompts reached the new server, not the cached request.
    expect(second.generations()).toBe(3);
    const other = await second.ep.chat({ ...req, params: { ...req.params, seed: 8 } });
    expect(other.every((c) => c.cached === undefined)).toBe(true);
  });

  it('keys by endpoint identity: a different server version never hits', async () => {
    const cacheDir = join(dir, 'b');
    const a = await cached({ version: '0.12.0' }, cacheDir);
    await a.ep.chat(req);
    const b = await cached({ version: '0.13.0' }, cacheDir);
    const out = await b.ep.chat(req);
    expect(out.every((c) => c.cached === undefined)).toBe(true);
  });

  it('never stores failures', async () => {
    const cacheDir = join(dir, 'c');
    const { ep, fake } = await cached({}, cacheDir);
    await ep.identity();
    fake.faults.push({ kind: 'status', status: 500 });
    await expect(ep.chat(req)).rejects.toMatchObject({ kind: 'server_error' });
    const ok = await ep.chat(req);
    expect(ok.every((c) => c.cached === undefined)).toBe(true);
  });

  it('caches scores per request and only asks for the misses', async () => {
    const cacheDir = join(dir, 'd');
    const { ep, fake } = await cached({}, cacheDir);
    const s1 = await ep.score([{ context: 'ab', continuation: 'c' }]);
    const scoresBefore = fake.requests.filter((r) => Array.isArray(r.body.prompt)).length;
    const s2 = await ep.score([
      { context: 'ab', continuation: 'c' },
      { context: 'ab', continuation: 'd' },
    ]);
    expect(s2[0]).toEqual(s1[0]);
    expect(s2[1]?.tokens.map((t) => t.token)).toEqual(['d']);
    expect(fake.requests.filter((r) => Array.isArray(r.body.prompt)).length).toBe(scoresBefore + 1);
  });
});
