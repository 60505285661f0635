#!/usr/bin/env node
// Runs the TypeScript sources through tsx's loader: no build step between a clone and a run.
import v8 from 'node:v8';
import { register } from 'tsx/esm/api';

// The embedded engine gets every onnxruntime output as a fresh ArrayBuffer (the binding copies it out; a KV
// cache is megabytes), and every 64 MB of those starts a major collection. With concurrent marking, V8's
// helper threads spent as much CPU as the audit itself. Marking on the main thread saves about a fifth of an
// audit's CPU and, where the cores are shared, a fifth of its wall time, for 0.6 GB more peak memory
// (BENCHMARKS.md, "Embedded engine: marking on the main thread"). Set before anything is allocated.
// `node --concurrent-marking` or PROBATE_CONCURRENT_MARKING=1 keeps V8's default.
if (!process.execArgv.includes('--concurrent-marking') && process.env.PROBATE_CONCURRENT_MARKING !== '1') {
  v8.setFlagsFromString('--no-concurrent-marking');
}

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
