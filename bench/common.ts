/** Shared bits of the bench/ scripts: argument parsing, repeated timing, and the result header. */
import os from 'node:os';
import { spread } from '../src/bench/metrics.ts';

export function numberArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) throw new Error(`--${name}: expected a positive number`);
  return v;
}

export function stringArg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
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

export { spread };
