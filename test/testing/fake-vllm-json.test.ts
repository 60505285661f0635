import { describe, expect, it } from 'vitest';
import { chatLogprobsText, promptLogprobsText, RawJson } from '../../src/testing/fake-vllm-json.ts';
import { decodeToken, encode, tokenLogprob } from '../../src/testing/fake-vllm-model.ts';

/** The cached renderings must be byte for byte what JSON.stringify of the objects vLLM would send gives. */
describe('fake server JSON', () => {
  // Every byte token, the special tokens, and the "impossible" Z, in a context of quotes and backslashes.
  const ids = [
    256,
    258,
    ...encode('Héllo "wörld" \\ Z 😀\n\t'),
    ...Array.from({ length: 261 }, (_, i) => i),
    260,
  ];

  it('prompt_logprobs text equals JSON.stringify of the per-token objects', () => {
    const objects = ids.map((id, i) =>
      i === 0
        ? null
        : { [String(id)]: { logprob: tokenLogprob(id), rank: 1, decoded_token: decodeToken(id) } },
    );
    expect(promptLogprobsText(ids)).toBe(JSON.stringify(objects));
    // Twice: the second rendering comes from the cache.
    expect(promptLogprobsText(ids)).toBe(JSON.stringify(objects));
    expect(promptLogprobsText([]).length).toBe(2);
  });

  it('chat logprobs text equals JSON.stringify of the per-token objects without alternatives', () => {
    const objects = ids.map((id) => ({
      token: decodeToken(id),
      logprob: tokenLogprob(id),
      bytes: [id],
      top_logprobs: [],
    }));
    expect(chatLogprobsText(ids)).toBe(JSON.stringify(objects));
  });

  it('spliced text lands where its placeholder was, and a look-alike in reply text is left alone', () => {
    const spliced = new RawJson();
    const fake = '\u0000raw:0000000000000000:0\u0000';
    const value = { text: fake, a: spliced.put('[1,2]'), b: [spliced.put('null'), 3] };
    expect(spliced.stringify(value)).toBe(JSON.stringify({ text: fake, a: [1, 2], b: [null, 3] }));
  });
});
