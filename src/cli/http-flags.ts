import type { Argv } from 'yargs';
import { DEFAULT_LIMITS } from '../endpoints/http/limits.ts';
import type { OpenOptions } from '../endpoints/open.ts';

/** Flags every command that talks to a model server shares: deadlines, the reply cap and API keys. */
export interface HttpFlagArgs {
  requestTimeout: number;
  idleTimeout: number;
  connectTimeout: number;
  maxReplyBytes: number;
  apiKeyEnv?: string;
  [roleKey: `${string}ApiKeyEnv`]: string | undefined;
}

const s = (ms: number) => ms / 1000;

/** Adds the deadline and size-cap flags (defaults in src/endpoints/http/limits.ts, documented in README). */
export function withHttpFlags<T>(y: Argv<T>): Argv<T> {
  return y
    .option('request-timeout', {
      type: 'number',
      default: s(DEFAULT_LIMITS.requestMs),
      describe: 'seconds one request may take, send to last byte',
    })
    .option('idle-timeout', {
      type: 'number',
      default: s(DEFAULT_LIMITS.idleMs),
      describe: 'seconds a reply may go without a byte arriving',
    })
    .option('connect-timeout', {
      type: 'number',
      default: s(DEFAULT_LIMITS.connectMs),
      describe: 'seconds to open a connection',
    })
    .option('max-reply-bytes', {
      type: 'number',
      default: DEFAULT_LIMITS.maxReplyBytes,
      describe: 'largest reply accepted; a longer one is a truncated failure',
    }) as unknown as Argv<T>;
}

/**
 * Adds `--api-key-env` and one `--ROLE-api-key-env` per role (base, delivered, judge, agent): the name of
 * the environment variable holding a key, never the key itself.
 */
export function withKeyFlags<T>(y: Argv<T>, roles: readonly string[]): Argv<T> {
  let out = y.option('api-key-env', {
    type: 'string',
    describe: `environment variable holding the API key${roles.length ? ' (every endpoint without its own)' : ''}`,
  });
  for (const role of roles)
    out = out.option(`${role}-api-key-env`, {
      type: 'string',
      describe: `environment variable holding the ${role} endpoint's API key`,
    });
  return out as unknown as Argv<T>;
}

/** What openEndpoint needs for one role: its key variable (or the shared one), deadlines and the cap. */
export function endpointOptions(argv: HttpFlagArgs, role?: string): OpenOptions {
  const own = role ? argv[`${role}ApiKeyEnv` as `${string}ApiKeyEnv`] : undefined;
  return {
    apiKeyEnv: own ?? argv.apiKeyEnv,
    timeouts: {
      requestMs: argv.requestTimeout * 1000,
      bodyMs: argv.idleTimeout * 1000,
      connectMs: argv.connectTimeout * 1000,
    },
    maxReplyBytes: argv.maxReplyBytes,
  };
}
