import { z } from 'zod';
import { EndpointError, type FailureKind } from '../types.ts';

/** An EndpointError from the HTTP layer: keeps its cause, the parsed context limit and any Retry-After. */
export class HttpEndpointError extends EndpointError {
  /** From a context-length 400 (`maximum context length is N`): the caller may shorten or skip. */
  readonly maxContextLength?: number;
  /** Server-requested wait before a retry, in ms. */
  readonly retryAfterMs?: number;
  readonly retryable: boolean;
  override readonly cause?: unknown;
  constructor(
    kind: FailureKind,
    message: string,
    opts: {
      status?: number;
      attempts?: number;
      cause?: unknown;
      maxContextLength?: number;
      retryAfterMs?: number;
      retryable?: boolean;
    } = {},
  ) {
    super(kind, message, { status: opts.status, attempts: opts.attempts });
    this.cause = opts.cause;
    this.maxContextLength = opts.maxContextLength;
    this.retryAfterMs = opts.retryAfterMs;
    this.retryable = opts.retryable ?? false;
  }

  /** The same failure with the final attempt count (what the caller sees after retries). */
  withAttempts(attempts: number): HttpEndpointError {
    return new HttpEndpointError(this.kind, this.message, {
      status: this.status,
      attempts,
      cause: this.cause,
      maxContextLength: this.maxContextLength,
      retryAfterMs: this.retryAfterMs,
      retryable: this.retryable,
    });
  }
}

const errorDetail = z.looseObject({
  message: z.string(),
  type: z.string().nullish(),
  param: z.string().nullish(),
  code: z.union([z.number(), z.string()]).nullish(),
});

/** vLLM ≥ 0.10.1 nests the error; older servers answer flat `{"object":"error",...}`; 401 is `{"error":"..."}`. */
const errorBody = z.union([
  z.looseObject({ error: errorDetail }),
  z.looseObject({ object: z.literal('error'), message: z.string() }),
  z.looseObject({ error: z.string() }),
  z.looseObject({ detail: z.union([z.string(), z.array(z.unknown())]) }),
]);

export type ErrorShape = 'flat' | 'nested';

/** Extracts the human message from any known vLLM error body; falls back to a snippet of the raw text. */
export function errorMessage(raw: string): { message: string; shape?: ErrorShape } {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return { message: snippet(raw) || '(empty body)' };
  }
  const parsed = errorBody.safeParse(data);
  if (!parsed.success) return { message: snippet(raw) };
  const body = parsed.data as Record<string, unknown>;
  if (typeof body.error === 'object' && body.error) {
    return { message: String((body.error as { message: string }).message), shape: 'nested' };
  }
  if (body.object === 'error') return { message: String(body.message), shape: 'flat' };
  if (typeof body.error === 'string') return { message: body.error };
  return { message: typeof body.detail === 'string' ? body.detail : snippet(JSON.stringify(body.detail)) };
}

function snippet(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

const CONTEXT_RE = /maximum context length is (\d+)/i;

/** Maps a non-2xx response to a typed failure. Only 429 and 5xx are retryable. */
export function httpFailure(status: number, body: string, retryAfter: string | undefined, now: number) {
  const { message } = errorMessage(body);
  const retryAfterMs = parseRetryAfter(retryAfter, now);
  const context = CONTEXT_RE.exec(message);
  if (status === 400 && context) {
    return new HttpEndpointError('context_length', `HTTP 400: ${message}`, {
      status,
      maxContextLength: Number(context[1]),
    });
  }
  if (status === 429) {
    return new HttpEndpointError('rate_limited', `HTTP 429: ${message}`, {
      status,
      retryAfterMs,
      retryable: true,
    });
  }
  if (status >= 500) {
    return new HttpEndpointError('server_error', `HTTP ${status}: ${message}`, {
      status,
      retryAfterMs,
      retryable: true,
    });
  }
  return new HttpEndpointError('http', `HTTP ${status}: ${message}`, { status });
}

/** `Retry-After` as delta-seconds or an HTTP date → milliseconds from `now` (undefined if absent/invalid). */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

/** Maps a thrown transport error (undici, socket, abort) to a typed failure. Connection errors retry. */
export function transportFailure(err: unknown): HttpEndpointError {
  if (err instanceof HttpEndpointError) return err;
  const e = err as { code?: string; name?: string; message?: string };
  const code = e?.code ?? '';
  const what = `${code || e?.name || 'Error'}: ${e?.message ?? String(err)}`;
  if (TIMEOUT_CODES.has(code) || e?.name === 'TimeoutError') {
    // Not retried: a stalled generation most likely still holds a server slot.
    return new HttpEndpointError('timeout', what, { cause: err });
  }
  return new HttpEndpointError('connection', what, { cause: err, retryable: true });
}
