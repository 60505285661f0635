import type { InferenceClient } from '@huggingface/inference';
import { hashJson } from '../../util/hash.ts';
import { redactSecrets } from '../redact.ts';
import type {
  AttemptObserver,
  ChatRequest,
  Completion,
  CompletionRequest,
  ModelEndpoint,
  ModelIdentity,
  ScoreRequest,
  ScoreResult,
} from '../types.ts';
import { chatResponseToCompletions } from './convert.ts';
import { HttpEndpointError, httpFailure, transportFailure } from './errors.ts';
import { AdaptiveLimiter } from './limiter.ts';
import { DEFAULT_LIMITS, deadline, deadlineError, readCapped } from './limits.ts';
import { nextDelay, type RetryOptions, retryPolicy } from './retry.ts';
import { chatResponseSchema } from './schemas.ts';
import type { HttpTimeouts } from './transport-options.ts';

export interface HfOptions {
  kind: 'hf' | 'hf-endpoint';
  model: string;
  /** Dedicated endpoint URL (hf-endpoint:): no Hub calls are made. */
  endpointUrl?: string;
  ref: string;
  accessToken?: string;
  observer?: AttemptObserver;
  concurrency?: number;
  retry?: RetryOptions;
  /** Request deadline and idle timeout are not separate here: fetch has one deadline (`requestMs`). */
  timeouts?: HttpTimeouts;
  maxReplyBytes?: number;
  /** For tests and proxies; defaults to global fetch. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

/** Marks an operation the backend cannot perform (the audit records it and falls back). */
export function unsupported(ref: string, what: string): HttpEndpointError {
  return new HttpEndpointError('http', `${ref}: ${what} is not supported by this endpoint`, { status: 501 });
}

/**
 * Hugging Face Inference (Providers or a dedicated endpoint) through @huggingface/inference's
 * `chatCompletion`. Its own 503 retry loop (unbounded, immediate) is turned off; retries here follow
 * probate's bounded policy and every attempt is reported. No teacher forcing: score() is unsupported.
 */
export class HfEndpoint implements ModelEndpoint {
  readonly ref: string;
  private clientPromise: Promise<InferenceClient> | undefined;
  private readonly limiter: AdaptiveLimiter;
  private readonly opts: HfOptions;

  constructor(opts: HfOptions) {
    this.opts = opts;
    this.ref = opts.ref;
    this.limiter = new AdaptiveLimiter({ max: opts.concurrency ?? 8 });
  }

  /** The client library is imported on first use, so the CLI starts without it. */
  private client(): Promise<InferenceClient> {
    this.clientPromise ??= import('@huggingface/inference').then(
      ({ InferenceClient }) => new InferenceClient(this.opts.accessToken),
    );
    return this.clientPromise;
  }

  async identity(): Promise<ModelIdentity> {
    return { ref: this.ref, kind: this.opts.kind, modelId: this.opts.model };
  }

  async chat(req: ChatRequest): Promise<Completion[]> {
    const n = req.params.n ?? 1;
    const args: Record<string, unknown> = {
      model: this.opts.model,
      messages: req.messages,
      max_tokens: req.params.maxTokens,
      temperature: req.params.temperature,
      top_p: req.params.topP,
      seed: req.params.seed,
      n: n === 1 ? undefined : n,
      stop: req.params.stop,
    };
    if (req.params.logprobs !== undefined)
      Object.assign(args, { logprobs: true, top_logprobs: req.params.logprobs });
    if (req.structuredOutput) {
      const { name, schema } = req.structuredOutput;
      args.response_format = { type: 'json_schema', json_schema: { name, schema, strict: true } };
    }
    if (this.opts.endpointUrl) args.endpointUrl = this.opts.endpointUrl;
    else args.provider = 'auto';
    const clean = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
    const raw = await this.attempts(clean);
    const parsed = chatResponseSchema.safeParse(raw);
    if (!parsed.success) {
      throw new HttpEndpointError('invalid_response', `${this.ref}: unexpected chat completion shape`);
    }
    return chatResponseToCompletions(parsed.data, n);
  }

  async complete(_req: CompletionRequest): Promise<Completion[]> {
    throw unsupported(this.ref, 'raw completion');
  }

  async score(_reqs: ScoreRequest[]): Promise<ScoreResult[]> {
    throw unsupported(this.ref, 'teacher-forced scoring (prompt logprobs)');
  }

  async close(): Promise<void> {}

  private async attempts(args: Record<string, unknown>): Promise<unknown> {
    const policy = retryPolicy(this.opts.retry);
    const random = this.opts.random ?? Math.random;
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
    const requestHash = hashJson({ path: 'chatCompletion', body: args });
    for (let attempt = 1; ; attempt++) {
      const startedAt = Date.now();
      const t0 = performance.now();
      const inFlight = await this.limiter.acquire();
      // The library drops response headers from its errors; keep Retry-After by watching the fetch.
      let retryAfter: string | undefined;
      const baseFetch = this.opts.fetch ?? fetch;
      const watched: typeof fetch = (input, init) =>
        cappedFetch(baseFetch, input, init, {
          requestMs: this.opts.timeouts?.requestMs ?? DEFAULT_LIMITS.requestMs,
          maxBytes: this.opts.maxReplyBytes ?? DEFAULT_LIMITS.maxReplyBytes,
          onHeaders: (h) => {
            retryAfter = h.get('retry-after') ?? undefined;
          },
        });
      try {
        const out = await (await this.client()).chatCompletion(args as never, {
          retry_on_error: false,
          fetch: watched,
        });
        this.limiter.onSuccess(performance.now() - t0, (out.usage?.completion_tokens ?? 0) + 1);
        this.limiter.onOutcome(inFlight, false);
        this.report({
          attempt,
          startedAt,
          durationMs: performance.now() - t0,
          status: 200,
          ok: true,
          requestHash,
        });
        return out;
      } catch (err) {
        const failure = this.classify(err, retryAfter);
        this.report({
          attempt,
          startedAt,
          durationMs: performance.now() - t0,
          status: failure.status,
          ok: false,
          failure: { kind: failure.kind, message: failure.message },
          requestHash,
        });
        this.limiter.onOutcome(inFlight, failure.status === 429 || failure.status === 503);
        const delay = nextDelay(policy, failure, attempt, random);
        if (delay === undefined) throw failure.withAttempts(attempt);
        await sleep(delay);
      } finally {
        this.limiter.release();
      }
    }
  }

  /** @huggingface/inference errors carry `.httpResponse {status, body}`; others are transport failures. */
  private classify(err: unknown, retryAfter: string | undefined): HttpEndpointError {
    const e = err as { httpResponse?: { status?: number; body?: unknown } };
    let failure: HttpEndpointError;
    if (e?.httpResponse?.status) {
      const body = e.httpResponse.body;
      const text = typeof body === 'string' ? body : JSON.stringify(body ?? '');
      failure = httpFailure(e.httpResponse.status, text, retryAfter, Date.now());
    } else {
      const cause = (err as { cause?: unknown })?.cause;
      failure = transportFailure(cause ?? err);
    }
    const message = redactSecrets(failure.message, [this.opts.accessToken]);
    return new HttpEndpointError(failure.kind, message, {
      status: failure.status,
      maxContextLength: failure.maxContextLength,
      retryAfterMs: failure.retryAfterMs,
      retryable: failure.retryable,
    });
  }

  private report(rec: Omit<Parameters<AttemptObserver>[0], 'endpoint'>): void {
    this.opts.observer?.({ endpoint: this.ref, ...rec });
  }
}

/**
 * fetch under the request deadline and the reply size cap: the body is read here (capped) and handed on
 * whole, so the library never reads an unbounded or endless reply.
 */
async function cappedFetch(
  baseFetch: typeof fetch,
  input: Parameters<typeof fetch>[0],
  init: Parameters<typeof fetch>[1],
  o: { requestMs: number; maxBytes: number; onHeaders: (h: Headers) => void },
): Promise<Response> {
  const timer = deadline(o.requestMs);
  const signal = init?.signal ? AbortSignal.any([init.signal, timer.signal]) : timer.signal;
  try {
    const res = await baseFetch(input, { ...init, signal });
    o.onHeaders(res.headers);
    const bytes = res.body
      ? await readCapped(
          res.body as unknown as AsyncIterable<Uint8Array>,
          o.maxBytes,
          res.headers.get('content-length'),
          () => void res.body?.cancel().catch(() => {}),
        )
      : undefined;
    return new Response(bytes, { status: res.status, statusText: res.statusText, headers: res.headers });
  } catch (err) {
    if (timer.expired()) throw deadlineError(o.requestMs);
    throw err;
  } finally {
    timer.clear();
  }
}
