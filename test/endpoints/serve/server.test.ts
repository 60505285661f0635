import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseVersion } from '../../../src/endpoints/http/capabilities.ts';
import { splitReasoning } from '../../../src/endpoints/http/reasoning.ts';
import { type RunningServer, startServer } from '../../../src/endpoints/serve/index.ts';
import { MODEL_DIR } from '../local/model.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are explored loosely in assertions.
type Body = any;

let server: RunningServer;

beforeAll(async () => {
  server = await startServer({
    models: [{ dir: MODEL_DIR, name: 'base' }, { dir: MODEL_DIR }],
    port: 0,
    threads: 1,
    reasoningParser: 'think',
    apiKey: 'test-key',
  });
});
afterAll(async () => {
  await server?.close();
});

const auth = { authorization: 'Bearer test-key', 'content-type': 'application/json' };

async function call(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = auth,
) {
  const res = await request(`${server.url}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  return { status: res.statusCode, text, json: () => JSON.parse(text) as Body };
}

const post = (path: string, body: unknown) => call('POST', path, body);
const chat = (extra: Record<string, unknown>) =>
  post('/v1/chat/completions', {
    model: 'base',
    messages: [{ role: 'user', content: 'How do I boil an egg?' }],
    ...extra,
  });

/** Reads an SSE body into its JSON events; checks it ends with [DONE]. */
function events(text: string): Body[] {
  const data = text
    .split('\n\n')
    .filter(Boolean)
    .map((e) => e.replace(/^data: /, ''));
  expect(data.at(-1)).toBe('[DONE]');
  return data.slice(0, -1).map((d) => JSON.parse(d) as Body);
}

describe('probate serve: discovery and plumbing', () => {
  it('lists every served model with root, parent and max_model_len', async () => {
    const models = (await call('GET', '/v1/models')).json();
    expect(models.object).toBe('list');
    expect(models.data.map((m: { id: string }) => m.id)).toEqual(['base', MODEL_DIR]);
    for (const m of models.data)
      expect(m).toMatchObject({ object: 'model', owned_by: 'vllm', parent: null, max_model_len: 512 });
    expect(models.data[0].root).toMatch(/\/.+/);
  });

  it('answers /health, /version (a current vLLM version) and /metrics', async () => {
    expect(await call('GET', '/health', undefined, {})).toMatchObject({ status: 200, text: '' });
    const version = (await call('GET', '/version', undefined, {})).json().version as string;
    const [major, minor] = parseVersion(version)!;
    expect(major * 100 + minor).toBeGreaterThanOrEqual(12);
    await chat({ max_tokens: 4 });
    const metrics = (await call('GET', '/metrics', undefined, {})).text;
    for (const name of [
      'prompt_tokens_total',
      'generation_tokens_total',
      'request_success_total',
      'num_requests_running',
      'e2e_request_latency_seconds_count',
    ]) {
      expect(metrics).toMatch(
        new RegExp(
          `^vllm:${name}\\{model_name="base"[^}]*\\} [1-9]|^vllm:${name}\\{model_name="base"\\} 0`,
          'm',
        ),
      );
    }
    expect(metrics).toMatch(/^vllm:generation_tokens_total\{model_name="base"\} [1-9]/m);
  });

  it("enforces the API key on /v1/* only, with vLLM's 401 body", async () => {
    const res = await call('GET', '/v1/models', undefined, {});
    expect(res.status).toBe(401);
    expect(res.json()).toEqual({ error: 'Unauthorized' });
  });

  it('tokenizes and detokenizes prompts and chats', async () => {
    const tok = (await post('/tokenize', { model: 'base', prompt: 'hi 👋', return_token_strs: true })).json();
    expect(tok).toMatchObject({ count: tok.tokens.length, max_model_len: 512 });
    expect((await post('/detokenize', { model: 'base', tokens: tok.tokens })).json().prompt).toBe('hi 👋');
    const chatTok = (
      await post('/tokenize', { model: 'base', messages: [{ role: 'user', content: 'hi' }] })
    ).json();
    const rendered = (await post('/detokenize', { model: 'base', tokens: chatTok.tokens })).json().prompt;
    expect(rendered).toBe('<|endoftext|><|user|>hi<|end|><|assistant|>');
  });
});

describe('probate serve: errors in the nested shape', () => {
  const expectError = (res: { status: number; json(): Body }, status: number, param: string | null) => {
    expect(res.status).toBe(status);
    const body = res.json();
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error).toMatchObject({ param, code: status });
    expect(typeof body.error.message).toBe('string');
    expect(typeof body.error.type).toBe('string');
  };

  it('404s an unknown model on param "model"', async () => {
    expectError(
      await post('/v1/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
      404,
      'model',
    );
  });

  it('400s invalid bodies, naming the field', async () => {
    expectError(await chat({ temperature: 'hot' }), 400, 'temperature');
    expectError(await chat({ top_logprobs: 2 }), 400, 'top_logprobs');
    expectError(await chat({ continue_final_message: true }), 400, 'continue_final_message');
    expectError(await post('/v1/completions', { model: 'base', prompt: 'x', logprobs: 21 }), 400, 'logprobs');
    expectError(
      await post('/v1/completions', { model: 'base', prompt: 'x', prompt_logprobs: 1, stream: true }),
      400,
      'prompt_logprobs',
    );
  });

  it('400s a prompt beyond the context with the maximum length in the message', async () => {
    const res = await post('/v1/completions', { model: 'base', prompt: 'a'.repeat(600), max_tokens: 4 });
    expectError(res, 400, 'max_tokens');
    expect(res.json().error.message).toMatch(/maximum context length is 512/);
  });
});

describe('probate serve: /v1/completions', () => {
  it('serves a batch of prompts with n samples, logprobs and usage', async () => {
    const res = (
      await post('/v1/completions', {
        model: 'base',
        prompt: ['Hello', 'The weather'],
        n: 2,
        max_tokens: 6,
        temperature: 1,
        seed: 3,
        logprobs: 2,
      })
    ).json();
    expect(res.object).toBe('text_completion');
    expect(res.choices.map((c: { index: number }) => c.index)).toEqual([0, 1, 2, 3]);
    for (const c of res.choices) {
      const lp = c.logprobs;
      expect(lp.tokens.length).toBe(lp.token_logprobs.length);
      expect(lp.text_offset.length).toBe(lp.tokens.length);
      for (const top of lp.top_logprobs as Record<string, number>[]) {
        expect(Object.keys(top).length).toBeLessThanOrEqual(3);
      }
    }
    expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens + res.usage.completion_tokens);
    const again = (
      await post('/v1/completions', {
        model: 'base',
        prompt: ['Hello', 'The weather'],
        n: 2,
        max_tokens: 6,
        temperature: 1,
        seed: 3,
      })
    ).json();
    expect(again.choices.map((c: { text: string }) => c.text)).toEqual(
      res.choices.map((c: { text: string }) => c.text),
    );
  });

  it('defaults max_tokens to 16, echoes the prompt, and returns prompt_logprobs keyed by token id', async () => {
    const res = (
      await post('/v1/completions', {
        model: 'base',
        prompt: 'Hello there',
        temperature: 0,
        echo: true,
        logprobs: 1,
        prompt_logprobs: 2,
      })
    ).json();
    const c = res.choices[0];
    expect(res.usage.completion_tokens).toBeLessThanOrEqual(16);
    expect(c.text.startsWith('Hello there')).toBe(true);
    expect(c.logprobs.token_logprobs[0]).toBeNull();
    const ids = (await post('/tokenize', { model: 'base', prompt: 'Hello there' })).json().tokens as number[];
    expect(c.prompt_logprobs).toHaveLength(ids.length);
    expect(c.prompt_logprobs[0]).toBeNull();
    ids.slice(1).forEach((id, i) => {
      const entry = c.prompt_logprobs[i + 1][String(id)];
      expect(entry).toMatchObject({ rank: expect.any(Number), decoded_token: expect.any(String) });
      expect(entry.logprob).toBeCloseTo(c.logprobs.token_logprobs[i + 1], 9);
    });
  });

  it('streams the same text as a plain request', async () => {
    const body = { model: 'base', prompt: 'Once upon a time', max_tokens: 24, temperature: 0 };
    const plain = (await post('/v1/completions', body)).json().choices[0].text;
    const stream = events((await post('/v1/completions', { ...body, stream: true })).text);
    expect(stream.map((e) => e.choices[0].text).join('')).toBe(plain);
    expect(stream.at(-1)!.choices[0].finish_reason).toMatch(/stop|length/);
  });
});

describe('probate serve: /v1/chat/completions', () => {
  it('returns logprobs with top_logprobs and bytes, and splits reasoning like the client does', async () => {
    const raw = (
      await post('/v1/completions', {
        model: 'base',
        prompt: '<|endoftext|><|user|>How do I boil an egg?<|end|><|assistant|>',
        max_tokens: 40,
        temperature: 0,
      })
    ).json();
    const res = (
      await chat({ max_completion_tokens: 40, temperature: 0, logprobs: true, top_logprobs: 2 })
    ).json();
    const choice = res.choices[0];
    const parts = splitReasoning(raw.choices[0].text);
    expect(choice.message.content).toBe(parts.text);
    expect(choice.message.reasoning).toBe(parts.reasoning ?? null);
    for (const t of choice.logprobs.content) {
      expect(t.top_logprobs).toHaveLength(2);
      expect(Array.isArray(t.bytes)).toBe(true);
    }
  });

  it('continues a prefilled assistant turn and passes chat_template_kwargs', async () => {
    const messages = [
      { role: 'user', content: 'How do I boil an egg?' },
      { role: 'assistant', content: 'First, ' },
    ];
    const res = await post('/v1/chat/completions', {
      model: 'base',
      messages,
      max_tokens: 12,
      temperature: 0,
      add_generation_prompt: false,
      continue_final_message: true,
      chat_template_kwargs: { enable_thinking: false },
    });
    expect(res.status).toBe(200);
    const raw = (
      await post('/v1/completions', {
        model: 'base',
        prompt: '<|endoftext|><|user|>How do I boil an egg?<|end|><|assistant|>First, ',
        max_tokens: 12,
        temperature: 0,
      })
    ).json();
    expect(res.json().choices[0].message.content).toBe(splitReasoning(raw.choices[0].text).text);
  });

  it('enforces response_format json_schema and structured_outputs choice', async () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    const res = (
      await chat({
        max_tokens: 20,
        temperature: 0,
        response_format: { type: 'json_schema', json_schema: { name: 'v', schema } },
      })
    ).json();
    expect(typeof JSON.parse(res.choices[0].message.content).ok).toBe('boolean');
    const pick = (
      await chat({
        max_tokens: 20,
        temperature: 0.8,
        seed: 1,
        structured_outputs: { choice: ['alpha', 'beta'] },
      })
    ).json();
    expect(['alpha', 'beta']).toContain(pick.choices[0].message.content);
  });

  it('streams SSE chunks that add up to the plain reply, then usage and [DONE]', async () => {
    const plain = (await chat({ max_tokens: 40, temperature: 0 })).json().choices[0].message;
    const stream = events(
      (await chat({ max_tokens: 40, temperature: 0, stream: true, stream_options: { include_usage: true } }))
        .text,
    );
    expect(stream[0]!.choices[0].delta.role).toBe('assistant');
    const deltas = stream.flatMap((e) => e.choices.map((c: { delta: Record<string, string> }) => c.delta));
    expect(deltas.map((d) => d.content ?? '').join('')).toBe(plain.content);
    expect(deltas.map((d) => d.reasoning ?? '').join('')).toBe(plain.reasoning ?? '');
    expect(stream.at(-1)!.usage.completion_tokens).toBeGreaterThan(0);
  });

  it('batches concurrent requests to the same greedy replies as sequential ones', async () => {
    const prompts = ['Hi', 'What is 3 plus 4?', 'Which phone should I pick: Orba or Zentrix?'];
    const body = (content: string) => ({
      model: 'base',
      messages: [{ role: 'user', content }],
      max_tokens: 30,
      temperature: 0,
    });
    const together = await Promise.all(prompts.map((p) => post('/v1/chat/completions', body(p))));
    for (const [i, p] of prompts.entries()) {
      const alone = await post('/v1/chat/completions', body(p));
      expect(together[i]!.json().choices[0].message).toEqual(alone.json().choices[0].message);
    }
  });
});
