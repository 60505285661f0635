import { UserError } from '../util/errors.ts';
import { withCache } from './cache.ts';
import type { StructuredField } from './http/capabilities.ts';
import type { DoctorReport } from './http/doctor.ts';
import type { RetryOptions } from './http/retry.ts';
import type { HttpTimeouts } from './http/transport-options.ts';
import { ENDPOINT_KINDS } from './kinds/index.ts';
import type { EndpointKindTable, OpenContext } from './kinds/types.ts';
import { kindOf, type ModelRef, parseModelRef } from './refs.ts';
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

/** Opens any model reference as a ModelEndpoint, with the opener its kind declares. */
export async function openEndpoint(
  input: string | ModelRef,
  opts: OpenOptions = {},
  kinds: EndpointKindTable = ENDPOINT_KINDS,
): Promise<ModelEndpoint> {
  const ref = typeof input === 'string' ? parseModelRef(input, undefined, kinds) : input;
  const endpoint = await kindOf(ref, kinds).open(ref, openContext(opts));
  return opts.cacheDir ? withCache(endpoint, opts.cacheDir) : endpoint;
}

/** `probate doctor`: the pre-flight the reference's kind declares. */
export async function doctorEndpoint(
  input: string | ModelRef,
  opts: OpenOptions = {},
  kinds: EndpointKindTable = ENDPOINT_KINDS,
): Promise<DoctorReport> {
  const ref = typeof input === 'string' ? parseModelRef(input, undefined, kinds) : input;
  return kindOf(ref, kinds).doctor(ref, openContext(opts));
}

function openContext(opts: OpenOptions): OpenContext {
  const env = opts.env ?? process.env;
  return { ...opts, env, apiKey: readApiKey(opts.apiKeyEnv, env) };
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
