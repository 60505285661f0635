import { describe, expect, it } from 'vitest';
import { scoreByPromptLogprobs, TokenizeMemo } from '../../../src/endpoints/http/score.ts';
import type { HttpTransport } from '../../../src/endpoints/http/transport.ts';

/** A transport whose `/tokenize` answers are scripted: each call takes the next outcome. */
function scripted(outcomes: Array<'ok' | 'fail'>) {
  const bodies: unknown[] = [];
  const sent: (string | undefined)[] = [];
  const transport = {
    request: async (r: { body: unknown; json?: string }) => {
      bodies.push(r.body);
      sent.push(r.json);
      if (outcomes.shift() === 'fail') throw new Error('connection reset');
      return { tokens: [bodies.length] };
    },
  } as unknown as HttpTransport;
  return { transport, bodies, sent };
}

describe('TokenizeMemo', () => {
  it('shares one request between concurrent asks for the same body', async () => {
    const { transport, bodies, sent } = scripted(['ok', 'ok']);
    const memo = new TokenizeMemo(transport);
    const [a, b, c] = await Promise.all([
      memo.get({ model: 'm', prompt: 'x' }),
      memo.get({ model: 'm', prompt: 'x' }),
      memo.get({ model: 'm', prompt: 'y' }),
    ]);
    expect(a).toBe(b);
    expect(c).not.toEqual(a);
    expect(bodies).toHaveLength(2);
    // The memo's key is the body as sent: the transport does not serialise it again.
    expect(sent).toEqual([
      JSON.stringify({ model: 'm', prompt: 'x' }),
      JSON.stringify({ model: 'm', prompt: 'y' }),
    ]);
  });

  it('forgets a failed request, so the next ask sends it again', async () => {
    const { transport, bodies } = scripted(['fail', 'ok']);
    const memo = new TokenizeMemo(transport);
    await expect(memo.get({ prompt: 'x' })).rejects.toThrow('connection reset');
    await expect(memo.get({ prompt: 'x' })).resolves.toEqual({ tokens: [2] });
    expect(bodies).toHaveLength(2);
  });

  it('keeps at most its capacity, dropping the oldest', async () => {
    const { transport, bodies } = scripted([]);
    const memo = new TokenizeMemo(transport, 2);
    for (const p of ['a', 'b', 'c']) await memo.get({ prompt: p });
    await memo.get({ prompt: 'c' }); // kept
    await memo.get({ prompt: 'a' }); // dropped, asked again
    expect(bodies.map((b) => (b as { prompt: string }).prompt)).toEqual(['a', 'b', 'c', 'a']);
  });
});

describe('scoreByPromptLogprobs: the reply checked against the prompt', () => {
  /** `/tokenize` gives the context [1, 2] and the continuation [3, 4]; `/v1/completions` answers `reply`. */
  function scoring(reply: string) {
    return {
      request: async (r: { path: string; body: { prompt?: string }; decode?: (b: Buffer) => unknown }) => {
        if (r.path === '/tokenize') return { tokens: r.body.prompt === 'ctx' ? [1, 2] : [3, 4] };
        return r.decode!(Buffer.from(reply));
      },
    } as unknown as HttpTransport;
  }
  const entry = (id: number, logprob: number, token: string) => ({
    [id]: { logprob, rank: 1, decoded_token: token },
  });
  const reply = (entries: unknown[], space?: number) =>
    JSON.stringify(
      { choices: [{ index: 0, text: 'x', finish_reason: 'length', prompt_logprobs: entries }] },
      null,
      space,
    );
  const score = (text: string) =>
    scoreByPromptLogprobs(
      scoring(text),
      'm',
      { context: 'ctx', continuation: 'c' },
      new TokenizeMemo(scoring(text)),
    );

  // Compact replies take the in-place reader, pretty-printed ones the whole parse: both must judge alike.
  for (const space of [undefined, 1]) {
    const how = space ? 'parsed whole' : 'read in place';
    it(`scores the continuation's tokens (${how})`, async () => {
      const r = await score(
        reply([null, entry(2, -1, 'b'), entry(3, -0.5, 'c'), entry(4, -0.25, 'd')], space),
      );
      expect(r).toEqual({
        tokens: [
          { token: 'c', logprob: -0.5 },
          { token: 'd', logprob: -0.25 },
        ],
        total: -0.75,
      });
    });
    it(`refuses a reply with an entry per prompt token too few (${how})`, async () => {
      await expect(score(reply([null, entry(2, -1, 'b'), entry(3, -0.5, 'c')], space))).rejects.toThrow(
        'prompt_logprobs: expected 4 entries, got 3',
      );
    });
    it(`refuses a continuation entry without its token id (${how})`, async () => {
      await expect(
        score(reply([null, entry(2, -1, 'b'), entry(9, -0.5, 'c'), entry(4, -1, 'd')], space)),
      ).rejects.toThrow('prompt_logprobs[2] lacks token id 3');
    });
  }
});
