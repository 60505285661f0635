import ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readModelFolder } from '../../../src/endpoints/local/folder.ts';
import { type KvCache, OnnxDecoder, type RowSource } from '../../../src/endpoints/local/onnx.ts';
import { MODEL_DIR } from './model.ts';

let decoder: OnnxDecoder;
beforeAll(async () => {
  decoder = await OnnxDecoder.load(readModelFolder(MODEL_DIR), 1);
});
afterAll(async () => {
  await decoder?.close();
});

/** A cache of `batch` rows and `length` columns whose every value names its tensor, row, head, column and slot. */
function labelled(batch: number, length: number, seed: number): KvCache {
  const { heads, headDim } = decoder;
  const tensors = decoder.pastNames.map((_, t) => {
    const data = new Float32Array(batch * heads * length * headDim);
    for (let i = 0; i < data.length; i++) data[i] = seed * 1e6 + t * 1e5 + i;
    return new ort.Tensor('float32', data, [batch, heads, length, headDim]);
  });
  return { tensors, batch, length };
}

/** What `assemble` must produce, built the obvious way into fresh arrays. */
function expected(sources: RowSource[], length: number): Float32Array[] {
  const { heads, headDim } = decoder;
  return decoder.pastNames.map((_, t) => {
    const out = new Float32Array(sources.length * heads * length * headDim);
    sources.forEach((s, b) => {
      const data = s.cache.tensors[t]!.data as Float32Array;
      for (let h = 0; h < heads; h++)
        for (let c = 0; c < s.keep; c++)
          for (let d = 0; d < headDim; d++) {
            const from = ((s.row * heads + h) * s.cache.length + (s.cache.length - s.keep + c)) * headDim + d;
            const to = ((b * heads + h) * length + (length - s.keep + c)) * headDim + d;
            out[to] = data[from]!;
          }
    });
    return out;
  });
}

const snapshot = (c: KvCache) => c.tensors.map((x) => Float32Array.from(x.data as Float32Array));

describe('OnnxDecoder.assemble', () => {
  it('re-assembles from its own last result into reused buffers, zero-padding what it does not copy', () => {
    // Three re-assemblies in a row, each reading the one before, the cache growing and shrinking: the buffers
    // alternate, so each result must equal a fresh copy and stay intact until the second next call.
    const a = decoder.assemble(
      [
        { cache: labelled(2, 6, 1), row: 1, keep: 6 },
        { cache: labelled(3, 4, 2), row: 0, keep: 2 },
      ],
      6,
    );
    const aWant = snapshot(a);
    const bSources: RowSource[] = [
      { cache: a, row: 1, keep: 2 },
      { cache: labelled(1, 9, 3), row: 0, keep: 9 },
      { cache: a, row: 0, keep: 5 },
    ];
    const bWant = expected(bSources, 9);
    const b = decoder.assemble(bSources, 9);
    expect(snapshot(b)).toEqual(bWant);
    expect(snapshot(a)).toEqual(aWant);
    const cSources: RowSource[] = [{ cache: b, row: 2, keep: 3 }];
    const cWant = expected(cSources, 4);
    const c = decoder.assemble(cSources, 4);
    expect(snapshot(c)).toEqual(cWant);
    // The padding is zero even where the reused buffer held other values before.
    expect(
      snapshot(c)[0]!
        .slice(0, decoder.headDim)
        .every((v) => v === 0),
    ).toBe(true);
    expect(snapshot(b)).toEqual(bWant);
  });
});
