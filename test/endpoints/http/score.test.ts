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
    const memo = new TokenizeMemo();
    const [a, b, c] = await Promise.all([
      memo.get(transport, { model: 'm', prompt: 'x' }),
      memo.get(transport, { model: 'm', prompt: 'x' }),
      memo.get(transport, { model: 'm', prompt: 'y' }),
    ]);
    expect(a).toBe(b);
    expect(c).not.toEqual(a);
    expect(bodies).toHaveLength(2);
  });

  it('forgets a failed request, so the next ask sends it again', async () => {
    const { transport, bodies } = scripted(['fail', 'ok']);
    const memo = new TokenizeMemo();
    await expect(memo.get(transport, { prompt: 'x' })).rejects.toThrow('connection reset');
    await expect(memo.get(transport, { prompt: 'x' })).resolves.toEqual({ tokens: [2] });
    expect(bodies).toHaveLength(2);
  });

  it('keeps at most its capacity, dropping the oldest', async () => {
    const { transport, bodies } = scripted([]);
    const memo = new TokenizeMemo(2);
    for (const p of ['a', 'b', 'c']) await memo.get(transport, { prompt: p });
    await memo.get(transport, { prompt: 'c' }); // kept
    await memo.get(transport, { prompt: 'a' }); // dropped, asked again
    expect(bodies.map((b) => (b as { prompt: string }).prompt)).toEqual(['a', 'b', 'c', 'a']);
  });
});
