import { Pool } from 'undici';
import { openEndpoint } from '../endpoints/open.ts';
import type { ChatMessage } from '../endpoints/types.ts';
import { percentile } from './metrics.ts';

/** One load run, measured the way `vllm bench serve` does: duration = first request sent → last reply done. */
export interface LoadRun {
  requests: number;
  errors: number;
  seconds: number;
  requests_per_s: number;
  /** Sum of completion tokens / duration (null when the driver cannot see usage). */
  output_tokens_per_s: number | null;
  latency_ms: Percentiles | null;
  /** Time to first non-empty streamed chunk, and (latency − TTFT)/(tokens − 1), when streamed. */
  ttft_ms?: Percentiles | null;
  tpot_ms?: Percentiles | null;
}

export interface Percentiles {
  p50: number;
  p90: number;
  p99: number;
}

export function percentiles(xs: ReadonlyArray<number>): Percentiles | null {
  if (xs.length === 0) return null;
  const r = (x: number) => Number(x.toFixed(3));
  return { p50: r(percentile(xs, 50)), p90: r(percentile(xs, 90)), p99: r(percentile(xs, 99)) };
}

export interface LoadSpec {
  /** Server root, e.g. http://127.0.0.1:8000 (no /v1). */
  root: string;
  model: string;
  concurrency: number;
  requests: number;
  maxTokens: number;
  /** Prompts cycled over requests (request i gets prompt i mod n). */
  prompts: string[];
  /**
   * autocannon runs for this many seconds instead of a request count: in `amount` mode it notices the end
   * only on its 1 s tick, so a sub-second run would be timed as a whole second.
   */
  autocannonSeconds?: number;
}

export function chatBody(spec: LoadSpec, i: number): Record<string, unknown> {
  return {
    model: spec.model,
    messages: [{ role: 'user', content: spec.prompts[i % spec.prompts.length] }],
    max_tokens: spec.maxTokens,
    temperature: 0,
  };
}

/** Closed-loop load: `concurrency` workers, each sending its next request when the previous one is done. */
async function closedLoop(
  spec: LoadSpec,
  one: (i: number) => Promise<{ tokens?: number; ttft?: number; tpot?: number }>,
): Promise<LoadRun> {
  let next = 0;
  let errors = 0;
  let tokens = 0;
  let sawTokens = false;
  const latency: number[] = [];
  const ttft: number[] = [];
  const tpot: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: spec.concurrency }, async () => {
      for (let i = next++; i < spec.requests; i = next++) {
        const start = performance.now();
        try {
          const r = await one(i);
          latency.push(performance.now() - start);
          if (r.tokens !== undefined) {
            tokens += r.tokens;
            sawTokens = true;
          }
          if (r.ttft !== undefined) ttft.push(r.ttft);
          if (r.tpot !== undefined) tpot.push(r.tpot);
        } catch {
          errors++;
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const done = spec.requests - errors;
  return {
    requests: done,
    errors,
    seconds: Number(seconds.toFixed(4)),
    requests_per_s: Number((done / seconds).toFixed(1)),
    output_tokens_per_s: sawTokens ? Number((tokens / seconds).toFixed(1)) : null,
    latency_ms: percentiles(latency),
    ...(ttft.length ? { ttft_ms: percentiles(ttft), tpot_ms: percentiles(tpot) } : {}),
  };
}

/** probate's own vLLM client (limiter, retries, zod validation, attempt records): the audit's request path. */
export async function probateClientRun(spec: LoadSpec, opts: { stream?: boolean } = {}): Promise<LoadRun> {
  const ep = await openEndpoint(`vllm:${spec.root}#${spec.model}`, {
    concurrency: spec.concurrency,
    fingerprint: false,
    stream: opts.stream,
  });
  try {
    await ep.chat({
      messages: [{ role: 'user', content: 'warm up' }],
      params: { maxTokens: 4, temperature: 0 },
    });
    return await closedLoop(spec, async (i) => {
      const messages: ChatMessage[] = [{ role: 'user', content: spec.prompts[i % spec.prompts.length]! }];
      const [c] = await ep.chat({ messages, params: { maxTokens: spec.maxTokens, temperature: 0 } });
      return { tokens: c?.usage.completionTokens };
    });
  } finally {
    await ep.close();
  }
}

/**
 * A bare streaming client on an undici Pool: TTFT = first non-empty content chunk, TPOT = (latency − TTFT) /
 * (output tokens − 1), output tokens from the final usage chunk — `vllm bench serve`'s definitions.
 */
export async function streamedRun(spec: LoadSpec): Promise<LoadRun> {
  const pool = new Pool(spec.root, { connections: spec.concurrency, keepAliveTimeout: 4000 });
  try {
    return await closedLoop(spec, async (i) => {
      const start = performance.now();
      const res = await pool.request({
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...chatBody(spec, i), stream: true, stream_options: { include_usage: true } }),
      });
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new Error(`HTTP ${res.statusCode}`);
      }
      let ttft: number | undefined;
      let tokens = 0;
      let buf = '';
      for await (const chunk of res.body) {
        buf += chunk.toString();
        let nl = buf.indexOf('\n\n');
        while (nl >= 0) {
          const event = buf.slice(0, nl).replace(/^data: /, '');
          buf = buf.slice(nl + 2);
          nl = buf.indexOf('\n\n');
          if (event === '[DONE]' || !event) continue;
          const data = JSON.parse(event) as {
            choices?: { delta?: { content?: string | null } }[];
            usage?: { completion_tokens?: number };
            error?: unknown;
          };
          if (data.error) throw new Error('stream error event');
          if (ttft === undefined && data.choices?.some((c) => c.delta?.content))
            ttft = performance.now() - start;
          if (data.usage?.completion_tokens) tokens = data.usage.completion_tokens;
        }
      }
      const latency = performance.now() - start;
      const tpot = ttft !== undefined && tokens > 1 ? (latency - ttft) / (tokens - 1) : undefined;
      return { tokens, ttft, tpot };
    });
  } finally {
    await pool.close();
  }
}

/** One HTTP request as sent, for replay. */
export interface RecordedRequest {
  method: string;
  path: string;
  body: string;
}

/**
 * autocannon at the same concurrency against the same endpoint: the HTTP ceiling the clients are held to.
 * By default it repeats one chat request; given `requests`, every connection sends them in order, cycling
 * (the audit path's own requests: the same work on the server and the wire, none of the audit's).
 */
export async function autocannonRun(
  spec: LoadSpec,
  requests?: readonly RecordedRequest[],
): Promise<LoadRun | string> {
  let autocannon: (opts: object) => Promise<{
    requests: { total: number };
    duration: number;
    errors: number;
    non2xx: number;
    latency: { p50: number; p90: number; p99: number };
  }>;
  try {
    const name = 'autocannon';
    autocannon = (await import(name)).default;
  } catch {
    return 'autocannon not installed, skipped';
  }
  const r = await autocannon({
    url: `${spec.root}/v1/chat/completions`,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(chatBody(spec, 0)),
    // Copies: autocannon writes its built request buffers onto the objects it is given.
    ...(requests?.length ? { requests: requests.map((r) => ({ ...r })) } : {}),
    connections: spec.concurrency,
    duration: spec.autocannonSeconds ?? 5,
  });
  return {
    requests: r.requests.total,
    errors: r.errors + r.non2xx,
    seconds: r.duration,
    requests_per_s: Number((r.requests.total / r.duration).toFixed(1)),
    output_tokens_per_s: null,
    latency_ms: { p50: r.latency.p50, p90: r.latency.p90, p99: r.latency.p99 },
  };
}
