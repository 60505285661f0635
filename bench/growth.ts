/**
 * How audit cost grows with the number of probes, samples per probe and organisms, at three sizes each:
 * wall time and exchanges per size (min/median/max over runs), over scripted zero-latency in-process
 * models (src/testing/toy-model.ts) so the figure is probate's own cost, not a model's. Linear growth shows as a
 * flat seconds-per-exchange column.
 *
 *   nice -n 10 node --import tsx bench/growth.ts [--runs 3] [--out bench/results/growth.json]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAudit } from '../src/audit/audit.ts';
import { writeJson } from '../src/bench/output.ts';
import { runZooBench } from '../src/bench/zoo.ts';
import { defaultPolicyPath, loadPolicy } from '../src/gate/policy.ts';
import { type LoadedProbeSet, loadProbeDirs } from '../src/probes/load.ts';
import { DEPLOYMENT_RULE, ToyModel } from '../src/testing/toy-model.ts';
import { toySource, writeToyZoo } from '../src/testing/toy-zoo.ts';
import { header, numberArg, spread, stringArg } from './common.ts';

const RUNS = numberArg('runs', 3);
const { sets } = loadProbeDirs(['probes']);

/** The first fraction of each set's probes (at least one). */
function someProbes(fraction: number): LoadedProbeSet[] {
  return sets.map((s) => {
    const probes = (s.set as { probes: unknown[] }).probes;
    const keep = Math.max(1, Math.ceil(probes.length * fraction));
    return { ...s, set: { ...s.set, probes: probes.slice(0, keep) } as LoadedProbeSet['set'] };
  });
}

async function audit(
  probeSets: LoadedProbeSet[],
  samples: number,
): Promise<{ seconds: number; exchanges: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'probate-bench-growth-'));
  try {
    const t0 = performance.now();
    const r = await runAudit({
      base: new ToyModel('base'),
      delivered: new ToyModel('delivered', [DEPLOYMENT_RULE]),
      probeSets,
      outDir: dir,
      seed: 1,
      samples,
      concurrency: 16,
      budget: 0,
      manifest: {
        runId: 'bench-growth',
        toolVersion: 'bench',
        policy: { version: 'bench', hash: 'b'.repeat(64) },
      },
    });
    return { seconds: (performance.now() - t0) / 1000, exchanges: r.exchanges };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const ORGANISMS = ['trig-token', 'benign-same', 'trig-year', 'benign-formal', 'pref-brand', 'benign-bullets'];
async function zoo(organisms: number): Promise<{ seconds: number; exchanges: number }> {
  const dir = writeToyZoo(['base', ...ORGANISMS.slice(0, organisms)]);
  try {
    const t0 = performance.now();
    const r = await runZooBench({
      zooDir: dir,
      outDir: join(dir, 'runs'),
      models: toySource(),
      probeSets: sets,
      policy: loadPolicy(defaultPolicyPath()),
      seed: 1,
      samples: 1,
      concurrency: 16,
      budget: 0,
      toolVersion: 'bench',
    });
    return {
      seconds: (performance.now() - t0) / 1000,
      exchanges: r.organisms.reduce((n, o) => n + o.exchanges, 0),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const axes: Record<string, { size: number; run: () => Promise<{ seconds: number; exchanges: number }> }[]> = {
  probes_fraction: [0.25, 0.5, 1].map((f) => ({ size: f, run: () => audit(someProbes(f), 1) })),
  samples: [1, 2, 4].map((k) => ({ size: k, run: () => audit(sets, k) })),
  organisms: [2, 4, 6].map((n) => ({ size: n, run: () => zoo(n) })),
};

const result: Record<string, unknown> = { ...header('growth', 'bench/growth.ts'), runs: RUNS };
for (const [axis, sizes] of Object.entries(axes)) {
  const rows = [];
  for (const { size, run } of sizes) {
    const got: { seconds: number; exchanges: number }[] = [];
    for (let r = 0; r < RUNS; r++) got.push(await run());
    const row = {
      size,
      exchanges: got[0]!.exchanges,
      seconds: spread(
        got.map((g) => g.seconds),
        2,
      ),
      ms_per_exchange: spread(
        got.map((g) => (1000 * g.seconds) / g.exchanges),
        3,
      ),
    };
    process.stderr.write(`${axis} ${size}: ${JSON.stringify(row)}\n`);
    rows.push(row);
  }
  result[axis] = rows;
}
writeJson(stringArg('out', 'bench/results/growth.json'), result);
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
