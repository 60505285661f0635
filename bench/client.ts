/**
 * Client overhead benchmark: probate's vLLM client (limiter, retries, zod validation, attempt records)
 * against a raw undici Pool and autocannon, all driving the same zero-latency vLLM-shaped server in a
 * child process at the same concurrency. Prints one JSON object: requests/s min/median/max over runs.
 *   node --import tsx bench/client.ts [--concurrency 16] [--requests 2000] [--runs 5]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { VllmEndpoint } from '../src/endpoints/http/vllm.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const C = arg('concurrency', 16);
const M = arg('requests', 2000);
const RUNS = arg('runs', 5);
const body = {
  model: 'delivered',
  messages: [{ role: 'user', content: 'hello' }],
  max_tokens: 32,
  temperature: 0,
};

async function startServer(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./client-server.ts', import.meta.url).pathname],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  return { url: line.replace('listening ', ''), stop: () => child.kill('SIGTERM') };
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return M / ((performance.now() - t0) / 1000);
}

async function drive(worker: () => Promise<void>): Promise<void> {
  let left = M;
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (left-- > 0) await worker();
    }),
  );
}

async function probateClient(url: string): Promise<number> {
  const ep = new VllmEndpoint({
    urls: [url],
    model: 'delivered',
    ref: 'bench',
    concurrency: C,
    fingerprint: false,
  });
  await ep.capabilities();
  const rate = await timed(() =>
    drive(async () => {
      await ep.chat({ messages: body.messages as never, params: { maxTokens: 32, temperature: 0 } });
    }),
  );
  await ep.close();
  return rate;
}

async function rawUndici(url: string): Promise<number> {
  const origin = new URL(url).origin;
  const pool = new Pool(origin, { connections: C, keepAliveTimeout: 4000 });
  const payload = JSON.stringify(body);
  const rate = await timed(() =>
    drive(async () => {
      const res = await pool.request({
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: payload,
      });
      await res.body.json();
    }),
  );
  await pool.close();
  return rate;
}

async function autocannonRun(url: string): Promise<number | string> {
  let autocannon: (opts: object) => Promise<{ requests: { total: number }; duration: number }>;
  try {
    const name = 'autocannon';
    autocannon = (await import(name)).default;
  } catch {
    return 'not installed (add autocannon as a devDependency)';
  }
  const result = await autocannon({
    url: `${new URL(url).origin}/v1/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    connections: C,
    amount: M,
  });
  return result.requests.total / result.duration;
}

function summary(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x);
  return { min: round(s[0]!), median: round(s[Math.floor(s.length / 2)]!), max: round(s.at(-1)!) };
}

const server = await startServer();
try {
  const results: Record<string, number[]> = { probate: [], undici: [] };
  const cannon: number[] = [];
  let cannonNote: string | undefined;
  for (let r = 0; r < RUNS; r++) {
    results.probate!.push(await probateClient(server.url));
    results.undici!.push(await rawUndici(server.url));
    const a = await autocannonRun(server.url);
    if (typeof a === 'number') cannon.push(a);
    else cannonNote = a;
  }
  const out = {
    bench: 'client',
    concurrency: C,
    requests: M,
    runs: RUNS,
    requests_per_s: {
      probate: summary(results.probate!),
      undici_raw: summary(results.undici!),
      autocannon: cannon.length ? summary(cannon) : cannonNote,
    },
  };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
} finally {
  server.stop();
}
