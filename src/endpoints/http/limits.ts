import { HttpEndpointError } from './errors.ts';
import { Cancel } from './hedge.ts';

/**
 * Deadlines and size caps on every HTTP read (README "Deadlines and size caps"). A server that trickles
 * one byte a second, or answers 100 MB, must fail the request, never hang the audit or fill the ledger.
 */
export interface HttpLimits {
  /** Whole request, from sending to the last body byte (`--request-timeout`). */
  requestMs: number;
  /** Longest silence while headers or body bytes are awaited (`--idle-timeout`). */
  idleMs: number;
  /** TCP connect (`--connect-timeout`). */
  connectMs: number;
  /** Largest generation reply accepted (`--max-reply-bytes`); more is a `truncated` failure. */
  maxReplyBytes: number;
  /** Largest metadata reply (`/version`, `/v1/models`, `/tokenize`). */
  maxMetadataBytes: number;
}

export const DEFAULT_LIMITS: Readonly<HttpLimits> = {
  requestMs: 120_000,
  idleMs: 30_000,
  connectMs: 10_000,
  maxReplyBytes: 8 * 1024 * 1024,
  maxMetadataBytes: 1024 * 1024,
};

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

/** An abort signal that fires after `ms`; `clear` stops the timer once the request is done. */
export function deadline(ms: number): {
  signal: AbortSignal;
  clear: () => void;
  expired: () => boolean;
  /** Ends the request early for another reason (a lost hedge race); the caller knows which. */
  abort: () => void;
} {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(deadlineError(ms)), ms);
  timer.unref?.();
  return {
    signal: controller.signal,
    clear: () => clearTimeout(timer),
    expired: () => controller.signal.aborted,
    abort: () => controller.abort(),
  };
}

/**
 * The same deadline on a `Cancel`: the transport sets one per request, and an AbortController (an
 * EventTarget, its listeners, a DOMException) was a visible share of the audit's per-request cost. `fetch`
 * (hf.ts) needs a real AbortSignal and keeps `deadline`.
 */
export class RequestDeadline {
  readonly signal = new Cancel();
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(ms: number) {
    this.timer = setTimeout(abortSignal, ms, this.signal);
    this.timer.unref?.();
  }

  clear(): void {
    clearTimeout(this.timer);
  }

  /** Whether the signal fired (the deadline, or `abort` for another reason the caller knows). */
  expired(): boolean {
    return this.signal.aborted;
  }

  abort(): void {
    this.signal.abort();
  }
}

function abortSignal(signal: Cancel): void {
  signal.abort();
}

export function deadlineError(ms: number): HttpEndpointError {
  return new HttpEndpointError('timeout', `no complete reply within ${seconds(ms)} (--request-timeout)`);
}

export function idleError(ms: number): HttpEndpointError {
  return new HttpEndpointError(
    'timeout',
    `no bytes for ${seconds(ms)} while waiting for the reply (--idle-timeout)`,
  );
}

/**
 * Reads a body whole, at most `maxBytes`: a longer one (announced or actual) is destroyed and fails as
 * `truncated`, so an oversized reply is never parsed, stored or counted as a reply.
 */
export async function readCapped(
  body: AsyncIterable<Uint8Array>,
  maxBytes: number,
  announced: string | string[] | null | undefined,
  stop: () => void,
): Promise<Buffer> {
  const refused = announcedOverCap(announced, maxBytes);
  if (refused) {
    stop();
    throw refused;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      stop();
      throw arrivedOverCap(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** A `Content-Length` over the cap: refused before the body is read. */
export function announcedOverCap(
  announced: string | string[] | null | undefined,
  maxBytes: number,
): HttpEndpointError | undefined {
  const length = Number(Array.isArray(announced) ? announced[0] : (announced ?? undefined));
  return Number.isFinite(length) && length > maxBytes
    ? tooLarge(maxBytes, `announced ${length} bytes`)
    : undefined;
}

/** More bytes arrived than the cap allows. */
export function arrivedOverCap(maxBytes: number): HttpEndpointError {
  return tooLarge(maxBytes, `more than ${maxBytes} bytes arrived`);
}

function tooLarge(maxBytes: number, what: string): HttpEndpointError {
  return new HttpEndpointError(
    'truncated',
    `reply over the ${maxBytes}-byte cap (${what}; --max-reply-bytes): cut off, not used`,
  );
}
