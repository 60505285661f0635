/**
 * The HTTP audit path (src/bench/audit-path.ts: both replies, teacher-forced scoring under both models, the
 * detectors, and the evidence ledger) of two checkouts side by side: `--before DIR` (another checkout, e.g. a
 * git worktree of the commit before a change, its node_modules installed or linked) and this one, against the
 * same zero-latency server (bench/client-server.ts, pinned to CPU 0, the clients to the other CPUs). Each round
 * runs each checkout in a fresh process (`--warm` unrecorded runs, then `--runs` recorded ones), the order
 * alternating round by round, so a noisy host weighs on both. Writes JSON (bench/render.ts draws it).
 *
 *   node --import tsx bench/audit-path-ab.ts --before ../probate-before [--rounds 4] [--runs 3] [--warm 3]
 *     [--exchanges 1500] [--out bench/results/audit-path-ab.json]
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spread } from '../src/bench/metrics.ts';
import { writeJson } from '../src/bench/output.ts';
import { commit, header, parsedArgs, usageError } from './common.ts';
import { startChildServer } from './fake-server.ts';

const { values } = parsedArgs({
  options: {
    before: { type: 'string' },
    rounds: { type: 'string', default: '4' },
    runs: { type: 'string', default: '3' },
    warm: { type: 'string', default: '3' },
    exchanges: { type: 'string', default: '1500' },
    out: { type: 'string', default: 'bench/results/audit-path-ab.json' },
  },
});
if (!values.before) usageError('--before: expected the directory of the other checkout');
const before = resolve(values.before);
if (!existsSync(join(before, 'src/bench/audit-path.ts')))
  usageError(`--before: ${values.before} has no src/bench/audit-path.ts`);
for (const name of ['rounds', 'runs', 'warm', 'exchanges'] as const) {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n < (name === 'warm' ? 0 : 1)) usageError(`--${name}: expected a whole number`);
}

interface Run {
  variant: string;
  round: number;
  requests: number;
  exchanges: number;
  requests_per_s: number;
  cpu_us_per_request: number;
}

const variants = [
  { name: `before (${commit(before)})`, root: before },
  { name: `after (${commit('.')})`, root: resolve('.') },
];
const server = await startChildServer(true);
const runs: Run[] = [];
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = round % 2 ? [...variants].reverse() : variants;
    for (const v of order) {
      const child = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          new URL('./audit-path-child.ts', import.meta.url).pathname,
          '--root',
          v.root,
          '--url',
          server.url,
        ].concat(['--warm', values.warm!, '--runs', values.runs!, '--exchanges', values.exchanges!]),
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
      );
      if (child.status !== 0) throw new Error(`${v.name}: the audit path exited ${child.status}`);
      for (const line of child.stdout.trim().split('\n'))
        runs.push({ variant: v.name, round, ...JSON.parse(line) });
      process.stderr.write(`round ${round + 1}: ${v.name} done\n`);
    }
  }
} finally {
  await server.stop();
}

const of = (v: string) => runs.filter((r) => r.variant === v);
const [a, b] = variants.map((v) => v.name) as [string, string];
// Per round, the after/before ratio of the two processes' median requests/s: both saw the same stretch of host.
const medianOf = (xs: number[]) => spread(xs, 1).median;
const ratios = [...new Set(runs.map((r) => r.round))].map((round) => {
  const rate = (v: string) =>
    medianOf(
      of(v)
        .filter((r) => r.round === round)
        .map((r) => r.requests_per_s),
    );
  return rate(b) / rate(a);
});
writeJson(values.out!, {
  ...header('audit-path-ab', 'bench/audit-path-ab.ts'),
  server: `bench/client-server.ts (zero latency, child process; ${server.placement})`,
  variants: [a, b],
  exchanges_per_run: Number(values.exchanges),
  runs,
  requests_per_s: Object.fromEntries(
    [a, b].map((v) => [
      v,
      spread(
        of(v).map((r) => r.requests_per_s),
        1,
      ),
    ]),
  ),
  cpu_us_per_request: Object.fromEntries(
    [a, b].map((v) => [
      v,
      spread(
        of(v).map((r) => r.cpu_us_per_request),
        1,
      ),
    ]),
  ),
  ratio_after_before: spread(ratios, 3),
});
process.stdout.write(`${values.out}: ${runs.length} runs (render into BENCHMARKS.md with bench/render.ts)\n`);
