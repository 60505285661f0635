import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LoadRun, LoadSpec } from './load.ts';

const run = promisify(execFile);

/** bench/peers (installed by bench/peers/setup.sh, gitignored); PROBATE_PEERS_DIR points elsewhere. */
export function peersDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.PROBATE_PEERS_DIR ?? new URL('../../bench/peers', import.meta.url).pathname;
}

export function promptfooMain(dir = peersDir()): string | undefined {
  const main = join(dir, 'node_modules', 'promptfoo', 'dist', 'src', 'main.js');
  return existsSync(main) ? main : undefined;
}

/** A JSON string is valid YAML: the config is written as JSON to avoid quoting prompts by hand. */
function config(spec: LoadSpec, requests: number): string {
  return JSON.stringify({
    description: 'probate bench throughput: same prompts and concurrency as probate',
    providers: [
      {
        id: `openai:chat:${spec.model}`,
        config: {
          apiBaseUrl: `${spec.root}/v1`,
          apiKey: 'bench',
          max_tokens: spec.maxTokens,
          temperature: 0,
        },
      },
    ],
    prompts: ['{{q}}'],
    tests: Array.from({ length: requests }, (_, i) => ({
      vars: { q: spec.prompts[i % spec.prompts.length] },
    })),
  });
}

export interface PromptfooRun extends LoadRun {
  /** promptfoo's own eval duration ("Duration: 1m 5s" in its summary; whole seconds), startup excluded. */
  internal_seconds: number | null;
  internal_requests_per_s: number | null;
}

/** Parses the "Duration: 1h 2m 3s" line of promptfoo's summary into seconds. */
export function evalDuration(stdout: string): number | null {
  const m = /Duration:\s*((?:\d+(?:\.\d+)?\s*[hms]\s*)+)/.exec(stdout);
  if (!m) return null;
  let total = 0;
  for (const [, v, unit] of m[1]!.matchAll(/(\d+(?:\.\d+)?)\s*([hms])/g))
    total += Number(v) * (unit === 'h' ? 3600 : unit === 'm' ? 60 : 1);
  return total > 0 ? total : null;
}

/**
 * `promptfoo eval -j CONCURRENCY` over the same prompts against the same endpoint, cache off. Timed as a
 * user runs it (process start to exit); promptfoo's own eval duration is reported too when its output has
 * one. Returns a note instead when promptfoo is not installed.
 */
export async function promptfooRun(spec: LoadSpec, requests: number): Promise<PromptfooRun | string> {
  const main = promptfooMain();
  if (!main) return 'promptfoo not installed, skipped (run bench/peers/setup.sh)';
  const dir = mkdtempSync(join(tmpdir(), 'probate-promptfoo-'));
  try {
    const cfg = join(dir, 'promptfooconfig.yaml');
    const out = join(dir, 'out.json');
    writeFileSync(cfg, config(spec, requests));
    const env = {
      ...process.env,
      PROMPTFOO_DISABLE_TELEMETRY: '1',
      PROMPTFOO_DISABLE_UPDATE: '1',
      PROMPTFOO_CONFIG_DIR: join(dir, 'home'),
      PROMPTFOO_CACHE_ENABLED: 'false',
      OPENAI_API_KEY: 'bench',
    };
    const args = [main, 'eval', '-c', cfg, '-j', String(spec.concurrency), '--no-cache', '--no-table'];
    args.push('--no-progress-bar', '-o', out);
    const t0 = performance.now();
    let stdout = '';
    try {
      stdout = (
        await run(process.execPath, args, { env, cwd: dir, timeout: 900_000, maxBuffer: 64 * 1024 * 1024 })
      ).stdout;
    } catch (err) {
      // promptfoo exits non-zero when any assertion fails; there are none here, so only a crash lands here.
      if (!existsSync(out)) return `promptfoo failed: ${(err as Error).message.split('\n')[0]}`;
      stdout = String((err as { stdout?: unknown }).stdout ?? '');
    }
    const seconds = (performance.now() - t0) / 1000;
    const parsed = JSON.parse(readFileSync(out, 'utf8')) as {
      results?: {
        stats?: {
          successes?: number;
          failures?: number;
          errors?: number;
          tokenUsage?: { completion?: number };
        };
      };
    };
    const stats = parsed.results?.stats ?? {};
    const ok = (stats.successes ?? 0) + (stats.failures ?? 0);
    const internal = evalDuration(stdout);
    const tokens = stats.tokenUsage?.completion;
    return {
      requests: ok,
      errors: stats.errors ?? requests - ok,
      seconds: Number(seconds.toFixed(3)),
      requests_per_s: Number((ok / seconds).toFixed(2)),
      output_tokens_per_s: tokens ? Number((tokens / seconds).toFixed(1)) : null,
      latency_ms: null,
      internal_seconds: internal,
      internal_requests_per_s: internal ? Number((ok / internal).toFixed(2)) : null,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
