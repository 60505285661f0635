/** Shared bits of the bench/ scripts: argument parsing, repeated timing, and the result header. */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { spread } from '../src/bench/metrics.ts';

/** A bench script's bad argument: one line on stderr naming it, exit 2, no stack trace. */
export function usageError(message: string): never {
  process.stderr.write(`${process.argv[1]?.replace(/^.*\/(bench\/)/, '$1') ?? 'bench'}: ${message}\n`);
  process.exit(2);
}

export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) usageError(`--${name}: expected a positive number`);
  return v;
}

export function stringArg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = process.argv[i + 1];
  if (v === undefined || v.startsWith('--')) usageError(`--${name}: expected a value`);
  return v;
}

/** node:util's parseArgs, its errors (an unknown option, a missing value) as one line. */
export function parsedArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> {
  try {
    return parseArgs(config);
  } catch (err) {
    return usageError((err as Error).message.split('\n')[0]!);
  }
}

/** Where and how a figure was obtained: printed with every result. */
export function header(bench: string, script: string) {
  return {
    bench,
    command: `node --import tsx ${script} ${process.argv.slice(2).join(' ')}`.trim(),
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version },
  };
}

/** A checkout's commit (e.g. one side of an A/B bench), marked when its tracked files have changes. */
export function commit(dir: string): string {
  const git = (...args: string[]) => execFileSync('git', ['-C', dir, ...args], { encoding: 'utf8' }).trim();
  const changed = git('status', '--porcelain', '--untracked-files=no') !== '';
  return `${git('rev-parse', '--short', 'HEAD')}${changed ? '+changes' : ''}`;
}

export { spread };
