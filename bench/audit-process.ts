/**
 * One `probate audit` of a shipped organism against the shipped base on the embedded engine, as its own
 * process under GNU time: wall, user and system CPU, peak RSS, and the audit's own result (which a setting
 * that only changes speed must leave alone). Shared by the engine-process benches.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { usageError } from './common.ts';

/** glibc keeping the memory it frees (README; `npm run test:slow` sets it). */
export const KEEP_FREED_MEMORY =
  'glibc.malloc.mmap_threshold=268435456:glibc.malloc.trim_threshold=1073741824';

export interface AuditProcessRun {
  organism: string;
  wall_s: number;
  user_s: number;
  sys_s: number;
  max_rss_mib: number;
  exchanges: number;
  overall: number;
  state: string;
}

/**
 * The engine benches' `--pairs` and `--organisms` (exactly two when they are also run at once), each a usage
 * error unless valid, every organism built and GNU time there.
 */
export function pairsAndOrganisms(
  values: { pairs?: string; organisms?: string },
  opts: { atOnce: boolean },
): { pairs: number; organisms: string[] } {
  const pairs = Number(values.pairs);
  if (!Number.isInteger(pairs) || pairs < 1) usageError('--pairs: expected a whole number ≥ 1');
  const organisms = (values.organisms ?? '').split(',');
  if (opts.atOnce && organisms.length !== 2)
    usageError('--organisms: expected two organisms (they are also run at once)');
  for (const o of organisms)
    if (!existsSync(join('fixtures/organisms', o, 'onnx/model.onnx')))
      usageError(`--organisms: ${o} is not a built organism under fixtures/organisms`);
  if (!existsSync('/usr/bin/time')) usageError('needs GNU time at /usr/bin/time');
  return { pairs, organisms };
}

/**
 * Runs the audit with `env` as its whole environment (plus CI=1), `nodeArgs` before the script, in checkout
 * `cwd` (this one by default; the organisms are always this checkout's).
 */
export function auditProcess(
  organism: string,
  opts: { env: NodeJS.ProcessEnv; nodeArgs?: string[]; cwd?: string },
): Promise<AuditProcessRun> {
  const dir = mkdtempSync(join(tmpdir(), 'probate-bench-audit-'));
  const timing = join(dir, 'time.txt');
  const args = [
    '-f',
    '%e %U %S %M',
    '-o',
    timing,
    process.execPath,
    ...(opts.nodeArgs ?? []),
    'bin/probate.js',
    'audit',
    '--base',
    `local:${resolve('fixtures/organisms/base')}`,
    '--delivered',
    `local:${resolve('fixtures/organisms', organism)}`,
    '--out',
    join(dir, 'run'),
    '--json',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', args, { env: { ...opts.env, CI: '1' }, cwd: opts.cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        const [wall, user, sys, rss] = readFileSync(timing, 'utf8')
          .trim()
          .split('\n')
          .at(-1)!
          .split(' ')
          .map(Number);
        const out = JSON.parse(stdout) as { exchanges: number; overall: number; state: string };
        resolve({
          organism,
          wall_s: wall!,
          user_s: user!,
          sys_s: sys!,
          max_rss_mib: Math.round(rss! / 1024),
          exchanges: out.exchanges,
          overall: out.overall,
          state: out.state,
        });
      } catch {
        reject(
          new Error(`audit of ${organism} failed (exit ${code}): ${stderr.split('\n').slice(-3).join(' ')}`),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

/** One side of a comparison: how its audits are run. */
export interface Variant {
  name: string;
  env: NodeJS.ProcessEnv;
  nodeArgs?: string[];
  cwd?: string;
}

export type ComparedRun = AuditProcessRun & { variant: string; setting: 'alone' | 'beside'; pair: number };

/**
 * Two variants side by side, the order alternating pair by pair: each organism audited alone under each, then
 * all the organisms at once under each (as CI's slow stage runs two audits on two cores). `beside` holds each
 * "at once" run's wall time, until the last audit ends.
 */
export async function comparePairs(
  organisms: readonly string[],
  pairs: number,
  variants: readonly [Variant, Variant],
): Promise<{ runs: ComparedRun[]; beside: { pair: number; variant: string; wall_s: number }[] }> {
  const runs: ComparedRun[] = [];
  const beside: { pair: number; variant: string; wall_s: number }[] = [];
  for (let p = 0; p < pairs; p++) {
    const order = p % 2 === 0 ? variants : ([variants[1], variants[0]] as const);
    for (const organism of organisms)
      for (const v of order) {
        const r = await auditProcess(organism, v);
        runs.push({ ...r, variant: v.name, setting: 'alone', pair: p });
        process.stderr.write(
          `alone ${organism} ${v.name}: ${r.wall_s} s wall, ${r.user_s} s user, ${r.state}\n`,
        );
      }
    for (const v of order) {
      const t0 = performance.now();
      const all = await Promise.all(organisms.map((o) => auditProcess(o, v)));
      const wall_s = Number(((performance.now() - t0) / 1000).toFixed(2));
      beside.push({ pair: p, variant: v.name, wall_s });
      for (const r of all) runs.push({ ...r, variant: v.name, setting: 'beside', pair: p });
      process.stderr.write(`at once ${v.name}: ${wall_s} s wall\n`);
    }
  }
  return { runs, beside };
}
