import type { z } from 'zod';

/**
 * A validator compiled from a zod schema that reads its input without copying it, for the hot paths (every
 * HTTP reply, every ledger record). zod 4's parse builds a copy of what it validates: for a prompt_logprobs
 * reply, one object per prompt token, and that copying was most of the audit path's garbage.
 *
 * The compiled check only ever says "certainly valid". Everything else (an invalid value, a construct it
 * does not compile, a doubtful case such as a short string under a length check zod counts in code points)
 * goes to zod itself, so zod stays the authority for every rejection and its message. What must hold, and
 * test/util/zod-check.test.ts checks against zod on generated and mutated values of the real schemas:
 *   check(x) ⇒ schema.safeParse(x).success, and for JSON (`parseJsonValue`) also that its data deep-equals x.
 */
type Check = (x: unknown) => boolean;

// biome-ignore lint/suspicious/noExplicitAny: zod's def objects are read structurally here.
type AnyDef = any;

/** 'json': the value came from JSON.parse (no undefined, symbols or prototypes), and zod's output must equal it. */
type Mode = 'accept' | 'json';

const compiled: Record<Mode, WeakMap<object, Check | null>> = { accept: new WeakMap(), json: new WeakMap() };

function checkFor(schema: z.ZodType, mode: Mode): Check | undefined {
  let c = compiled[mode].get(schema);
  if (c === undefined) {
    c = compile(schema, mode) ?? null;
    compiled[mode].set(schema, c);
  }
  return c ?? undefined;
}

/** Whether the compiled check certifies the value ('json': it came from JSON.parse; 'code': built in code). */
export function certifies(schema: z.ZodType, value: unknown, source: 'json' | 'code'): boolean {
  return checkFor(schema, source === 'json' ? 'json' : 'accept')?.(value) === true;
}

/**
 * `schema.safeParse(value)` for a value JSON.parse produced: the value itself when the compiled check
 * certifies it (zod's output would be an equal copy), else zod's own result.
 */
export function parseJsonValue<T>(schema: z.ZodType<T>, value: unknown): z.ZodSafeParseResult<T> {
  if (certifies(schema, value, 'json')) return { success: true, data: value as T };
  return schema.safeParse(value);
}

/** zod's first issue with a value built in code, or undefined when it fits (certified without zod when possible). */
export function firstIssue(schema: z.ZodType, value: unknown): z.core.$ZodIssue | undefined {
  if (certifies(schema, value, 'code')) return undefined;
  const r = schema.safeParse(value);
  if (r.success) return undefined;
  return r.error.issues[0] ?? { code: 'custom', message: 'invalid', path: [], input: value };
}

/** zod's own plain-object test for records (a class instance is not a record). */
function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

const hasOwn = (x: object, k: string) => Object.hasOwn(x, k);

function compile(schema: z.ZodType, mode: Mode): Check | undefined {
  const zod = (schema as AnyDef)._zod;
  const def: AnyDef = zod.def;
  const base = compileType(zod, def, mode);
  if (!base) return undefined;
  const checks: AnyDef[] = def.checks ?? [];
  if (checks.length === 0) return base;
  const extra = checks.map((c) => compileRefinement(c._zod.def, def.type));
  if (extra.some((c) => c === undefined)) return undefined;
  const all = extra as Check[];
  return (x) => {
    if (!base(x)) return false;
    for (const c of all) if (!c(x)) return false;
    return true;
  };
}

function compileType(zod: AnyDef, def: AnyDef, mode: Mode): Check | undefined {
  switch (def.type) {
    case 'string':
      return def.coerce ? undefined : (x) => typeof x === 'string';
    case 'number':
      return def.coerce ? undefined : (x) => typeof x === 'number' && Number.isFinite(x);
    case 'boolean':
      return def.coerce ? undefined : (x) => typeof x === 'boolean';
    case 'null':
      return (x) => x === null;
    case 'unknown':
    case 'any':
      return () => true;
    case 'enum':
    case 'literal': {
      const values: Set<unknown> = zod.values;
      return (x) => values.has(x);
    }
    case 'optional': {
      if (zod.traits.has('$ZodExactOptional') || def.innerType._zod.optin === 'defaulted') return undefined;
      const inner = compile(def.innerType, mode);
      return inner && ((x) => x === undefined || inner(x));
    }
    case 'nullable': {
      const inner = compile(def.innerType, mode);
      return inner && ((x) => x === null || inner(x));
    }
    case 'array': {
      const element = compile(def.element, mode);
      if (!element) return undefined;
      return (x) => {
        if (!Array.isArray(x)) return false;
        for (let i = 0; i < x.length; i++) if (!element(x[i])) return false;
        return true;
      };
    }
    case 'tuple': {
      const items: AnyDef[] = def.items;
      if (def.rest || items.some((s) => s._zod.optin !== undefined)) return undefined;
      const each = items.map((s) => compile(s, mode));
      if (each.some((c) => !c)) return undefined;
      const checks = each as Check[];
      return (x) => Array.isArray(x) && x.length === checks.length && checks.every((c, i) => c(x[i]));
    }
    case 'record':
      return compileRecord(def, mode);
    case 'object':
      return compileObject(def, mode);
    case 'union': {
      // A union's output is its first passing option's: in JSON mode only options whose output is the
      // input itself whatever passes (primitives), so the option zod picks cannot matter.
      const options: AnyDef[] = def.options;
      if (def.discriminator !== undefined || def.inclusive === false) return undefined;
      if (mode === 'json' && !options.every((o) => LEAF_TYPES.has(o._zod.def.type))) return undefined;
      const each = options.map((o) => compile(o, mode));
      if (each.some((c) => !c)) return undefined;
      const checks = each as Check[];
      return (x) => checks.some((c) => c(x));
    }
    default:
      return undefined;
  }
}

const LEAF_TYPES = new Set(['string', 'number', 'boolean', 'null', 'enum', 'literal']);

function compileRecord(def: AnyDef, mode: Mode): Check | undefined {
  const key = def.keyType._zod.def;
  // Keys are strings from JSON or code; a key schema that checks or maps them is zod's business.
  if (key.type !== 'string' || key.coerce || key.checks?.length || def.partial) return undefined;
  const value = compile(def.valueType, mode);
  if (!value) return undefined;
  return (x) => {
    if (!isPlainObject(x)) return false;
    // zod skips an own `__proto__` key (its copy would lack it) and refuses symbol keys under a string key schema.
    if (mode === 'json') {
      if (hasOwn(x, '__proto__')) return false;
    } else if (Object.getOwnPropertySymbols(x).length) return false;
    // Object.keys, not for-in: for-in over integer-like keys (token ids) is several times slower.
    const ks = Object.keys(x);
    for (let i = 0; i < ks.length; i++) if (!value(x[ks[i]!])) return false;
    return true;
  };
}

function compileObject(def: AnyDef, mode: Mode): Check | undefined {
  if (def.checks?.length) return undefined;
  const shape: Record<string, AnyDef> = def.shape;
  if (Object.getOwnPropertySymbols(shape).length || hasOwn(shape, '__proto__')) return undefined;
  const keys = Object.keys(shape);
  const fields: Array<{ key: string; check: Check; optional: boolean }> = [];
  for (const key of keys) {
    const s = shape[key]._zod;
    const check = compile(shape[key], mode);
    if (!check || s.optin === 'defaulted') return undefined;
    // zod lets a key be absent only when its schema is optional in and out (`.optional()`, `.nullish()`).
    fields.push({ key, check, optional: s.optin === 'optional' && s.optout === 'optional' });
  }
  const catchall = def.catchall?._zod.def.type as string | undefined;
  // Strip (no catchall) copies only the declared keys; loose ('unknown') copies the rest too; strict ('never') refuses them.
  if (catchall !== undefined && catchall !== 'unknown' && catchall !== 'never') return undefined;
  const known = new Set(keys);
  const onlyKnown = catchall === 'never' || (catchall === undefined && mode === 'json');
  return (x) => {
    if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
    const proto = Object.getPrototypeOf(x);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const f of fields) {
      const v = (x as Record<string, unknown>)[f.key];
      if (v === undefined && !(f.key in x)) {
        if (!f.optional) return false;
      } else if (!f.check(v)) return false;
    }
    if (onlyKnown) {
      for (const k in x) if (!known.has(k)) return false;
    }
    if (mode === 'json' && hasOwn(x, '__proto__')) return false;
    return true;
  };
}

/** The refinements zod attaches as checks; any other check leaves the schema to zod. */
function compileRefinement(c: AnyDef, type: string): Check | undefined {
  switch (c.check) {
    case 'greater_than':
      if (typeof c.value !== 'number') return undefined;
      return c.inclusive ? (x) => (x as number) >= c.value : (x) => (x as number) > c.value;
    case 'less_than':
      if (typeof c.value !== 'number') return undefined;
      return c.inclusive ? (x) => (x as number) <= c.value : (x) => (x as number) < c.value;
    case 'number_format':
      if (c.format === 'safeint') return (x) => Number.isSafeInteger(x);
      if (c.format === 'float64') return () => true; // finite is already checked
      return undefined;
    case 'min_length': {
      const min: number = c.minimum;
      if (type === 'array') return (x) => (x as unknown[]).length >= min;
      // zod counts code points, and u UTF-16 units are at least ceil(u/2) of them: 2·min − 1 units always clear
      // the floor; fewer are zod's to judge.
      if (type === 'string') return (x) => (x as string).length >= 2 * min - 1;
      return undefined;
    }
    default:
      return undefined;
  }
}
