import { describe, expect, it } from 'vitest';
import { TokenizeMemo } from '../../../src/endpoints/http/score.ts';
import type { HttpTransport } from '../../../src/endpoints/http/transport.ts';

/** A transport whose `/tokenize` answers are scripted: each call takes the next outcome. */
function scripted(outcomes: Array<'ok' | 'fail'>) {
  const bodies: unknown[] = [];
  const transport = {
    request: async (r: { body: unknown }) => {
      bodies.push(r.body);
      if (outcomes.shift() === 'fail') throw new Error('connection reset');
      return { tokens: [bodies.length] };
    },
  } as unknown as HttpTransport;
  return { transport, bodies };
}

describe('TokenizeMemo', () => {
  it('shares one request between concurrent asks for the same body', async () => {
    const { transport, bodies } = scripted(['ok', 'ok']);
    const memo = new TokenizeMemo(transport);
    const [a, b, c] = await Promise.all([
      memo.get({ model: 'm', prompt: 'x' }),
      memo.get({ model: 'm', prompt: 'x' }),
      memo.get({ model: 'm', prompt: 'y' }),
    ]);
    expect(a).toBe(b);
    expect(c).not.toEqual(a);
    expect(bodies).toHaveLength(2);
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
