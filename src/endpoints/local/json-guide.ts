import type { TokenConstraint } from './scheduler.ts';
import type { LocalTokenizer } from './tokenizer.ts';

/**
 * Schema-guided decoding over bytes: a pushdown machine over the output so far, cloned per candidate token,
 * allows only tokens that keep the output a prefix of compact JSON matching the schema. Supported: type
 * (object with properties/required, array with items/minItems/maxItems, string with maxLength, number,
 * integer, boolean, null, or a list of these), enum and const. Other keywords (anyOf, $ref, pattern, ...)
 * are not enforced there: that part may be any JSON value.
 */
type Schema = Record<string, unknown>;

type Frame =
  | { k: 'value'; schema: Schema }
  | {
      k: 'object';
      schema: Schema;
      state: 'keyOrEnd' | 'key' | 'colon' | 'commaOrEnd' | 'afterComma';
      key: string;
      seen: string[];
    }
  | { k: 'array'; schema: Schema; state: 'first' | 'commaOrEnd' | 'afterComma'; count: number }
  | { k: 'string'; state: 'body' | 'escape' | 'hex'; hexLeft: number; length: number; max: number }
  | { k: 'literal'; options: string[]; buf: string }
  | { k: 'number'; integer: boolean; state: string; digits: number };

/** ok: consumed; done: consumed and the frame is complete; refeed: feed c again; end: complete before c. */
type Step = 'ok' | 'reject' | 'done' | 'refeed' | 'end';

/** UTF-8 bytes as a one-char-per-byte string: the machine compares bytes, not characters. */
const bytesOf = (s: string) => Buffer.from(s, 'utf8').toString('latin1');
const isDigit = (c: string) => c >= '0' && c <= '9';
const MAX_DIGITS = 15;

function types(schema: Schema): Set<string> {
  const t = schema.type;
  const list = typeof t === 'string' ? [t] : Array.isArray(t) ? (t as string[]) : [];
  return new Set(list.length ? list : ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);
}

function properties(schema: Schema): Record<string, Schema> | undefined {
  const p = schema.properties;
  return p && typeof p === 'object' ? (p as Record<string, Schema>) : undefined;
}

function requiredDone(f: Extract<Frame, { k: 'object' }>): boolean {
  const req = Array.isArray(f.schema.required) ? (f.schema.required as string[]) : [];
  return req.every((r) => f.seen.includes(r));
}

function openKeys(f: Extract<Frame, { k: 'object' }>): string[] | undefined {
  const props = properties(f.schema);
  return props ? Object.keys(props).filter((k) => !f.seen.includes(k)) : undefined;
}

function startValue(f: Extract<Frame, { k: 'value' }>, c: string, stack: Frame[]): Step {
  const s = f.schema;
  const top = stack.length - 1;
  if ('const' in s || Array.isArray(s.enum)) {
    const values = 'const' in s ? [s.const] : (s.enum as unknown[]);
    stack[top] = { k: 'literal', options: values.map((v) => bytesOf(JSON.stringify(v))), buf: '' };
    return 'refeed';
  }
  const t = types(s);
  if (c === '{' && t.has('object'))
    stack[top] = { k: 'object', schema: s, state: 'keyOrEnd', key: '', seen: [] };
  else if (c === '[' && t.has('array')) stack[top] = { k: 'array', schema: s, state: 'first', count: 0 };
  else if (c === '"' && t.has('string')) {
    const max = typeof s.maxLength === 'number' ? s.maxLength : Infinity;
    stack[top] = { k: 'string', state: 'body', hexLeft: 0, length: 0, max };
  } else if ((c === '-' || isDigit(c)) && (t.has('number') || t.has('integer'))) {
    stack[top] = { k: 'number', integer: !t.has('number'), state: 'start', digits: 0 };
    return 'refeed';
  } else if ((c === 't' || c === 'f') && t.has('boolean')) {
    stack[top] = { k: 'literal', options: ['true', 'false'], buf: '' };
    return 'refeed';
  } else if (c === 'n' && t.has('null')) {
    stack[top] = { k: 'literal', options: ['null'], buf: '' };
    return 'refeed';
  } else return 'reject';
  return 'ok';
}

function stepObject(f: Extract<Frame, { k: 'object' }>, c: string, stack: Frame[]): Step {
  const keys = openKeys(f);
  switch (f.state) {
    case 'keyOrEnd':
    case 'afterComma':
      if (c === '}' && f.state === 'keyOrEnd' && requiredDone(f)) return 'done';
      if (c !== '"' || (keys && keys.length === 0)) return 'reject';
      if (keys) {
        f.state = 'key';
        f.key = '';
      } else {
        f.state = 'colon';
        stack.push({ k: 'string', state: 'body', hexLeft: 0, length: 0, max: Infinity });
      }
      return 'ok';
    case 'key': {
      const names = (keys ?? []).map((k) => bytesOf(JSON.stringify(k).slice(1, -1)));
      if (c === '"') {
        const at = names.indexOf(f.key);
        if (at < 0) return 'reject';
        f.seen.push(keys![at]!);
        f.state = 'colon';
        return 'ok';
      }
      if (!names.some((n) => n.startsWith(f.key + c))) return 'reject';
      f.key += c;
      return 'ok';
    }
    case 'colon': {
      if (c !== ':') return 'reject';
      const props = properties(f.schema);
      const extra = f.schema.additionalProperties;
      const schema = props
        ? props[f.seen.at(-1)!]
        : extra && typeof extra === 'object'
          ? (extra as Schema)
          : {};
      f.state = 'commaOrEnd';
      stack.push({ k: 'value', schema: schema ?? {} });
      return 'ok';
    }
    case 'commaOrEnd':
      if (c === '}') return requiredDone(f) ? 'done' : 'reject';
      if (c === ',' && !(keys && keys.length === 0)) {
        f.state = 'afterComma';
        return 'ok';
      }
      return 'reject';
  }
}

function stepArray(f: Extract<Frame, { k: 'array' }>, c: string, stack: Frame[]): Step {
  const min = typeof f.schema.minItems === 'number' ? f.schema.minItems : 0;
  const max = typeof f.schema.maxItems === 'number' ? f.schema.maxItems : Infinity;
  const items = f.schema.items && typeof f.schema.items === 'object' ? (f.schema.items as Schema) : {};
  if (f.state === 'commaOrEnd') {
    if (c === ']') return f.count >= min ? 'done' : 'reject';
    if (c === ',' && f.count < max) {
      f.state = 'afterComma';
      return 'ok';
    }
    return 'reject';
  }
  if (f.state === 'first' && c === ']') return min === 0 ? 'done' : 'reject';
  if (f.count >= max) return 'reject';
  f.count++;
  f.state = 'commaOrEnd';
  stack.push({ k: 'value', schema: items });
  return 'refeed';
}

function stepString(f: Extract<Frame, { k: 'string' }>, c: string): Step {
  const code = c.charCodeAt(0);
  if (f.state === 'escape') {
    if (c === 'u') {
      f.state = 'hex';
      f.hexLeft = 4;
    } else if ('"\\/bfnrt'.includes(c)) f.state = 'body';
    else return 'reject';
    return 'ok';
  }
  if (f.state === 'hex') {
    if (!/[0-9a-fA-F]/.test(c)) return 'reject';
    if (--f.hexLeft === 0) f.state = 'body';
    return 'ok';
  }
  if (c === '"') return 'done';
  if (code < 0x20) return 'reject';
  // Count characters, not bytes: UTF-8 continuation bytes (10xxxxxx) do not start one.
  if ((code & 0xc0) !== 0x80 && ++f.length > f.max) return 'reject';
  if (c === '\\') f.state = 'escape';
  return 'ok';
}

function stepLiteral(f: Extract<Frame, { k: 'literal' }>, c: string): Step {
  const next = f.buf + c;
  if (f.options.some((o) => o.startsWith(next))) {
    f.buf = next;
    return f.options.some((o) => o !== next && o.startsWith(next)) || !f.options.includes(next)
      ? 'ok'
      : 'done';
  }
  return f.options.includes(f.buf) ? 'end' : 'reject';
}

/** Numbers: -?(0|[1-9]d*)(.d+)?([eE][+-]?d+)?, integers without fraction or exponent, at most 15 digits. */
function stepNumber(f: Extract<Frame, { k: 'number' }>, c: string): Step {
  const to = (state: string): Step => {
    if (isDigit(c) && ++f.digits > MAX_DIGITS) return 'reject';
    f.state = state;
    return 'ok';
  };
  const terminal = ['zero', 'int', 'frac', 'exp'].includes(f.state);
  switch (f.state) {
    case 'start':
      if (c === '-') return to('neg');
      return c === '0' ? to('zero') : isDigit(c) ? to('int') : 'reject';
    case 'neg':
      return c === '0' ? to('zero') : isDigit(c) ? to('int') : 'reject';
    case 'int':
      if (isDigit(c)) return to('int');
      break;
    case 'dot':
      return isDigit(c) ? to('frac') : 'reject';
    case 'frac':
      if (isDigit(c)) return to('frac');
      break;
    case 'e':
      return c === '+' || c === '-' ? to('esign') : isDigit(c) ? to('exp') : 'reject';
    case 'esign':
      return isDigit(c) ? to('exp') : 'reject';
    case 'exp':
      if (isDigit(c)) return to('exp');
      break;
  }
  if (!f.integer && c === '.' && (f.state === 'zero' || f.state === 'int')) return to('dot');
  if (!f.integer && (c === 'e' || c === 'E') && ['zero', 'int', 'frac'].includes(f.state)) return to('e');
  return terminal ? 'end' : 'reject';
}

/** Feeds one byte; false if no schema-valid continuation starts this way. */
function feed(stack: Frame[], c: string): boolean {
  for (;;) {
    const top = stack.at(-1);
    if (!top) return false;
    const r: Step =
      top.k === 'value'
        ? startValue(top, c, stack)
        : top.k === 'object'
          ? stepObject(top, c, stack)
          : top.k === 'array'
            ? stepArray(top, c, stack)
            : top.k === 'string'
              ? stepString(top, c)
              : top.k === 'literal'
                ? stepLiteral(top, c)
                : stepNumber(top, c);
    if (r === 'ok') return true;
    if (r === 'reject') return false;
    if (r === 'done') {
      stack.pop();
      return true;
    }
    if (r === 'end') stack.pop();
  }
}

const clone = (stack: Frame[]): Frame[] =>
  stack.map((f) => (f.k === 'object' ? { ...f, seen: [...f.seen] } : { ...f }) as Frame);

/** Whether the output may stop here: complete, or a root number/literal that could also go on. */
function canEnd(stack: Frame[]): boolean {
  const [root, ...rest] = stack;
  if (!root) return true;
  if (rest.length) return false;
  if (root.k === 'literal') return root.options.includes(root.buf);
  return root.k === 'number' && ['zero', 'int', 'frac', 'exp'].includes(root.state);
}

function constraintOver(
  initial: Frame[],
  tokenizer: LocalTokenizer,
  stopIds: ReadonlySet<number>,
): TokenConstraint {
  let stack = initial;
  const tryToken = (id: number): Frame[] | undefined => {
    if (stopIds.has(id)) return canEnd(stack) ? stack : undefined;
    if (tokenizer.specialIds.has(id)) return undefined;
    const bytes = tokenizer.tokenBytes(id);
    if (bytes.length === 0) return undefined;
    const next = clone(stack);
    for (const b of bytes) if (!feed(next, String.fromCharCode(b))) return undefined;
    return next;
  };
  return {
    allowed: (id) => tryToken(id) !== undefined,
    accept: (id) => {
      stack = tryToken(id) ?? stack;
    },
    done: () => stack.length === 0,
  };
}

/** Only tokens that keep the output a prefix of compact JSON valid under `schema`; ends when it is complete. */
export function jsonSchemaConstraint(
  schema: Schema,
  tokenizer: LocalTokenizer,
  stopIds: ReadonlySet<number>,
): TokenConstraint {
  return constraintOver([{ k: 'value', schema }], tokenizer, stopIds);
}

/** The output must be exactly one of `choices` (vLLM's structured_outputs.choice). */
export function choiceConstraint(
  choices: string[],
  tokenizer: LocalTokenizer,
  stopIds: ReadonlySet<number>,
): TokenConstraint {
  return constraintOver([{ k: 'literal', options: choices.map(bytesOf), buf: '' }], tokenizer, stopIds);
}
