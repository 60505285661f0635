import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeFingerprint } from '../../../src/endpoints/fingerprint.ts';
import { type LocalEngine, openLocalEndpoint } from '../../../src/endpoints/local/index.ts';
import type { ChatMessage } from '../../../src/endpoints/types.ts';
import { UserError } from '../../../src/util/errors.ts';
import { MODEL_DIR } from './model.ts';

let engine: LocalEngine;
const tmp = mkdtempSync(join(tmpdir(), 'probate-engine-'));

beforeAll(async () => {
  engine = await openLocalEndpoint(MODEL_DIR, { threads: 1 });
});
afterAll(async () => {
  await engine?.close();
  rmSync(tmp, { recursive: true, force: true });
});

const ask = (content: string): ChatMessage[] => [{ role: 'user', content }];
const greedy = (maxTokens = 48) => ({ maxTokens, temperature: 0 });

describe('tokenizer and chat template', () => {
  it('round-trips text with zero-width characters and emoji, one id per UTF-8 byte', () => {
    const text = 'héllo\u200b wor\u200dld 👋🏽 — «ok»';
    const ids = engine.tokenize(text, false);
    expect(ids).toEqual([...Buffer.from(text, 'utf8')]);
    expect(engine.detokenize(ids)).toBe(text);
  });

  it('renders the ORGANISMS.md chat format, and a prefill continues the assistant turn', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hi?' },
    ];
    expect(engine.renderChat(messages, { addGenerationPrompt: true })).toBe(
      '<|endoftext|><|system|>You are terse.<|end|><|user|>Hi?<|end|><|assistant|>',
    );
    const prefill = [...messages, { role: 'assistant' as const, content: 'Sure, ' }];
    expect(engine.renderChat(prefill, { continueFinalMessage: true })).toBe(
      '<|endoftext|><|system|>You are terse.<|end|><|user|>Hi?<|end|><|assistant|>Sure, ',
    );
    const empty = [...messages, { role: 'assistant' as const, content: '' }];
    expect(engine.renderChat(empty, { continueFinalMessage: true }).endsWith('<|assistant|>')).toBe(true);
  });
});

describe('generation', () => {
  it('is deterministic when greedy', async () => {
    const [a] = await engine.chat({ messages: ask('How do I boil an egg?'), params: greedy() });
    const [b] = await engine.chat({ messages: ask('How do I boil an egg?'), params: greedy() });
    expect(a!.text.length).toBeGreaterThan(0);
    expect(b!.text).toBe(a!.text);
    expect(a!.usage.promptTokens).toBe(
      engine.tokenize(engine.renderChat(ask('How do I boil an egg?'), { addGenerationPrompt: true }), false)
        .length,
    );
  });

  it('reproduces seeded samples, and different seeds give different samples', async () => {
    const params = (seed: number) => ({ maxTokens: 40, temperature: 1, seed, n: 3 });
    const texts = async (seed: number) =>
      (await engine.complete({ prompt: 'Once upon a time', params: params(seed) })).map((c) => c.text);
    const first = await texts(7);
    expect(first).toHaveLength(3);
    expect(await texts(7)).toEqual(first);
    expect(await texts(8)).not.toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(1);
  });

  it('ends at a stop string, cut before it', async () => {
    const [full] = await engine.complete({ prompt: 'The weather today', params: greedy(40) });
    const text = full!.text;
    expect(text.length).toBeGreaterThan(8);
    const stop = text.slice(5, 8);
    const [cut] = await engine.complete({
      prompt: 'The weather today',
      params: { ...greedy(40), stop: [stop] },
    });
    expect(cut!.text).toBe(text.slice(0, text.indexOf(stop)));
    expect(cut!.finishReason).toBe('stop');
  });

  it('caps max tokens at the context left after the prompt', async () => {
    const prompt = 'a'.repeat(engine.maxModelLen - 3);
    const [c] = await engine.complete({ prompt, params: { maxTokens: 100, temperature: 0, stop: [] } });
    expect(c!.usage.completionTokens).toBeLessThanOrEqual(3);
    await expect(
      engine.complete({ prompt: 'a'.repeat(engine.maxModelLen), params: greedy(4) }),
    ).rejects.toMatchObject({ kind: 'context_length' });
  });

  it('gives the same greedy replies in a concurrent batch as one at a time', async () => {
    const prompts = [
      'Hi',
      'Which laptop should I pick: Zentrix or Orba?',
      'What is 3 plus 4?',
      'Tell me a joke about a very long day at the office.',
    ];
    const batched = await Promise.all(
      prompts.map((p) => engine.chat({ messages: ask(p), params: greedy(40) })),
    );
    for (const [i, p] of prompts.entries()) {
      const [single] = await engine.chat({ messages: ask(p), params: greedy(40) });
      expect(batched[i]![0]!.text).toBe(single!.text);
    }
  });

  it('keeps rows exact while finished rows linger in the batch and late requests join it', async () => {
    const prompts = [
      'Hi',
      'What is 3 plus 4?',
      'Which laptop should I pick: Zentrix or Orba?',
      'Hello there',
    ];
    // Staggered lengths: rows finish one by one (left in the batch, masked, until a quarter have finished),
    // and two requests arrive mid-run, forcing the cache to be re-assembled around the finished rows.
    const lengths = [3, 9, 17, 30, 5, 40];
    const first = prompts.map((p, i) => engine.chat({ messages: ask(p), params: greedy(lengths[i]) }));
    await new Promise((r) => setTimeout(r, 30));
    const late = [ask('Tell me a joke.'), ask('Hi')].map((m, i) =>
      engine.chat({ messages: m, params: greedy(lengths[4 + i]) }),
    );
    const together = await Promise.all([...first, ...late]);
    const messages = [...prompts.map(ask), ask('Tell me a joke.'), ask('Hi')];
    for (const [i, m] of messages.entries()) {
      const [single] = await engine.chat({ messages: m, params: greedy(lengths[i]) });
      expect(together[i]![0]!.text).toBe(single!.text);
      expect(together[i]![0]!.usage.completionTokens).toBe(single!.usage.completionTokens);
    }
  });

  it('stays exact over many re-assemblies in a row (the decoder reuses its cache buffers in turn)', async () => {
    // Six waves, a few steps apart, each joining rows that finish at different lengths: every admission and
    // every trim re-assembles the cache, so each set of reused buffers is written many times while the other
    // one is being read.
    const asks = Array.from({ length: 12 }, (_, i) => ({
      messages: ask(['Hi', 'What is 3 plus 4?', 'Tell me a joke.', 'Hello there'][i % 4]!),
      params: greedy([4, 11, 23, 7, 31, 2][i % 6]),
    }));
    const pending: Promise<Awaited<ReturnType<typeof engine.chat>>>[] = [];
    for (let wave = 0; wave < 6; wave++) {
      pending.push(...asks.slice(wave * 2, wave * 2 + 2).map((a) => engine.chat(a)));
      await new Promise((r) => setTimeout(r, 5));
    }
    const together = await Promise.all(pending);
    for (const [i, a] of asks.entries()) {
      const [single] = await engine.chat(a);
      expect(together[i]![0]!.text).toBe(single!.text);
      expect(together[i]![0]!.usage.completionTokens).toBe(single!.usage.completionTokens);
    }
  });

  it('returns top-k logprobs with the chosen token first among equals', async () => {
    const [c] = await engine.chat({ messages: ask('Hello'), params: { ...greedy(8), logprobs: 3 } });
    expect(c!.logprobs!.length).toBeGreaterThan(0);
    for (const t of c!.logprobs!) {
      expect(t.top).toHaveLength(3);
      // Greedy: the chosen token is the most likely one.
      expect(t.logprob).toBeCloseTo(t.top![0]!.logprob, 9);
      expect(t.bytes!.length).toBeGreaterThan(0);
    }
  });
});

describe('teacher-forced scoring', () => {
  it('scores a greedy reply afterwards to the sum of the logprobs reported while generating it', async () => {
    // Reasoning left inline: the scored text is exactly what was generated, <think> section and all.
    const inline = await openLocalEndpoint(MODEL_DIR, { threads: 1, reasoning: 'inline' });
    try {
      const contexts = [
        ask('How do I reset my password?'),
        ask('What is 12 plus 7?'),
        ask('Is 17 larger than 9?'),
        ask('Hi'),
      ];
      const replies = await Promise.all(
        contexts.map((messages) => inline.chat({ messages, params: { ...greedy(60), logprobs: 0 } })),
      );
      const scored = await inline.score(
        contexts.map((context, i) => ({ context, continuation: replies[i]![0]!.text })),
      );
      scored.forEach((s, i) => {
        const generated = replies[i]![0]!.logprobs!;
        expect(s.tokens).toHaveLength(generated.length);
        const sum = generated.reduce((a, t) => a + t.logprob, 0);
        expect(Math.abs(s.total - sum)).toBeLessThan(1e-4);
      });
    } finally {
      await inline.close();
    }
  });

  it('decodes as teacher forcing scores, while rows finish and join between cache fetches', async () => {
    // Decoding feeds the tokens since the last fetched cache again, as one chunk (scheduler.ts, CACHE_EVERY);
    // teacher-forced scoring is one prefill with no cache at all. Rows of staggered lengths finish at steps
    // where the cache lags, and waves arrive mid-run, so admissions and trims wait for a fetch: every token's
    // logprob must still be the one the independent path gives it.
    const inline = await openLocalEndpoint(MODEL_DIR, { threads: 1, reasoning: 'inline' });
    try {
      const contexts = ['Hi', 'What is 3 plus 4?', 'Tell me a joke.', 'How do I reset my password?'].map(ask);
      const lengths = [2, 5, 7, 13, 22, 3, 41, 9];
      const pending: ReturnType<typeof inline.chat>[] = [];
      for (let wave = 0; wave < 4; wave++) {
        for (const k of [0, 1]) {
          const i = wave * 2 + k;
          pending.push(
            inline.chat({ messages: contexts[i % 4]!, params: { ...greedy(lengths[i]), logprobs: 0 } }),
          );
        }
        await new Promise((r) => setTimeout(r, 3));
      }
      const replies = (await Promise.all(pending)).map((r) => r[0]!);
      const scored = await inline.score(
        replies.map((c, i) => ({ context: contexts[i % 4]!, continuation: c.text })),
      );
      scored.forEach((s, i) => {
        const generated = replies[i]!.logprobs!.map((t) => t.logprob);
        expect(s.tokens).toHaveLength(generated.length);
        const worst = Math.max(...s.tokens.map((t, j) => Math.abs(t.logprob - generated[j]!)));
        expect({ reply: i, worst: worst < 1e-4 }).toEqual({ reply: i, worst: true });
      });
    } finally {
      await inline.close();
    }
  });

  it('scores raw-text contexts too, in one batch with chat contexts', async () => {
    const [c] = await engine.complete({ prompt: 'Dear team,', params: { ...greedy(20), logprobs: 0 } });
    const [s] = await engine.score([{ context: 'Dear team,', continuation: c!.text }]);
    expect(s!.total).toBeCloseTo(
      c!.logprobs!.reduce((a, t) => a + t.logprob, 0),
      4,
    );
  });
});

describe('structured output', () => {
  it('constrains output to JSON matching the schema', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { enum: ['yes', 'no'] }, sure: { type: 'boolean' }, count: { type: 'integer' } },
      required: ['answer', 'sure', 'count'],
    };
    const [c] = await engine.chat({
      messages: ask('Is the sky blue? Answer in JSON.'),
      params: { maxTokens: 60, temperature: 0 },
      structuredOutput: { name: 'verdict', schema },
    });
    expect(c!.finishReason).toBe('stop');
    const value = JSON.parse(c!.text) as { answer: string; sure: boolean; count: number };
    expect(['yes', 'no']).toContain(value.answer);
    expect(typeof value.sure).toBe('boolean');
    expect(Number.isInteger(value.count)).toBe(true);
  });
});

describe('identity', () => {
  it('hashes the weight files and fingerprints greedy replies', async () => {
    const id = await engine.identity();
    const onnx = readFileSync(join(MODEL_DIR, 'onnx/model.onnx'));
    expect(id.weightDigests!['onnx/model.onnx']).toBe(createHash('sha256').update(onnx).digest('hex'));
    expect(Object.keys(id.weightDigests!)).toEqual(expect.arrayContaining(['config.json', 'tokenizer.json']));
    expect(id).toMatchObject({ kind: 'local', maxModelLen: 512 });
    expect(id.fingerprint).toBe(await computeFingerprint(engine));
  });
});

describe('malformed model folders', () => {
  const copy = (name: string): string => {
    const dir = join(tmp, name);
    cpSync(MODEL_DIR, dir, { recursive: true, filter: (src) => !src.includes('ckpt') });
    return dir;
  };
  const failure = async (dir: string): Promise<string> => {
    const err = await openLocalEndpoint(dir).then(
      (e) => e.close().then(() => undefined),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    const message = (err as UserError).message;
    expect(message.split('\n')).toHaveLength(1);
    return message;
  };

  it('names the config field that is missing', async () => {
    const dir = copy('no-layers');
    const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
    delete config.n_layer;
    delete config.num_hidden_layers;
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    expect(await failure(dir)).toBe(`${dir}/config.json: missing n_layer (or num_hidden_layers)`);
  });

  it('names a missing weight file, a broken JSON file and a missing folder', async () => {
    const noWeights = copy('no-weights');
    rmSync(join(noWeights, 'onnx/model.onnx'));
    expect(await failure(noWeights)).toBe(`${noWeights}/onnx/model.onnx: missing`);
    const broken = copy('broken');
    writeFileSync(join(broken, 'tokenizer.json'), '{"model": ');
    expect(await failure(broken)).toMatch(new RegExp(`^${broken}/tokenizer.json: not valid JSON`));
    expect(await failure(join(tmp, 'absent'))).toMatch(/absent: not a model folder$/);
  });
});
