import type { z } from 'zod';
import type { AttemptObserver } from '../types.ts';
import type { BreakerOptions } from './breaker.ts';
import type { HedgeOptions } from './hedge.ts';
import type { RetryOptions } from './retry.ts';

// What an HTTP transport is given: its servers, limits and policies (src/endpoints/http/transport.ts).

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
  /** Second attempts for generations slower than their peers; `false` turns hedging off. */
  hedge?: HedgeOptions | false;
  breaker?: BreakerOptions;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  now?: () => number;
}

export interface RequestSpec<T> {
  method: 'GET' | 'POST';
  /** Path below the server root, e.g. `/v1/completions` or `/version`. */
  path: string;
  body?: unknown;
  /** The body already serialised (then `body` is not read): a caller that keys a cache on it serialises once. */
  json?: string;
  schema: z.ZodType<T>;
  /** Parse the body as SSE and validate the array of events. */
  stream?: boolean;
  /** Work units of a reply (e.g. tokens + 1), so the limiter judges latency per unit. */
  cost?: (value: T) => number;
  /** Parses a non-streamed reply's bytes instead of `JSON.parse` (src/endpoints/http/prompt-logprobs.ts). */
  decode?: (bytes: Buffer) => unknown;
}
