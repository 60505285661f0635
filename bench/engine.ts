/**
 * Embedded engine vs a bare onnxruntime-node KV-cache loop on the same model: greedy tokens/s, min/median/max
 * over runs, printed as one JSON object. The bare loop is the floor the engine is held to (issue 4: within 1.2×).
 *
 *   node --import tsx bench/engine.ts [MODEL_DIR] [--runs N] [--tokens N] [--threads N]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import ort from 'onnxruntime-node';
import { openLocalEndpoint } from '../src/endpoints/local/index.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '7' },
    tokens: { type: 'string', default: '100' },
    threads: { type: 'string', default: '2' },
  },
});
const dir = positionals[0] ?? 'fixtures/organisms/base';
const runs = Number(values.runs);
const newTokens = Number(values.tokens);
const threads = Number(values.threads);

const engine = await openLocalEndpoint(dir, { threads });
const prompt = engine.tokenize('Hello! How do I boil an egg?');

/** The bare loop: prefill, then one token per run() feeding presents back as pasts, argmax on the host. */
async function bareLoop(session: ort.InferenceSession): Promise<number> {
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = session.inputMetadata.find((m) => m.name === pastNames[0]);
  const [, heads, , headDim] = (meta as unknown as { shape: number[] }).shape;
  const feeds: Record<string, ort.Tensor> = {};
  for (const n of pastNames)
    feeds[n] = new ort.Tensor('float32', new Float32Array(0), [1, heads!, 0, headDim!]);
  let ids = prompt.map(BigInt);
  let past = 0;
  let produced = 0;
  while (produced < newTokens) {
    const len = ids.length;
    feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(ids), [1, len]);
    feeds.attention_mask = new ort.Tensor('int64', new BigInt64Array(past + len).fill(1n), [1, past + len]);
    if (session.inputNames.includes('position_ids')) {
      feeds.position_ids = new ort.Tensor(
        'int64',
        BigInt64Array.from(ids, (_, i) => BigInt(past + i)),
        [1, len],
      );
    }
    const out = await session.run(feeds);
    const logits = out.logits!.data as Float32Array;
    const vocab = out.logits!.dims[2]!;
    let best = 0;
    for (let v = 1; v < vocab; v++)
      if (logits[(len - 1) * vocab + v]! > logits[(len - 1) * vocab + best]!) best = v;
    for (const n of pastNames) feeds[n] = out[n.replace('past_key_values', 'present')]!;
    past += len;
    ids = [BigInt(best)];
    produced++;
  }
  return produced;
}

/** Runs both loops alternately (one warm-up each), so machine load drifts hit both alike. */
async function interleaved(
  a: () => Promise<number>,
  b: () => Promise<number>,
): Promise<[number[], number[]]> {
  await a();
  await b();
  const rates: [number[], number[]] = [[], []];
  for (let i = 0; i < runs; i++) {
    for (const [k, fn] of [a, b].entries()) {
      const t0 = performance.now();
      const n = await fn();
      rates[k]!.push(n / ((performance.now() - t0) / 1000));
    }
  }
  return [rates[0].sort((x, y) => x - y), rates[1].sort((x, y) => x - y)];
}

const summary = (r: number[]) => ({
  min: Math.round(r[0]!),
  median: Math.round(r[Math.floor(r.length / 2)]!),
  max: Math.round(r.at(-1)!),
});

const session = await ort.InferenceSession.create(engine.folder.onnxPath, {
  intraOpNumThreads: threads,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
});
// ignoreEos: both sides generate exactly `newTokens` tokens.
const engineRun = async () =>
  (await engine.generate({ promptIds: prompt, maxTokens: newTokens, temperature: 0, ignoreEos: true }))
    .samples[0]!.generatedTokens;
const [bare, eng] = await interleaved(() => bareLoop(session), engineRun);
const bareMedian = summary(bare).median;
const engineMedian = summary(eng).median;
console.log(
  JSON.stringify(
    {
      model: dir,
      threads,
      runs,
      newTokens,
      bareTokensPerSecond: summary(bare),
      engineTokensPerSecond: summary(eng),
      slowdown: Number((bareMedian / engineMedian).toFixed(3)),
    },
    null,
    2,
  ),
);
await session.release();
await engine.close();
