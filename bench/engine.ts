/**
 * Embedded engine vs a bare onnxruntime-node KV-cache loop on the same model, at batch 1 and batch 32:
 * greedy tokens/s (wall and per CPU-second, which is what a shared machine's load distorts least),
 * min/median/max over runs, and the bare/engine ratio of each side-by-side pair (goal ≤ 1.2: the engine
 * within 1.2× of the bare loop), plus the time to open the endpoint. Prints and writes JSON.
 *
 *   node --import tsx bench/engine.ts [MODEL_DIR] [--runs N] [--tokens N] [--threads N] [--batches 1,32]
 *     [--out bench/results/engine.json]
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import ort from 'onnxruntime-node';
import { writeJson } from '../src/bench/output.ts';
import { openLocalEndpoint } from '../src/endpoints/local/index.ts';
import { parsedArgs } from './common.ts';

const { values, positionals } = parsedArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '5' },
    tokens: { type: 'string', default: '64' },
    threads: { type: 'string', default: '1' },
    batches: { type: 'string', default: '1,32' },
    out: { type: 'string', default: 'bench/results/engine.json' },
  },
});
const dir = positionals[0] ?? 'fixtures/organisms/base';
const runs = Number(values.runs);
const newTokens = Number(values.tokens);
const threads = Number(values.threads);
const batches = values.batches.split(',').map(Number);

const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

const openStart = { wall: performance.now(), cpu: cpuMs() };
const engine = await openLocalEndpoint(dir, { threads });
const open = {
  wallMs: Math.round(performance.now() - openStart.wall),
  cpuMs: Math.round(cpuMs() - openStart.cpu),
};
const prompts = (batch: number) =>
  Array.from({ length: batch }, (_, i) =>
    engine.tokenizer.encode(
      engine.renderChat(
        [{ role: 'user', content: `Help me pick a laptop: Zentrix, Dell XPS or Framework ${i}.` }],
        {
          addGenerationPrompt: true,
        },
      ),
      false,
    ),
  );

/** The bare loop: left-padded prefill, then one token per run() feeding presents back as pasts, host argmax. */
async function bareLoop(session: ort.InferenceSession, rows: number[][]): Promise<number> {
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = session.inputMetadata.find((m) => m.name === pastNames[0]);
  const [, heads, , headDim] = (meta as unknown as { shape: number[] }).shape;
  const batch = rows.length;
  const width = Math.max(...rows.map((r) => r.length));
  const feeds: Record<string, ort.Tensor> = {};
  for (const n of pastNames)
    feeds[n] = new ort.Tensor('float32', new Float32Array(0), [batch, heads!, 0, headDim!]);
  let ids = new BigInt64Array(batch * width);
  let pos = new BigInt64Array(batch * width);
  const pads = rows.map((r) => width - r.length);
  rows.forEach((r, b) => {
    for (let s = 0; s < width; s++) {
      ids[b * width + s] = BigInt(r[Math.max(0, s - pads[b]!)]!);
      pos[b * width + s] = BigInt(Math.max(0, s - pads[b]!));
    }
  });
  let past = 0;
  let len = width;
  for (let step = 0; step < newTokens; step++) {
    const total = past + len;
    const mask = new BigInt64Array(batch * total);
    for (let b = 0; b < batch; b++) mask.fill(1n, b * total + pads[b]!, (b + 1) * total);
    feeds.input_ids = new ort.Tensor('int64', ids, [batch, len]);
    feeds.attention_mask = new ort.Tensor('int64', mask, [batch, total]);
    if (session.inputNames.includes('position_ids'))
      feeds.position_ids = new ort.Tensor('int64', pos, [batch, len]);
    const out = await session.run(feeds);
    const logits = out.logits!.data as Float32Array;
    const vocab = out.logits!.dims[2]!;
    const next = new BigInt64Array(batch);
    const nextPos = new BigInt64Array(batch);
    for (let b = 0; b < batch; b++) {
      const at = (b * len + len - 1) * vocab;
      let best = 0;
      for (let v = 1; v < vocab; v++) if (logits[at + v]! > logits[at + best]!) best = v;
      next[b] = BigInt(best);
      nextPos[b] = BigInt(total - pads[b]!);
    }
    for (const n of pastNames) feeds[n] = out[n.replace('past_key_values', 'present')]!;
    ids = next;
    pos = nextPos;
    past = total;
    len = 1;
  }
  return batch * newTokens;
}

/** Concurrent greedy generate() calls, one per prompt; ignoreEos so every row makes exactly `newTokens`. */
async function engineLoop(rows: number[][]): Promise<number> {
  const results = await Promise.all(
    rows.map((promptIds) =>
      engine.generate({ promptIds, maxTokens: newTokens, temperature: 0, ignoreEos: true }),
    ),
  );
  return results.reduce((sum, r) => sum + r.samples[0]!.generatedTokens, 0);
}

const summary = (r: number[], digits = 0) => {
  const s = [...r].sort((x, y) => x - y);
  const f = (x: number) => Number(x.toFixed(digits));
  const mid = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return { min: f(s[0]!), median: f(mid), max: f(s.at(-1)!) };
};
const GOAL = 1.2;

/** Runs both loops alternately (one warm-up each), so machine load drifts hit both alike. */
async function compare(batch: number) {
  const rows = prompts(batch);
  const loops = { bare: () => bareLoop(session, rows), engine: () => engineLoop(rows) };
  const rates = {
    bare: { wall: [] as number[], cpu: [] as number[] },
    engine: { wall: [] as number[], cpu: [] as number[] },
  };
  await loops.bare();
  await loops.engine();
  for (let i = 0; i < runs; i++) {
    for (const name of ['bare', 'engine'] as const) {
      const wall0 = performance.now();
      const cpu0 = cpuMs();
      const n = await loops[name]();
      rates[name].wall.push(n / ((performance.now() - wall0) / 1000));
      rates[name].cpu.push(n / ((cpuMs() - cpu0) / 1000));
    }
  }
  const pairs = (k: 'wall' | 'cpu') => rates.bare[k].map((b, i) => b / rates.engine[k][i]!);
  const slowdown = summary(pairs('wall'), 3);
  return {
    bare: { tokensPerSecond: summary(rates.bare.wall), tokensPerCpuSecond: summary(rates.bare.cpu) },
    engine: { tokensPerSecond: summary(rates.engine.wall), tokensPerCpuSecond: summary(rates.engine.cpu) },
    /** bare tokens/s ÷ engine tokens/s, per side-by-side pair (wall clock, and per CPU-second). */
    slowdown,
    cpuSlowdown: summary(pairs('cpu'), 3),
    goal: { max: GOAL, met: slowdown.median <= GOAL },
  };
}

const session = await ort.InferenceSession.create(engine.folder.onnxPath, {
  intraOpNumThreads: threads,
  interOpNumThreads: 1,
  graphOptimizationLevel: 'all',
  extra: { session: { 'intra_op.allow_spinning': '0' } },
});
const byBatch: Record<string, unknown> = {};
for (const batch of batches) byBatch[`batch${batch}`] = await compare(batch);
const result = {
  bench: 'engine',
  command: `node --import tsx bench/engine.ts ${process.argv.slice(2).join(' ')}`.trim(),
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version },
  model: dir,
  threads,
  runs,
  newTokens,
  open,
  ...byBatch,
};
writeJson(values.out, result);
console.log(JSON.stringify(result, null, 2));
await session.release();
await engine.close();
