import { UserError } from '../util/errors.ts';
import { withCache } from './cache.ts';
import type { StructuredField } from './http/capabilities.ts';
import { HfEndpoint } from './http/hf.ts';
import type { RetryOptions } from './http/retry.ts';
import type { HttpTimeouts } from './http/transport.ts';
import { VllmEndpoint } from './http/vllm.ts';
import { type ModelRef, parseModelRef } from './refs.ts';
import type { AttemptObserver, ModelEndpoint } from './types.ts';

export interface OpenOptions {
  /** Name of the environment variable holding the API key (`--api-key-env`). Never the key itself. */
  apiKeyEnv?: string;
  env?: NodeJS.ProcessEnv;
  /** Wrap the endpoint in the response cache stored here (RUN/cache). */
  cacheDir?: string;
  observer?: AttemptObserver;
  /** Most requests in flight (HTTP) ; threads for local. */
  concurrency?: number;
  threads?: number;
  timeouts?: HttpTimeouts;
  /** Reply size cap (`--max-reply-bytes`); src/endpoints/http/limits.ts has the default. */
  maxReplyBytes?: number;
  retry?: RetryOptions;
  /** Use SSE streaming for vLLM generations. */
  stream?: boolean;
  structuredField?: StructuredField;
  /** Compute the greedy-reply fingerprint in identity(). Default true. */
  fingerprint?: boolean;
}

/** hf: falls back to the conventional HF_TOKEN variable when no --api-key-env is named. */
const HF_DEFAULT_ENV = 'HF_TOKEN';

/** Opens any model reference as a ModelEndpoint. */
export async function openEndpoint(input: string | ModelRef, opts: OpenOptions = {}): Promise<ModelEndpoint> {
  const ref = typeof input === 'string' ? parseModelRef(input) : input;
  const env = opts.env ?? process.env;
  const apiKey =
    readApiKey(opts.apiKeyEnv, env) ?? (ref.kind === 'hf' ? env[HF_DEFAULT_ENV] || undefined : undefined);
  let endpoint: ModelEndpoint;
  switch (ref.kind) {
    case 'local': {
      const { openLocalEndpoint } = await import('./local/index.ts');
      endpoint = await openLocalEndpoint(ref.dir, { threads: opts.threads });
      break;
    }
    case 'vllm':
      endpoint = new VllmEndpoint({
        urls: ref.urls,
        model: ref.model,
        ref: ref.ref,
        apiKey,
        observer: opts.observer,
        concurrency: opts.concurrency,
        timeouts: opts.timeouts,
        maxReplyBytes: opts.maxReplyBytes,
        retry: opts.retry,
        stream: opts.stream,
        structuredField: opts.structuredField,
        fingerprint: opts.fingerprint,
      });
      break;
    case 'hf':
    case 'hf-endpoint':
      // Without a token every hf: request is a 401: say so now, not as a run of failed exchanges.
      if (ref.kind === 'hf' && !apiKey)
        throw new UserError(
          `${ref.ref}: no API key: set ${HF_DEFAULT_ENV} or name the variable holding it with --api-key-env`,
        );
      endpoint = new HfEndpoint({
        kind: ref.kind,
        model: ref.model,
        endpointUrl: ref.kind === 'hf-endpoint' ? ref.url : undefined,
        ref: ref.ref,
        accessToken: apiKey,
        observer: opts.observer,
        concurrency: opts.concurrency,
        retry: opts.retry,
        timeouts: opts.timeouts,
        maxReplyBytes: opts.maxReplyBytes,
      });
      break;
  }
  return opts.cacheDir ? withCache(endpoint, opts.cacheDir) : endpoint;
}

/** The key named by `--api-key-env`; a named but unset variable is a configuration error. */
export function readApiKey(name: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (name === undefined) return undefined;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new UserError(`--api-key-env: "${name}" is not an environment variable name`);
  }
  const value = env[name];
  if (!value) throw new UserError(`--api-key-env: environment variable ${name} is not set`);
  return value;
}
