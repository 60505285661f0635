import { afterEach, describe, expect, it } from 'vitest';
import { HttpEndpointError } from '../../../src/endpoints/http/errors.ts';
import { VllmEndpoint } from '../../../src/endpoints/http/vllm.ts';
import type { AttemptRecord, ChatRequest } from '../../../src/endpoints/types.ts';
import { type FakeVllm, type FakeVllmOptions, startFakeVllm } from '../../../src/testing/fake-vllm.ts';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function setup(
  server: FakeVllmOptions = {},
  client: Partial<ConstructorParameters<typeof VllmEndpoint>[0]> = {},
) {
  const fake = await startFakeVllm(server);
  const attempts: AttemptRecord[] = [];
  const ep = new VllmEndpoint({
    urls: [fake.url],
    model: 'delivered',
    ref: `vllm:${fake.url}#delivered`,
    observer: (a) => attempts.push(a),
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    fingerprint: false,
    ...client,
  });
  open.push(ep, fake);
  return { fake, ep, attempts };
}

const hello: ChatRequest = {
  messages: [{ role: 'user', content: 'hello' }],
  params: { maxTokens: 64, temperature: 0 },
};
const lastGen = (fake: FakeVllm) =>
  fake.requests.filter((r) => r.path.startsWith('/v1/') && r.method === 'POST').at(-1)!;

describe('vLLM client: replies', () => {
  it('chats, ignores extra fields, and reports one ok attempt per request', async () => {
    const { ep, attempts } = await setup();
    const [reply] = await ep.chat(hello);
    expect(reply?.text).toBe('Reply to: hello');
    expect(reply?.finishReason).toBe('stop');
    expect(reply?.usage.completionTokens).toBe('Reply to: hello'.length);
    const gen = attempts.filter((a) => a.ok && a.status === 200);
    expect(gen.length).toBeGreaterThanOrEqual(1);
    expect(attempts.every((a) => a.endpoint.startsWith('vllm:http://127.0.0.1'))).toBe(true);
  });

  it('returns n samples in index order and marks truncation as length', async () => {
    const { ep } = await setup();
    const out = await ep.chat({ ...hello, params: { maxTokens: 5, temperature: 1, n: 3 } });
    expect(out).toHaveLength(3);
    expect(out.every((c) => c.finishReason === 'length' && c.text === 'Reply')).toBe(true);
  });

  it.each([
    ['reasoning', 'reasoning' as const],
    ['reasoning_content', 'reasoning_content' as const],
    ['inline <think>', null],
  ])('separates reasoning given as %s', async (_label, field) => {
    const { ep } = await setup({ reasoningField: field });
    const [reply] = await ep.chat({
      ...hello,
      messages: [{ role: 'user', content: 'Is 17 larger than 9?' }],
    });
    expect(reply?.reasoning).toBe('compare the two numbers');
    expect(reply?.text).toBe('yes');
  });

  it('reads chat logprobs and keeps -9999.0 clamps at the documented floor', async () => {
    const { ep } = await setup();
    const [reply] = await ep.chat({
      messages: [{ role: 'user', content: 'Z' }],
      params: { maxTokens: 64, temperature: 0, logprobs: 2 },
    });
    const z = reply?.logprobs?.find((t) => t.token === 'Z');
    expect(z?.logprob).toBe(-9999);
    expect(z?.top).toHaveLength(2);
    expect(reply?.logprobs?.every((t) => Number.isFinite(t.logprob))).toBe(true);
  });

  it('completes raw prompts with logprobs', async () => {
    const { ep } = await setup();
    const [c] = await ep.complete({ prompt: 'abc', params: { maxTokens: 64, temperature: 0, logprobs: 0 } });
    expect(c?.text).toBe('Reply to: abc');
    expect(c?.logprobs?.length).toBe('Reply to: abc'.length);
  });
});

describe('vLLM client: version detection', () => {
  const schemaReq: ChatRequest = {
    ...hello,
    structuredOutput: {
      name: 'verdict',
      schema: { type: 'object', properties: { ok: { type: 'boolean' } } },
    },
  };
  it.each([
    ['0.12.1', 'structured_outputs'],
    ['0.11.0', 'response_format'],
    ['0.5.4', 'guided_json'],
    [null, 'response_format'],
  ])('server %s gets %s and only that field', async (version, field) => {
    const { fake, ep } = await setup({
      version,
      structured: ['structured_outputs', 'response_format', 'guided_json'],
    });
    const [reply] = await ep.chat(schemaReq);
    expect(JSON.parse(reply!.text)).toEqual({ ok: true });
    const body = lastGen(fake).body;
    const sent = ['structured_outputs', 'response_format', 'guided_json'].filter((f) => f in body);
    expect(sent).toEqual([field]);
  });

  it('never relies on guided_json with a ≥0.12 server that silently ignores it', async () => {
    const { ep } = await setup({ version: '0.13.0', structured: ['structured_outputs'] });
    const [reply] = await ep.chat(schemaReq);
    expect(JSON.parse(reply!.text)).toEqual({ ok: true });
  });

  it.each([
    ['0.9.2', 'flat'],
    ['0.11.0', 'nested'],
  ])('reads %s error bodies (%s)', async (version, _shape) => {
    const { ep, attempts } = await setup({ version });
    const err = await ep.chat({ ...hello, params: { maxTokens: 600, temperature: 0 } }).catch((e) => e);
    expect(err).toBeInstanceOf(HttpEndpointError);
    expect(err.kind).toBe('context_length');
    expect(err.maxContextLength).toBe(512);
    // The message comes out of the parsed body, not a dump of the raw JSON.
    expect(err.message).toMatch(/^HTTP 400: This model's maximum context length is 512 tokens/);
    expect(attempts.filter((a) => !a.ok)).toHaveLength(1); // a 400 is not retried
  });
});

describe('vLLM client: score (teacher forcing)', () => {
  it('scores exactly the continuation tokens via prompt_logprobs keyed by token id', async () => {
    const { fake, ep } = await setup();
    const [r] = await ep.score([{ context: [{ role: 'user', content: 'hi' }], continuation: 'aZ' }]);
    // byte tokens: 'a' = 97 → -((97 % 7) + 1) / 4 = -1.75; 'Z' is clamped.
    expect(r?.tokens).toEqual([
      { token: 'a', logprob: -1.75 },
      { token: 'Z', logprob: -9999 },
    ]);
    expect(r?.total).toBe(-1.75 - 9999);
    const req = lastGen(fake).body;
    expect(req).toMatchObject({ max_tokens: 1, prompt_logprobs: 0 });
    // <|endoftext|><|user|>hi<|end|><|assistant|> then the continuation bytes.
    expect(req.prompt).toEqual([256, 258, 104, 105, 260, 259, 97, 90]);
  });

  it('tokenizes a context once for the replies scored under it, with the same scores', async () => {
    const { fake, ep } = await setup();
    const context = [{ role: 'user' as const, content: 'hi' }];
    const [a, b] = await ep.score([
      { context, continuation: 'aZ' },
      { context, continuation: 'b' },
    ]);
    const { ep: fresh } = await setup();
    const [alone] = await fresh.score([{ context, continuation: 'b' }]);
    expect(b).toEqual(alone);
    expect(a?.tokens.map((t) => t.token)).toEqual(['a', 'Z']);
    const contexts = fake.requests.filter((r) => r.path === '/tokenize' && 'messages' in r.body);
    expect(contexts).toHaveLength(1);
    // Continuations differ, so each is its own request.
    expect(fake.requests.filter((r) => r.path === '/tokenize' && 'prompt' in r.body)).toHaveLength(2);
  });

  it('scores against a raw-text context', async () => {
    const { ep } = await setup();
    const [r] = await ep.score([{ context: 'ab', continuation: 'c' }]);
    expect(r?.tokens.map((t) => t.token)).toEqual(['c']);
  });

  it('fails (no fake score) when the server rejects prompt_logprobs', async () => {
    const { ep } = await setup({ noPromptLogprobs: true });
    await expect(ep.score([{ context: 'ab', continuation: 'c' }])).rejects.toMatchObject({
      kind: 'http',
      status: 400,
    });
  });
});

describe('vLLM client: identity', () => {
  it('reports model, root, parent, max_model_len, version and a stable fingerprint', async () => {
    const { ep } = await setup(
      { models: [{ id: 'delivered', root: '/ckpt/lora', parent: 'base', max_model_len: 512 }] },
      { fingerprint: true },
    );
    const id = await ep.identity();
    expect(id).toMatchObject({
      kind: 'vllm',
      modelId: 'delivered',
      root: '/ckpt/lora',
      parent: 'base',
      maxModelLen: 512,
      serverVersion: '0.12.0',
    });
    expect(id.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names the served models when ours is missing', async () => {
    const { ep } = await setup({ models: [{ id: 'other' }] });
    await expect(ep.identity()).rejects.toThrow(/"delivered" is not served \(served: other\)/);
  });
});
