/**
 * The same `probate audit` on the embedded engine with and without GLIBC_TUNABLES that keep freed memory
 * in the process (glibc Linux only), side by side per organism, the order alternating pair by pair: wall,
 * user and system CPU, peak RSS (GNU time), and the audit's own result, which must not change. Writes JSON
 * (bench/render.ts draws its table in BENCHMARKS.md).
 *
 *   node --import tsx bench/engine-malloc.ts [--organisms trig-token,benign-seed,inj-creds] [--pairs 1]
 *     [--out bench/results/engine-malloc.json]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeJson } from '../src/bench/output.ts';
import { parsedArgs, usageError } from './common.ts';

const KEEP_FREED_MEMORY = 'glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824';

const { values } = parsedArgs({
  options: {
    organisms: { type: 'string', default: 'trig-token,benign-seed,inj-creds' },
    pairs: { type: 'string', default: '1' },
    out: { type: 'string', default: 'bench/results/engine-malloc.json' },
  },
});
const pairs = Number(values.pairs);
if (!Number.isInteger(pairs) || pairs < 1) usageError('--pairs: expected a whole number ≥ 1');
const organisms = values.organisms.split(',');
for (const o of organisms)
  if (!existsSync(join('fixtures/organisms', o, 'onnx/model.onnx')))
    usageError(`--organisms: ${o} is not a built organism under fixtures/organisms`);
if (!existsSync('/usr/bin/time')) usageError('needs GNU time at /usr/bin/time');

interface Run {
  organism: string;
  tunables: boolean;
  wall_s: number;
  user_s: number;
  sys_s: number;
  max_rss_mib: number;
  exchanges: number;
  overall: number;
  state: string;
}

function audit(organism: string, tunables: boolean): Run {
  const dir = mkdtempSync(join(tmpdir(), 'probate-malloc-'));
  const timing = join(dir, 'time.txt');
  const env: NodeJS.ProcessEnv = { ...process.env, CI: '1' };
  if (tunables) env.GLIBC_TUNABLES = KEEP_FREED_MEMORY;
  else delete env.GLIBC_TUNABLES;
  const r = spawnSync(
    '/usr/bin/time',
    [
      '-f',
      '%e %U %S %M',
      '-o',
      timing,
      process.execPath,
      'bin/probate.js',
      'audit',
      '--base',
      'local:fixtures/organisms/base',
      '--delivered',
      `local:fixtures/organisms/${organism}`,
      '--out',
      join(dir, 'run'),
      '--json',
    ],
    { encoding: 'utf8', env, maxBuffer: 64 << 20 },
  );
  try {
    const [wall, user, sys, rss] = readFileSync(timing, 'utf8')
      .trim()
      .split('\n')
      .at(-1)!
      .split(' ')
      .map(Number);
    const out = JSON.parse(r.stdout) as { exchanges: number; overall: number; state: string };
    return {
      organism,
      tunables,
      wall_s: wall!,
      user_s: user!,
      sys_s: sys!,
      max_rss_mib: Math.round(rss! / 1024),
      exchanges: out.exchanges,
      overall: out.overall,
      state: out.state,
    };
  } catch {
    throw new Error(
      `audit of ${organism} failed (exit ${r.status}): ${r.stderr.split('\n').slice(-3).join(' ')}`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const runs: Run[] = [];
for (let p = 0; p < pairs; p++)
  for (const [i, organism] of organisms.entries()) {
    const order = (p + i) % 2 === 0 ? [false, true] : [true, false];
    for (const tunables of order) {
      const r = audit(organism, tunables);
      runs.push(r);
      process.stderr.write(`${organism} ${tunables ? 'kept' : 'default'}: ${r.wall_s} s wall, ${r.state}\n`);
    }
  }

writeJson(values.out!, {
  command: `node --import tsx bench/engine-malloc.ts ${process.argv.slice(2).join(' ')}`.trim(),
  date: new Date().toISOString(),
  machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model, node: process.version },
  tunables: KEEP_FREED_MEMORY,
  runs,
});
process.stdout.write(
  `${values.out}: ${runs.length} audits (render into BENCHMARKS.md with bench/render.ts)\n`,
);
