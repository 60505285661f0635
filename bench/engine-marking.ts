/**
 * The same `probate audit` on the embedded engine with V8's concurrent marking (its default, restored with
 * `node --concurrent-marking`) and with marking on the main thread (what bin/probate.js sets), the order
 * alternating pair by pair, in two settings: one audit at a time, and two audits of different organisms at
 * once on the machine (as CI's slow stage runs them, two workers on two cores). Wall, user and system CPU, peak
 * RSS (GNU time) and the audit's own result, which must not change. GLIBC_TUNABLES keeps freed memory in both
 * (as `npm run test:slow` and the README set it). Writes JSON (bench/render.ts draws its table in BENCHMARKS.md).
 *
 *   node --import tsx bench/engine-marking.ts [--organisms trig-token,benign-seed] [--pairs 2]
 *     [--out bench/results/engine-marking.json]
 */
import os from 'node:os';
import { writeJson } from '../src/bench/output.ts';
import { checkAuditProcess, comparePairs, KEEP_FREED_MEMORY } from './audit-process.ts';
import { parsedArgs, usageError } from './common.ts';

const { values } = parsedArgs({
  options: {
    organisms: { type: 'string', default: 'trig-token,benign-seed' },
    pairs: { type: 'string', default: '2' },
    out: { type: 'string', default: 'bench/results/engine-marking.json' },
  },
});
const pairs = Number(values.pairs);
if (!Number.isInteger(pairs) || pairs < 1) usageError('--pairs: expected a whole number ≥ 1');
const organisms = values.organisms.split(',');
if (organisms.length !== 2) usageError('--organisms: expected two organisms (they are also run at once)');
checkAuditProcess(organisms);

const env: NodeJS.ProcessEnv = { ...process.env, GLIBC_TUNABLES: KEEP_FREED_MEMORY };
delete env.PROBATE_CONCURRENT_MARKING;
const { runs, beside } = await comparePairs(organisms, pairs, [
  { name: 'concurrent', env, nodeArgs: ['--concurrent-marking'] },
  { name: 'main-thread', env },
]);

writeJson(values.out!, {
  command: `node --import tsx bench/engine-marking.ts ${process.argv.slice(2).join(' ')}`.trim(),
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version },
  tunables: KEEP_FREED_MEMORY,
  variants: ['concurrent', 'main-thread'],
  runs,
  beside,
});
process.stdout.write(
  `${values.out}: ${runs.length} audits (render into BENCHMARKS.md with bench/render.ts)\n`,
);
