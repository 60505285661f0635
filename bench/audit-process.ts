/**
 * One `probate audit` of a shipped organism against the shipped base on the embedded engine, as its own
 * process under GNU time: wall, user and system CPU, peak RSS, and the audit's own result (which a setting
 * that only changes speed must leave alone). Shared by the engine-process benches.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { usageError } from './common.ts';

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

/** Exits with a usage error unless every organism is built and GNU time is there. */
export function checkAuditProcess(organisms: readonly string[], flag = '--organisms'): void {
  for (const o of organisms)
    if (!existsSync(join('fixtures/organisms', o, 'onnx/model.onnx')))
      usageError(`${flag}: ${o} is not a built organism under fixtures/organisms`);
  if (!existsSync('/usr/bin/time')) usageError('needs GNU time at /usr/bin/time');
}

/** Runs the audit with `env` as its whole environment (plus CI=1) and `nodeArgs` before the script. */
export function auditProcess(
  organism: string,
  opts: { env: NodeJS.ProcessEnv; nodeArgs?: string[] },
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
    'local:fixtures/organisms/base',
    '--delivered',
    `local:fixtures/organisms/${organism}`,
    '--out',
    join(dir, 'run'),
    '--json',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('/usr/bin/time', args, { env: { ...opts.env, CI: '1' } });
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
