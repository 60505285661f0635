import { UserError } from '../util/errors.ts';

interface Bound {
  min: number;
  max: number;
  integer: boolean;
}

const int = (min: number, max: number): Bound => ({ min, max, integer: true });

/**
 * Upper and lower bounds of numeric flags, checked before anything is allocated or queried: a typo such as
 * `--samples 1e12` must fail at once, not grow a plan past memory. A flag of the same name means the same
 * thing in every command.
 */
export const NUMBER_BOUNDS: Readonly<Record<string, Bound>> = {
  seed: int(0, 2 ** 32 - 1),
  samples: int(1, 10_000),
  concurrency: int(1, 1024),
  budget: int(0, 1_000_000),
  'discovery-budget': int(0, 1_000_000),
  threads: int(1, 256),
  requests: int(1, 10_000_000),
  runs: int(1, 1000),
  'max-tokens': int(1, 131_072),
  'promptfoo-requests': int(1, 10_000_000),
  attempts: int(1, 10),
  port: int(0, 65_535),
  'request-timeout': { min: 0.05, max: 86_400, integer: false },
  'idle-timeout': { min: 0.05, max: 86_400, integer: false },
  'connect-timeout': { min: 0.05, max: 3600, integer: false },
  'max-reply-bytes': int(1024, 2 ** 30),
};

interface DeclaredOptions {
  /** Every declared option (including choices-only ones), as keys. */
  key?: Record<string, unknown>;
  array?: string[];
  number?: string[];
  string?: string[];
  boolean?: string[];
}

/**
 * Checks parsed flags against their declarations (yargs accepts `--seed abc` as NaN and a repeated flag as
 * an array): every number finite and within its bound, every single-valued flag given once.
 */
export function checkOptions(argv: Record<string, unknown>, declared: DeclaredOptions): void {
  const arrays = new Set(declared.array ?? []);
  for (const name of Object.keys(declared.key ?? {})) {
    const v = argv[name];
    if (Array.isArray(v) && !arrays.has(name))
      throw new UserError(`--${name}: given ${v.length} times; expected it once`);
  }
  for (const name of declared.number ?? []) {
    if (arrays.has(name)) continue;
    const v = argv[name];
    if (v === undefined) continue;
    const bound = NUMBER_BOUNDS[name];
    const kind = bound?.integer ? 'an integer' : 'a number';
    const range = bound ? ` from ${bound.min} to ${bound.max}` : '';
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new UserError(`--${name}: not a number; expected ${kind}${range}`);
    if (bound && ((bound.integer && !Number.isInteger(v)) || v < bound.min || v > bound.max))
      throw new UserError(`--${name}: ${v} is out of range; expected ${kind}${range}`);
  }
}
