/**
 * The same `probate audit` on the embedded engine run by two checkouts of probate: `--before DIR` (another
 * checkout, e.g. a git worktree of the commit before a change, its node_modules installed or linked) and this
 * one, side by side, the order alternating pair by pair, one audit at a time and two at once (comparePairs).
 * The organisms are this checkout's, so both audit the same files. Wall, user and system CPU, peak RSS and the
 * audit's own result. Writes JSON (bench/render.ts draws it under the section named by `--out`'s file name).
 *
 *   node --import tsx bench/engine-ab.ts --before ../probate-before [--organisms trig-token,benign-seed]
 *     [--pairs 2] [--out bench/results/engine-ab.json]
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeJson } from '../src/bench/output.ts';
import { comparePairs, KEEP_FREED_MEMORY, pairsAndOrganisms } from './audit-process.ts';
import { commit, header, parsedArgs, usageError } from './common.ts';

const { values } = parsedArgs({
  options: {
    before: { type: 'string' },
    organisms: { type: 'string', default: 'trig-token,benign-seed' },
    pairs: { type: 'string', default: '2' },
    out: { type: 'string', default: 'bench/results/engine-ab.json' },
  },
});
if (!values.before) usageError('--before: expected the directory of the other checkout');
const before = resolve(values.before);
if (!existsSync(join(before, 'bin/probate.js')))
  usageError(`--before: ${values.before} has no bin/probate.js`);
const { pairs, organisms } = pairsAndOrganisms(values, { atOnce: true });

const env: NodeJS.ProcessEnv = { ...process.env, GLIBC_TUNABLES: KEEP_FREED_MEMORY };
const variants = [
  { name: `before (${commit(before)})`, env, cwd: before },
  { name: `after (${commit('.')})`, env },
] as const;
const { runs, beside } = await comparePairs(organisms, pairs, variants);

writeJson(values.out!, {
  ...header('engine-ab', 'bench/engine-ab.ts'),
  tunables: KEEP_FREED_MEMORY,
  variants: variants.map((v) => v.name),
  runs,
  beside,
});
process.stdout.write(
  `${values.out}: ${runs.length} audits (render into BENCHMARKS.md with bench/render.ts)\n`,
);
