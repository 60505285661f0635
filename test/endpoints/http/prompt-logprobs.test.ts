import { describe, expect, it } from 'vitest';
import { parseSkippingPromptLogprobs } from '../../../src/endpoints/http/prompt-logprobs.ts';

type Entry = Record<string, { logprob: number; rank: number; decoded_token: string }> | null;

/** A vLLM `/v1/completions` reply with these prompt_logprobs, serialised as `JSON.stringify` does. */
function reply(entries: Entry[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'cmpl-1',
    object: 'text_completion',
    choices: [{ index: 0, text: 'x', finish_reason: 'length', prompt_logprobs: entries, ...extra }],
    usage: { prompt_tokens: entries.length, completion_tokens: 1, total_tokens: entries.length + 1 },
  };
}

function entries(tokens: string[]): Entry[] {
  return tokens.map((t, i) =>
    i === 0 ? null : { [String(100 + i)]: { logprob: -i / 4, rank: 1, decoded_token: t } },
  );
}

/** What the parser promises: the whole reply, with the first `skip` prompt_logprobs entries nulled. */
function expected(value: Record<string, unknown>, skip: number): unknown {
  const copy = structuredClone(value) as { choices: Array<{ prompt_logprobs: Entry[] }> };
  const list = copy.choices[0]!.prompt_logprobs;
  for (let i = 0; i < skip; i++) list[i] = null;
  return copy;
}

const parse = (value: unknown, skip: number, space?: number) =>
  parseSkippingPromptLogprobs(Buffer.from(JSON.stringify(value, null, space)), skip);

// Tokens that would break a scanner that ignores strings or escapes.
const NASTY = ['a', ',', ']', '}', '{', '[', '"', '\\', '\\"', '"}]', 'é', '日本', '\u0000', '\n', ' ', '🙂'];

describe('parseSkippingPromptLogprobs: the context entries are counted, not read', () => {
  it('nulls exactly the first `skip` entries and keeps the rest as JSON.parse reads them', () => {
    const value = reply(entries(['', ...NASTY, 'tail1', 'tail2', 'tail"3']));
    for (const skip of [1, 2, 5, NASTY.length, NASTY.length + 2]) {
      expect(parse(value, skip)).toEqual(expected(value, skip));
    }
  });

  it('agrees with JSON.parse on random tokens of structural characters, at every skip', () => {
    let state = 7;
    const rand = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    const alphabet = [...'",[]{}\\:x é'];
    for (let round = 0; round < 40; round++) {
      const tokens = Array.from({ length: 2 + rand(30) }, () =>
        Array.from({ length: rand(5) }, () => alphabet[rand(alphabet.length)]).join(''),
      );
      const value = reply(entries(tokens));
      const skip = 1 + rand(tokens.length - 1);
      expect(parse(value, skip)).toEqual(expected(value, skip));
    }
  });

  it('reads pretty-printed replies (whitespace after the key) the same way', () => {
    const value = reply(entries(['', 'a', 'b', 'c']));
    expect(parse(value, 2, 2)).toEqual(expected(value, 2));
  });

  it('look-alikes of the key inside a string or another key are not mistaken for it', () => {
    const inText = reply(entries(['', 'a', 'b', 'c']), { text: '"prompt_logprobs":[1,2,3]' });
    expect(parse(inText, 2)).toEqual(expected(inText, 2));
    // Serialised before the real key: `"x\"prompt_logprobs":[1,2,3]`.
    const inKey = { 'x"prompt_logprobs': [1, 2, 3], ...reply(entries(['', 'a', 'b', 'c'])) };
    expect(parse(inKey, 2)).toEqual(expected(inKey, 2));
  });

  it('with fewer entries than `skip`, the whole reply is parsed: the caller sees the short array', () => {
    const value = reply(entries(['', 'a', 'b']));
    expect(parse(value, 3)).toEqual(value);
    expect(parse(value, 9)).toEqual(value);
  });

  it('without prompt_logprobs, or with `skip` 0, it is JSON.parse', () => {
    const value = { choices: [{ text: 'x', prompt_logprobs: null }] };
    expect(parse(value, 4)).toEqual(value);
    const full = reply(entries(['', 'a']));
    expect(parse(full, 0)).toEqual(full);
  });

  it('a reply that is not JSON still fails, even when the skipped part is what is broken', () => {
    const text = JSON.stringify(reply(entries(['', 'a', 'b', 'c'])));
    expect(() => parseSkippingPromptLogprobs(Buffer.from(text.slice(0, -1)), 2)).toThrow(SyntaxError);
    // Broken after the skipped entries: the tail parse fails, then the whole reply does.
    const broken = text.replace('"decoded_token":"c"', '"decoded_token":c');
    expect(() => parseSkippingPromptLogprobs(Buffer.from(broken), 2)).toThrow(SyntaxError);
  });
});
