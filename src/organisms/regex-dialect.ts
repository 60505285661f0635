/**
 * The one regex dialect of organism specs and zoo markers, checked the same way here and in
 * fixtures/organisms/factory/regex_dialect.py (test/organisms/regex-dialect.test.ts runs both on one list of
 * cases and compares every answer).
 *
 * A pattern may start with `(?i)` (case-insensitive). After that: literal characters; `.`, `^`, `$`, `|`;
 * groups `( )`, `(?: )`, lookaheads `(?= )`, `(?! )`; classes `[ ]` / `[^ ]` with ranges; quantifiers `*`, `+`,
 * `?`, `{n}`, `{n,}`, `{n,m}`, optionally lazy; escapes `\d \D \w \W \s \S`, `\b \B` (outside classes),
 * `\n \r \t \f` and escaped ASCII punctuation. Anything else (inline flags elsewhere, named groups,
 * lookbehind, backreferences, `\A \Z \p{..} \x \u`, possessive quantifiers, a bare `{` or `}`, nested `[`) is
 * refused with one message naming the position: the two engines read it differently or one refuses it.
 */
const PUNCT = new Set('!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~');
const CONTROL: Record<string, number> = { n: 10, r: 13, t: 9, f: 12 };
const CLASS_ESCAPES = new Set('dDwWsSnrtf');

export class DialectError extends Error {}

type Fail = (pos: number, msg: string) => never;

/** [code point or null for a class escape like \d, width] of the class item at j. */
function classAtom(body: string, j: number, fail: Fail): [number | null, number] {
  if (body[j] !== '\\') {
    const cp = body.codePointAt(j) ?? 0;
    if (cp > 0xffff) fail(j, 'a character outside the Basic Multilingual Plane inside a class');
    return [cp, 1];
  }
  if (j + 1 >= body.length) fail(j, 'trailing backslash');
  const e = body[j + 1]!;
  if (e in CONTROL) return [CONTROL[e]!, 2];
  if (PUNCT.has(e)) return [e.codePointAt(0)!, 2];
  if ('dDwWsS'.includes(e)) return [null, 2];
  return fail(j, `escape \\${e} is not in the dialect`);
}

/** The pattern body (without a leading `(?i)`) and its flag, or a DialectError. */
export function checkPattern(pattern: string): { body: string; ignoreCase: boolean } {
  if (pattern === '') throw new DialectError('empty pattern');
  const ignoreCase = pattern.startsWith('(?i)');
  const body = ignoreCase ? pattern.slice(4) : pattern;
  const off = ignoreCase ? 4 : 0;
  // positions count code points, as Python does
  const fail: Fail = (pos, msg) => {
    throw new DialectError(`position ${[...body.slice(0, pos)].length + off}: ${msg}`);
  };
  const n = body.length;
  const stack: ('group' | 'look')[] = [];
  let canQuantify = false;
  let i = 0;
  while (i < n) {
    const c = body[i]!;
    if (c === '\\') {
      if (i + 1 >= n) fail(i, 'trailing backslash');
      const e = body[i + 1]!;
      if (e === 'b' || e === 'B') canQuantify = false;
      else if (CLASS_ESCAPES.has(e) || PUNCT.has(e)) canQuantify = true;
      else fail(i, `escape \\${e} is not in the dialect`);
      i += 2;
      continue;
    }
    if (c === '[') {
      let j = i + 1;
      if (body[j] === '^') j++;
      if (body[j] === ']') fail(j, 'a class may not start with ] (escape it)');
      let closed = false;
      let prev: number | null = null;
      let last: 'start' | 'char' | 'esc' | 'range' = 'start';
      while (j < n) {
        const d = body[j]!;
        if (d === ']') {
          closed = true;
          break;
        }
        if (d === '[') fail(j, '[ inside a class (escape it)');
        const two = body.slice(j, j + 2);
        if (['&&', '--', '~~', '||'].includes(two)) fail(j, `${two} inside a class (escape it)`);
        if (d === '-' && last !== 'start' && j + 1 < n && body[j + 1] !== ']') {
          if (last === 'esc') fail(j, 'a range may not start at a class escape');
          if (last === 'range') fail(j, '- right after a range (escape it)');
          const [hi, width] = classAtom(body, j + 1, fail);
          if (hi === null) fail(j, 'a range may not end in a class escape');
          if ((hi as number) < (prev as number)) fail(j, 'range out of order');
          j += 1 + width;
          last = 'range';
          continue;
        }
        const [cp, width] = classAtom(body, j, fail);
        prev = cp;
        last = cp === null ? 'esc' : 'char';
        j += width;
      }
      if (!closed) fail(i, 'unterminated class');
      i = j + 1;
      canQuantify = true;
      continue;
    }
    if (c === '(') {
      if (body.startsWith('(?', i)) {
        const kind = body[i + 2];
        if (kind === ':') stack.push('group');
        else if (kind === '=' || kind === '!') stack.push('look');
        else fail(i, 'only (?:, (?= and (?! groups (and a leading (?i)) are in the dialect');
        i += 3;
      } else {
        stack.push('group');
        i += 1;
      }
      canQuantify = false;
      continue;
    }
    if (c === ')') {
      const kind = stack.pop();
      if (!kind) fail(i, 'unbalanced )');
      canQuantify = kind === 'group';
      i += 1;
      continue;
    }
    if ('*+?{'.includes(c)) {
      let end = i + 1;
      if (c === '{') {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(body.slice(i));
        if (!m) fail(i, '{ that is not a quantifier {n}, {n,} or {n,m} (escape it)');
        if (m![3] && Number(m![3]) < Number(m![1])) fail(i, 'quantifier {n,m} with m < n');
        end = i + m![0].length;
      }
      if (!canQuantify) fail(i, 'nothing to repeat');
      if (body[end] === '?') end++;
      if (end < n && '*+{'.includes(body[end]!)) fail(end, 'a quantifier may not follow a quantifier');
      i = end;
      canQuantify = false;
      continue;
    }
    if (c === '}') fail(i, '} outside a quantifier (escape it)');
    const cp = body.codePointAt(i)!;
    const after = body[i + 2];
    if (cp > 0xffff && after !== undefined && '*+?{'.includes(after))
      fail(i + 2, 'a quantifier right after a character outside the Basic Multilingual Plane (group it)');
    canQuantify = !'|^$'.includes(c);
    i += cp > 0xffff ? 2 : 1;
  }
  if (stack.length) fail(n, 'unbalanced (');
  return { body, ignoreCase };
}

/** A dialect pattern as a JavaScript RegExp; throws DialectError. */
export function dialectRegExp(pattern: string): RegExp {
  const { body, ignoreCase } = checkPattern(pattern);
  try {
    return new RegExp(body, ignoreCase ? 'i' : '');
  } catch (err) {
    throw new DialectError(`invalid regex (${(err as Error).message})`);
  }
}
