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
import { writeJson } from '../src/bench/output.ts';
import { comparePairs, KEEP_FREED_MEMORY, pairsAndOrganisms } from './audit-process.ts';
import { header, parsedArgs } from './common.ts';

const { values } = parsedArgs({
  options: {
    organisms: { type: 'string', default: 'trig-token,benign-seed' },
    pairs: { type: 'string', default: '2' },
    out: { type: 'string', default: 'bench/results/engine-marking.json' },
  },
});
const { pairs, organisms } = pairsAndOrganisms(values, { atOnce: true });

const env: NodeJS.ProcessEnv = { ...process.env, GLIBC_TUNABLES: KEEP_FREED_MEMORY };
delete env.PROBATE_CONCURRENT_MARKING;
const { runs, beside } = await comparePairs(organisms, pairs, [
  { name: 'concurrent', env, nodeArgs: ['--concurrent-marking'] },
  { name: 'main-thread', env },
]);

writeJson(values.out!, {
  ...header('engine-marking', 'bench/engine-marking.ts'),
  tunables: KEEP_FREED_MEMORY,
  variants: ['concurrent', 'main-thread'],
  runs,
  beside,
});
process.stdout.write(
  `${values.out}: ${runs.length} audits (render into BENCHMARKS.md with bench/render.ts)\n`,
);
