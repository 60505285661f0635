import type { HttpEndpointError } from './errors.ts';

export interface RetryOptions {
  /** Total attempts including the first. Default 4. */
  maxAttempts?: number;
  /** Base of the exponential backoff. Default 500 ms. */
  baseDelayMs?: number;
  /** Cap of one backoff delay. Default 20 s. */
  maxDelayMs?: number;
  /** A `Retry-After` longer than this ends the retries (honoured, not shortened). Default 60 s. */
  maxRetryAfterMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export function retryPolicy(opts: RetryOptions = {}): RetryPolicy {
  return {
    maxAttempts: Math.max(1, opts.maxAttempts ?? 4),
    baseDelayMs: opts.baseDelayMs ?? 500,
    maxDelayMs: opts.maxDelayMs ?? 20_000,
    maxRetryAfterMs: opts.maxRetryAfterMs ?? 60_000,
  };
}

/**
 * How long to wait before attempt `attempt + 1`, or undefined to stop. Full-jitter exponential backoff;
 * a server's `Retry-After` is a floor (plus up to 10% jitter so replicas of one client do not stampede).
 */
export function nextDelay(
  policy: RetryPolicy,
  failure: HttpEndpointError,
  attempt: number,
  random: () => number,
): number | undefined {
  if (!failure.retryable || attempt >= policy.maxAttempts) return undefined;
  if (failure.retryAfterMs !== undefined) {
    if (failure.retryAfterMs > policy.maxRetryAfterMs) return undefined;
    return failure.retryAfterMs + random() * 0.1 * failure.retryAfterMs;
  }
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return random() * ceiling;
}
