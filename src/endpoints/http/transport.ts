import { Pool } from 'undici';
import type { z } from 'zod';
import { sha256Hex } from '../../util/hash.ts';
import { redactSecrets } from '../refs.ts';
import type { AttemptObserver } from '../types.ts';
import { HttpEndpointError, httpFailure, transportFailure } from './errors.ts';
import { AdaptiveLimiter } from './limiter.ts';
import { DEFAULT_LIMITS, deadline, deadlineError, type HttpLimits, idleError, readCapped } from './limits.ts';
import { nextDelay, type RetryOptions, retryPolicy } from './retry.ts';
import { sseData } from './sse.ts';

export interface HttpTimeouts {
  connectMs?: number;
  /** Whole-request deadline, send to last byte (`--request-timeout`; src/endpoints/http/limits.ts). */
  requestMs?: number;
  /** Non-streamed generations send headers only when done: defaults to the request deadline. */
  headersMs?: number;
  /** Longest silence inside a body, stream or not (`--idle-timeout`): bytes must keep arriving. */
  bodyMs?: number;
  /** Below vLLM/uvicorn's 5 s keep-alive so the client never reuses a socket the server is closing. */
  keepAliveMs?: number;
}

export interface TransportOptions {
  /** Server roots (without `/v1`), one per replica; all serve the same model. */
  roots: string[];
  /** Redacted reference recorded with every attempt. */
  endpoint: string;
  apiKey?: string;
  observer?: AttemptObserver;
  /** Upper bound of requests in flight (all replicas together). Default 16. */
  concurrency?: number;
  timeouts?: HttpTimeouts;
  /** Size caps: generation replies (`--max-reply-bytes`) and metadata (GET) replies. */
  maxReplyBytes?: number;
  maxMetadataBytes?: number;
  retry?: RetryOptions;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

interface Replica {
  root: URL;
  pool: Pool;
  outstanding: number;
}

export interface RequestSpec<T> {
  method: 'GET' | 'POST';
  /** Path below the server root, e.g. `/v1/completions` or `/version`. */
  path: string;
  body?: unknown;
  schema: z.ZodType<T>;
  /** Parse the body as SSE and validate the array of events. */
  stream?: boolean;
  /** Work units of a reply (e.g. tokens + 1), so the limiter judges latency per unit. */
  cost?: (value: T) => number;
}

/**
 * One model's HTTP transport: bounded undici pools per replica, least-outstanding replica choice, an
 * adaptive in-flight cap, bounded retries on 429/5xx/connection errors, and one AttemptRecord per attempt.
 * A failed exchange always ends as a thrown HttpEndpointError, never as a reply.
 */
export class HttpTransport {
  readonly limiter: AdaptiveLimiter;
  private readonly replicas: Replica[];
  private readonly opts: TransportOptions;
  private readonly policy;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly limits: HttpLimits;
  private nextTie = 0;

  constructor(opts: TransportOptions) {
    this.opts = opts;
    this.policy = retryPolicy(opts.retry);
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.random = opts.random ?? Math.random;
    this.now = opts.now ?? Date.now;
    const concurrency = Math.max(1, opts.concurrency ?? 16);
    this.limiter = new AdaptiveLimiter({ max: concurrency, now: this.now });
    const t = opts.timeouts ?? {};
    this.limits = {
      requestMs: t.requestMs ?? DEFAULT_LIMITS.requestMs,
      idleMs: t.bodyMs ?? DEFAULT_LIMITS.idleMs,
      connectMs: t.connectMs ?? DEFAULT_LIMITS.connectMs,
      maxReplyBytes: opts.maxReplyBytes ?? DEFAULT_LIMITS.maxReplyBytes,
      maxMetadataBytes: opts.maxMetadataBytes ?? DEFAULT_LIMITS.maxMetadataBytes,
    };
    const limits = this.limits;
    const keepAlive = Math.min(t.keepAliveMs ?? 4000, 4900);
    this.replicas = opts.roots.map((r) => {
      const root = new URL(r);
      return {
        root,
        outstanding: 0,
        pool: new Pool(root.origin, {
          connections: concurrency,
          pipelining: 1,
          keepAliveTimeout: keepAlive,
          keepAliveMaxTimeout: keepAlive,
          connectTimeout: limits.connectMs,
          headersTimeout: t.headersMs ?? limits.requestMs,
          bodyTimeout: limits.idleMs,
        }),
      };
    });
  }

  /** Outstanding requests per replica (for balancing checks and doctor). */
  outstanding(): number[] {
    return this.replicas.map((r) => r.outstanding);
  }

  /** Runs a request with retries; every attempt reaches the observer. */
  async request<T>(spec: RequestSpec<T>): Promise<T> {
    // Serialised once: the bytes sent on every attempt are the bytes hashed.
    const payload = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const requestHash = sha256Hex(`${spec.method} ${spec.path}\n${payload ?? ''}`);
    for (let attempt = 1; ; attempt++) {
      const startedAt = this.now();
      const started = performance.now();
      let status: number | undefined;
      try {
        const { value, statusCode } = await this.once(spec, payload);
        status = statusCode;
        const durationMs = performance.now() - started;
        // Only generations inform the latency baseline; metadata calls would make it meaninglessly low.
        if (spec.cost) this.limiter.onSuccess(durationMs, spec.cost(value));
        this.report({ attempt, startedAt, durationMs, status, ok: true, requestHash });
        return value;
      } catch (err) {
        const failure = this.redact(transportFailure(err));
        this.report({
          attempt,
          startedAt,
          durationMs: performance.now() - started,
          status: failure.status,
          ok: false,
          failure: { kind: failure.kind, message: failure.message },
          requestHash,
        });
        if (failure.status === 429 || failure.status === 503) this.limiter.onOverload();
        const delay = nextDelay(this.policy, failure, attempt, this.random);
        if (delay === undefined) throw failure.withAttempts(attempt);
        await this.sleep(delay);
      }
    }
  }

  private async once<T>(
    spec: RequestSpec<T>,
    payload: string | undefined,
  ): Promise<{ value: T; statusCode: number }> {
    await this.limiter.acquire();
    const replica = this.pick();
    replica.outstanding++;
    const timer = deadline(this.limits.requestMs);
    try {
      const headers: Record<string, string> = {
        accept: spec.stream ? 'text/event-stream' : 'application/json',
      };
      if (payload !== undefined) headers['content-type'] = 'application/json';
      if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
      const basePath = replica.root.pathname.replace(/\/+$/, '');
      const res = await replica.pool.request({
        path: `${basePath}${spec.path}`,
        method: spec.method,
        headers,
        body: payload,
        signal: timer.signal,
      });
      // Always read (or destroy) the body: an unread body leaks the connection.
      const cap = spec.method === 'GET' ? this.limits.maxMetadataBytes : this.limits.maxReplyBytes;
      const text = await readCapped(res.body, cap, res.headers['content-length'], () => res.body.destroy());
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const retryAfter = res.headers['retry-after'];
        throw httpFailure(
          res.statusCode,
          text,
          Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          this.now(),
        );
      }
      const data = spec.stream ? streamEvents(text) : parseJson(text);
      const parsed = spec.schema.safeParse(data);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new HttpEndpointError(
          'invalid_response',
          `unexpected response from ${spec.path}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
          { status: res.statusCode },
        );
      }
      return { value: parsed.data, statusCode: res.statusCode };
    } catch (err) {
      if (timer.expired()) throw deadlineError(this.limits.requestMs);
      if ((err as { code?: string })?.code === 'UND_ERR_BODY_TIMEOUT') throw idleError(this.limits.idleMs);
      throw err;
    } finally {
      timer.clear();
      replica.outstanding--;
      this.limiter.release();
    }
  }

  /** Least outstanding requests; ties rotate so idle replicas share the load. */
  private pick(): Replica {
    const n = this.replicas.length;
    let best: Replica | undefined;
    for (let i = 0; i < n; i++) {
      const r = this.replicas[(this.nextTie + i) % n]!;
      if (!best || r.outstanding < best.outstanding) best = r;
    }
    this.nextTie = (this.nextTie + 1) % n;
    return best!;
  }

  private redact(err: HttpEndpointError): HttpEndpointError {
    const message = redactSecrets(err.message, [this.opts.apiKey]);
    if (message === err.message) return err;
    return new HttpEndpointError(err.kind, message, {
      status: err.status,
      attempts: err.attempts,
      maxContextLength: err.maxContextLength,
      retryAfterMs: err.retryAfterMs,
      retryable: err.retryable,
    });
  }

  private report(rec: Omit<Parameters<AttemptObserver>[0], 'endpoint'>): void {
    this.opts.observer?.({ endpoint: this.opts.endpoint, ...rec });
  }

  /** Idempotent: closing twice is harmless. */
  async close(): Promise<void> {
    await Promise.all(
      this.replicas.map((r) => (r.pool.closed || r.pool.destroyed ? undefined : r.pool.close())),
    );
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpEndpointError('invalid_response', `response is not JSON: ${text.slice(0, 120)}`);
  }
}

/** SSE body → parsed events. An error event (sent with HTTP 200) or a missing `[DONE]` fails the exchange. */
function streamEvents(text: string): unknown[] {
  const { events, done } = sseData(text);
  const parsed = events.map(parseJson);
  for (const event of parsed) {
    const error = (event as { error?: { message?: unknown; code?: unknown } })?.error;
    if (error) {
      const code = typeof error.code === 'number' ? error.code : undefined;
      const message = typeof error.message === 'string' ? error.message : JSON.stringify(error);
      throw new HttpEndpointError('stream_error', `error event in stream: ${message}`, {
        status: code,
        retryable: code === undefined || code === 429 || code >= 500,
      });
    }
  }
  if (!done) throw new HttpEndpointError('stream_error', 'stream ended without [DONE]', { retryable: true });
  return parsed;
}
