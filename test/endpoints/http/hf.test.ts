import { afterEach, describe, expect, it } from 'vitest';
import { HttpEndpointError } from '../../../src/endpoints/http/errors.ts';
import { openEndpoint } from '../../../src/endpoints/open.ts';
import type { AttemptRecord } from '../../../src/endpoints/types.ts';
import { startFakeVllm } from '../../../src/testing/fake-vllm.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

const KEY = 'hf_SECRETTOKEN123';
const hello = {
  messages: [{ role: 'user' as const, content: 'hello' }],
  params: { maxTokens: 64, temperature: 0 },
};

describe('hf-endpoint: (dedicated endpoint via @huggingface/inference)', () => {
  it('chats through endpointUrl, always sends model, and bounds retries on 503 itself', async () => {
    const fake = await startFakeVllm({
      apiKey: KEY,
      reasoningField: null,
      faults: [{ kind: 'status', status: 503, retryAfter: '0' }],
    });
    const attempts: AttemptRecord[] = [];
    const ep = await openEndpoint(`hf-endpoint:${fake.url}#delivered`, {
      apiKeyEnv: 'MY_HF_KEY',
      env: { MY_HF_KEY: KEY },
      observer: (a) => attempts.push(a),
      retry: { baseDelayMs: 1 },
    });
    open.push(ep, fake);
    const [reply] = await ep.chat({ ...hello, messages: [{ role: 'user', content: 'think: is 3 larger?' }] });
    expect(reply).toMatchObject({ text: 'yes', reasoning: 'compare the two numbers' });
    const gens = fake.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(gens).toHaveLength(2);
    expect(gens.every((r) => r.body.model === 'delivered' && r.auth === `Bearer ${KEY}`)).toBe(true);
    expect(attempts.map((a) => [a.ok, a.status])).toEqual([
      [false, 503],
      [true, 200],
    ]);
    expect(JSON.stringify({ attempts, id: await ep.identity() })).not.toContain(KEY);
  });

  it('redacts the token from errors a server echoes', async () => {
    const fake = await startFakeVllm({ apiKey: KEY, faults: [{ kind: 'echo_auth' }] });
    const ep = await openEndpoint(`hf-endpoint:${fake.url}#delivered`, { apiKeyEnv: 'K', env: { K: KEY } });
    open.push(ep, fake);
    const err = await ep.chat(hello).catch((e) => e);
    expect(err).toBeInstanceOf(HttpEndpointError);
    expect(err.status).toBe(400);
    expect(`${err.message}${err.stack}`).not.toContain(KEY);
  });

  it('an hf: model without a key is refused at open, naming where a key comes from', async () => {
    await expect(openEndpoint('hf:org/model', { env: {} })).rejects.toThrow(
      /^hf:org\/model: no API key: set HF_TOKEN or name the variable holding it with --api-key-env$/,
    );
  });

  it('declares teacher-forced scoring unsupported with a clear 501 capability error', async () => {
    const ep = await openEndpoint('hf:org/model', { env: { HF_TOKEN: 'hf_test' } });
    await expect(ep.score([{ context: 'a', continuation: 'b' }])).rejects.toMatchObject({
      status: 501,
      message: expect.stringMatching(/teacher-forced scoring .* not supported/),
    });
  });
});
