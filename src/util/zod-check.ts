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

/** Thrown while generating a check for a construct it does not handle: the schema is left to zod. */
class Unsupported extends Error {}

function checkFor(schema: z.ZodType, mode: Mode): Check | undefined {
  let c = compiled[mode].get(schema);
  if (c === undefined) {
    c = compile(schema, mode);
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

/**
 * The check as one generated function (as zod's own JIT does for objects): nested objects, records and
 * arrays become inline loops instead of a closure call per value, which made a prompt_logprobs reply's
 * check several times slower. Sets and the options of a union are passed in `ext`.
 */
function compile(schema: z.ZodType, mode: Mode): Check | null {
  const ext: unknown[] = [];
  let n = 0;
  const fresh = (prefix: string) => `${prefix}${n++}`;
  const external = (x: unknown) => `ext[${ext.push(x) - 1}]`;

  /** Statements that `return false` unless the value in variable `v` certainly fits `s`. */
  function gen(s: AnyDef, v: string): string {
    const zod = s._zod;
    const def: AnyDef = zod.def;
    return (
      typeCheck(zod, def, v) +
      (def.checks ?? []).map((c: AnyDef) => refinement(c._zod.def, def.type, v, external)).join('')
    );
  }

  function typeCheck(zod: AnyDef, def: AnyDef, v: string): string {
    switch (def.type) {
      case 'string':
      case 'boolean':
        if (def.coerce) throw new Unsupported();
        return `if (typeof ${v} !== '${def.type}') return false;`;
      case 'number':
        if (def.coerce) throw new Unsupported();
        return `if (typeof ${v} !== 'number' || !Number.isFinite(${v})) return false;`;
      case 'null':
        return `if (${v} !== null) return false;`;
      case 'unknown':
      case 'any':
        return '';
      case 'enum':
      case 'literal':
        return `if (!${external(zod.values)}.has(${v})) return false;`;
      case 'optional':
        if (zod.traits.has('$ZodExactOptional') || def.innerType._zod.optin === 'defaulted')
          throw new Unsupported();
        return `if (${v} !== undefined) { ${gen(def.innerType, v)} }`;
      case 'nullable':
        return `if (${v} !== null) { ${gen(def.innerType, v)} }`;
      case 'array': {
        const i = fresh('i');
        const e = fresh('e');
        return `if (!Array.isArray(${v})) return false;
          for (let ${i} = 0; ${i} < ${v}.length; ${i}++) { const ${e} = ${v}[${i}]; ${gen(def.element, e)} }`;
      }
      case 'tuple': {
        const items: AnyDef[] = def.items;
        if (def.rest || items.some((s) => s._zod.optin !== undefined)) throw new Unsupported();
        return `if (!Array.isArray(${v}) || ${v}.length !== ${items.length}) return false;
          ${items
            .map((s, i) => {
              const e = fresh('e');
              return `{ const ${e} = ${v}[${i}]; ${gen(s, e)} }`;
            })
            .join('')}`;
      }
      case 'record':
        return record(def, v);
      case 'object':
        return object(def, v);
      case 'union': {
        // A union's output is its first passing option's: in JSON mode only options whose output is the
        // input itself whatever passes (primitives), so the option zod picks cannot matter.
        const options: AnyDef[] = def.options;
        if (def.discriminator !== undefined || def.inclusive === false) throw new Unsupported();
        if (mode === 'json' && !options.every((o) => LEAF_TYPES.has(o._zod.def.type)))
          throw new Unsupported();
        const each = options.map((o) => compile(o, mode));
        if (each.some((c) => !c)) throw new Unsupported();
        return `if (!(${each.map((c) => `${external(c)}(${v})`).join(' || ')})) return false;`;
      }
      default:
        throw new Unsupported();
    }
  }

  function plainObject(v: string): string {
    const shape = `if (typeof ${v} !== 'object' || ${v} === null || Array.isArray(${v})) return false;`;
    // JSON.parse builds every object on Object.prototype; a value built in code may be anything.
    if (mode === 'json') return shape;
    return `${shape} { const p = Object.getPrototypeOf(${v}); if (p !== Object.prototype && p !== null) return false; }`;
  }

  function record(def: AnyDef, v: string): string {
    const key = def.keyType._zod.def;
    // Keys are strings from JSON or code; a key schema that checks or maps them is zod's business.
    if (key.type !== 'string' || key.coerce || key.checks?.length || def.partial) throw new Unsupported();
    const e = fresh('e');
    // zod skips an own `__proto__` key (its copy would lack it) and refuses symbol keys under a string key schema.
    const odd =
      mode === 'json'
        ? `if (Object.hasOwn(${v}, '__proto__')) return false;`
        : `if (Object.getOwnPropertySymbols(${v}).length) return false;`;
    // Object.keys, not for-in: for-in over integer-like keys (token ids) is several times slower.
    const ks = fresh('ks');
    const j = fresh('j');
    return `${plainObject(v)} ${odd} const ${ks} = Object.keys(${v});
      for (let ${j} = 0; ${j} < ${ks}.length; ${j}++) { const ${e} = ${v}[${ks}[${j}]]; ${gen(def.valueType, e)} }`;
  }

  function object(def: AnyDef, v: string): string {
    const shape: Record<string, AnyDef> = def.shape;
    if (Object.getOwnPropertySymbols(shape).length || Object.hasOwn(shape, '__proto__'))
      throw new Unsupported();
    const catchall = def.catchall?._zod.def.type as string | undefined;
    // Strip (no catchall) copies only the declared keys; loose ('unknown') copies the rest too; strict ('never') refuses them.
    if (catchall !== undefined && catchall !== 'unknown' && catchall !== 'never') throw new Unsupported();
    let out = plainObject(v);
    for (const [key, s] of Object.entries(shape)) {
      if (s._zod.optin === 'defaulted') throw new Unsupported();
      // zod lets a key be absent only when its schema is optional in and out (`.optional()`, `.nullish()`).
      const optional = s._zod.optin === 'optional' && s._zod.optout === 'optional';
      const f = fresh('f');
      const k = JSON.stringify(key);
      out += `{ const ${f} = ${v}[${k}];
        if (${f} === undefined && !(${k} in ${v})) { ${optional ? '' : 'return false;'} } else { ${gen(s, f)} } }`;
    }
    if (catchall === 'never' || (catchall === undefined && mode === 'json')) {
      const k = fresh('k');
      out += `for (const ${k} in ${v}) if (!${external(new Set(Object.keys(shape)))}.has(${k})) return false;`;
    }
    if (mode === 'json') out += `if (Object.hasOwn(${v}, '__proto__')) return false;`;
    return out;
  }

  try {
    const source = `return (x) => { ${gen(schema, 'x')} return true; };`;
    return new Function('ext', source)(ext) as Check;
  } catch (err) {
    if (err instanceof Unsupported) return null;
    throw err;
  }
}

const LEAF_TYPES = new Set(['string', 'number', 'boolean', 'null', 'enum', 'literal']);

/** The refinements zod attaches as checks, as statements; any other check leaves the schema to zod. */
function refinement(c: AnyDef, type: string, v: string, external: (x: unknown) => string): string {
  switch (c.check) {
    case 'string_format': {
      // `.regex()`, tested as zod tests it (from the start: a global or sticky pattern keeps a lastIndex).
      if (c.format !== 'regex' || !(c.pattern instanceof RegExp)) throw new Unsupported();
      const r = external(c.pattern);
      return `${r}.lastIndex = 0; if (!${r}.test(${v})) return false;`;
    }
    case 'greater_than':
    case 'less_than': {
      if (typeof c.value !== 'number' || !Number.isFinite(c.value)) throw new Unsupported();
      const op = c.check === 'greater_than' ? (c.inclusive ? '>=' : '>') : c.inclusive ? '<=' : '<';
      return `if (!(${v} ${op} ${c.value})) return false;`;
    }
    case 'number_format':
      if (c.format === 'safeint') return `if (!Number.isSafeInteger(${v})) return false;`;
      if (c.format === 'float64') return ''; // finite is already checked
      throw new Unsupported();
    case 'min_length': {
      const min = Number(c.minimum);
      if (!Number.isSafeInteger(min)) throw new Unsupported();
      if (type === 'array') return `if (${v}.length < ${min}) return false;`;
      // zod counts code points, and u UTF-16 units are at least ceil(u/2) of them: 2·min − 1 units always clear
      // the floor; fewer are zod's to judge.
      if (type === 'string') return `if (${v}.length < ${2 * min - 1}) return false;`;
      throw new Unsupported();
    }
    default:
      throw new Unsupported();
  }
}
