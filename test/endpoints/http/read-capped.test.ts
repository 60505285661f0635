import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readCapped } from '../../../src/endpoints/http/limits.ts';

const chunks = (...parts: string[]) => Readable.from(parts.map((p) => Buffer.from(p)));

describe('readCapped (fetch reply bodies, the HF endpoint)', () => {
  it('returns the whole body as bytes, multi-byte characters split across chunks included', async () => {
    const euro = Buffer.from('€');
    const body = Readable.from([
      Buffer.from('{"a":"'),
      euro.subarray(0, 1),
      euro.subarray(1),
      Buffer.from('"}'),
    ]);
    const bytes = await readCapped(body, 100, undefined, () => {});
    expect(bytes.toString('utf8')).toBe('{"a":"€"}');
  });

  it('fails as truncated past the cap and stops the body; a later error on it is not unhandled', async () => {
    const body = new PassThrough();
    let stopped = 0;
    const read = readCapped(body, 8, undefined, () => {
      stopped++;
    });
    body.write('12345');
    body.write('67890');
    await expect(read).rejects.toMatchObject({ kind: 'truncated' });
    expect(stopped).toBe(1);
    body.destroy(new Error('socket hang up')); // would crash the process without a listener
    await new Promise((r) => setImmediate(r));
  });

  it('an announced length over the cap is refused before anything is read', async () => {
    let stopped = 0;
    await expect(readCapped(chunks('x'), 8, '9', () => stopped++)).rejects.toMatchObject({
      kind: 'truncated',
    });
    expect(stopped).toBe(1);
  });

  it('a stream error rejects with that error', async () => {
    const body = new PassThrough();
    const read = readCapped(body, 100, undefined, () => {});
    body.write('{"a":');
    body.destroy(new Error('connection reset'));
    await expect(read).rejects.toThrow('connection reset');
  });
});
