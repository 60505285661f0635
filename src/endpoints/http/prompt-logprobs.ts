/**
 * A teacher-forcing reply read without building what teacher forcing does not use. vLLM's `prompt_logprobs`
 * has one entry per prompt token, the context's included, each an object keyed by token id; the continuation's
 * entries are the only ones read. `JSON.parse` of the whole reply, and then of the continuation's entries
 * alone (V8 builds an object with an integer-like key slowly, about 0.3 µs each), were the largest costs of the
 * audit path's client (BENCHMARKS.md, issue 16).
 *
 * `readScoreReply` counts the context's entries on the raw bytes (by their separators first, then, where the
 * read does not check out, with strings and escapes tracked, so a decoded token holding `,` `]` or `"` cannot
 * misplace the count; counted, not validated), reads each continuation entry in place for the expected token
 * id's `logprob` and `decoded_token` (every value of the entry checked as the reply schema would), and parses
 * the rest of the reply with JSON.parse, the array left out. Anything it does not expect (no such key, fewer
 * entries, whitespace or nesting in the entries, a number outside JSON's grammar, a string with a control
 * character) leaves the whole reply to JSON.parse, and the caller reads the parsed entries instead, so it then
 * fails or succeeds as it always did.
 */
import { randomBytes } from 'node:crypto';
import type { ScoreResult } from '../types.ts';

/** One continuation token as teacher forcing reports it. */
type Scored = ScoreResult['tokens'][number];

export interface ScoreReply {
  /** The reply. On the fast path its first choice's `prompt_logprobs` is null: `continuation` stands for it. */
  reply: unknown;
  /** How many `prompt_logprobs` entries the reply had (fast path only). */
  entries?: number;
  /** The continuation's tokens as the reply scored them (fast path only). */
  continuation?: Scored[];
  /** The first continuation position (an index into the prompt) whose entry lacks its token id. */
  missing?: number;
}

const KEY = Buffer.from('"prompt_logprobs":');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** Stands where the array was while the rest of the reply is parsed; no reply can hold this nonce. */
const HOLE = `"prompt_logprobs:${randomBytes(12).toString('hex')}"`;
const HOLE_VALUE = JSON.parse(HOLE) as string;
const LOGPROB = Buffer.from('logprob');
const RANK = Buffer.from('rank');
const DECODED_TOKEN = Buffer.from('decoded_token');

/** A `/v1/completions` reply to a prompt of `ids` whose first `skip` ids are the context. */
export function readScoreReply(bytes: Buffer, ids: readonly number[], skip: number): ScoreReply {
  const start = arrayStart(bytes);
  const read = start < 0 ? undefined : readFrom(bytes, start, ids, skip);
  if (read) {
    try {
      const reply = JSON.parse(
        `${bytes.toString('utf8', 0, start)}${HOLE}${bytes.toString('utf8', read.end + 1)}`,
      ) as { choices?: Array<{ prompt_logprobs?: unknown }> };
      const choice = reply?.choices?.[0];
      if (choice?.prompt_logprobs === HOLE_VALUE) {
        choice.prompt_logprobs = null;
        const { end: _end, ...found } = read;
        return { reply, ...found };
      }
    } catch {
      // fall through: the whole reply decides
    }
  }
  return { reply: JSON.parse(bytes.toString('utf8')) };
}

/**
 * The continuation read from the array opening at `start`. The context's entries are first skipped by their
 * separators (`afterBoundaries`), which a decoded token holding `}},` or `null,` would miscount; a read that then
 * does not check out (another count, a token id missing) is done again after counting byte by byte, so the
 * outcome is always the careful count's.
 */
function readFrom(bytes: Buffer, start: number, ids: readonly number[], skip: number) {
  if (skip === 0) return readContinuation(bytes, start + 1, ids, skip);
  const quick = afterBoundaries(bytes, start + 1, skip);
  const read = quick < 0 ? undefined : readContinuation(bytes, quick, ids, skip);
  if (read && read.entries === ids.length && read.missing === undefined) return read;
  const careful = afterEntries(bytes, start + 1, skip);
  if (careful === quick) return read;
  return careful < 0 ? undefined : readContinuation(bytes, careful, ids, skip);
}

/**
 * Index just after the `count`-th entry's separator from `from`, found by searching a one-byte copy for the
 * end of an entry in vLLM's compact layout (`}},`) or a `null,` entry: the string search runs natively, three
 * times as fast as stepping through the bytes here, and the context's entries are most of the reply.
 */
function afterBoundaries(bytes: Buffer, from: number, count: number): number {
  const text = bytes.toString('latin1', from, bytes.length);
  let i = 0;
  for (let n = 0; n < count; n++) {
    if (text.startsWith('null,', i)) i += 5;
    else {
      const end = text.indexOf('}},', i);
      if (end < 0) return -1;
      i = end + 3;
    }
  }
  return from + i;
}

/**
 * Index of the `[` opening the `prompt_logprobs` array, or -1. A hit whose quote is escaped is the inside of
 * another key (`"x\"prompt_logprobs":`); a string value cannot hold `s":` unescaped, so it cannot hit.
 */
function arrayStart(bytes: Buffer): number {
  let at = bytes.indexOf(KEY);
  while (at > 0 && bytes[at - 1] === BACKSLASH) at = bytes.indexOf(KEY, at + 1);
  if (at <= 0) return -1;
  let i = at + KEY.length;
  while (i < bytes.length && isSpace(bytes[i]!)) i++;
  return bytes[i] === OPEN_BRACKET ? i : -1;
}

/** Index just after the `count`-th top-level comma from `from` (inside the array), or -1. */
function afterEntries(bytes: Buffer, from: number, count: number): number {
  let depth = 0;
  let commas = 0;
  const end = bytes.length;
  for (let i = from; i < end; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      // A string: UTF-8 continuation bytes never equal an ASCII quote or backslash.
      for (i++; i < end; i++) {
        const d = bytes[i]!;
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (depth === 0) return -1; // the array ended first
      depth--;
    } else if (c === COMMA && depth === 0 && ++commas === count) return i + 1;
  }
  return -1;
}

/**
 * The entries from `from` to the array's closing `]` (`end`), in vLLM's compact shape: `null` or
 * `{"id":{"name":scalar,...},...}` with no whitespace. For each, the token `ids[i]` names: its `decoded_token`
 * (or '') and `logprob`. Every value object must be what the reply schema accepts (`logprob` a number, `rank`
 * a number or null, `decoded_token` a string or null); anything else returns undefined.
 */
function readContinuation(
  bytes: Buffer,
  from: number,
  ids: readonly number[],
  skip: number,
):
  | {
      end: number;
      entries: number;
      continuation: Scored[];
      missing?: number;
    }
  | undefined {
  const continuation: Scored[] = [];
  let missing: number | undefined;
  let position = skip;
  let i = from;
  if (bytes[i] !== CLOSE_BRACKET) {
    for (;;) {
      let found: Scored | undefined;
      if (isNull(bytes, i)) i += 4;
      else {
        if (bytes[i] !== OPEN_BRACE) return undefined;
        i++;
        for (;;) {
          const keyEnd = stringEnd(bytes, i);
          if (keyEnd < 0 || bytes[keyEnd] !== COLON || escaped) return undefined;
          const isId = isIdText(bytes, i + 1, keyEnd - 1, ids[position]);
          const value = readValueObject(bytes, keyEnd + 1);
          if (!value) return undefined;
          // Duplicate keys: the last one counts, as in JSON.parse.
          if (isId) found = value.found;
          i = value.end;
          if (bytes[i] === COMMA) i++;
          else if (bytes[i] === CLOSE_BRACE) break;
          else return undefined;
        }
        i++;
      }
      if (found) continuation.push(found);
      else missing ??= position;
      position++;
      if (bytes[i] === COMMA) i++;
      else if (bytes[i] === CLOSE_BRACKET) break;
      else return undefined;
    }
  }
  return { end: i, entries: position, continuation, ...(missing === undefined ? {} : { missing }) };
}

/** `{"logprob":number,"rank":number|null,"decoded_token":string|null,...}` at `at` (other names: any scalar). */
function readValueObject(bytes: Buffer, at: number): { found: Scored; end: number } | undefined {
  const compact = readCompactValue(bytes, at);
  if (compact) return compact;
  if (bytes[at] !== OPEN_BRACE) return undefined;
  let logprob: number | undefined;
  let token = '';
  let i = at + 1;
  if (bytes[i] === CLOSE_BRACE) return undefined;
  for (;;) {
    const nameEnd = stringEnd(bytes, i);
    if (nameEnd < 0 || bytes[nameEnd] !== COLON || escaped) return undefined;
    const field = named(bytes, i + 1, nameEnd - 1);
    i = nameEnd + 1;
    const c = bytes[i];
    if (c === QUOTE) {
      const end = stringEnd(bytes, i);
      if (end < 0 || field === LOGPROB || field === RANK) return undefined;
      if (field === DECODED_TOKEN) token = stringValue(bytes, i, end);
      i = end;
    } else if (isNull(bytes, i)) {
      if (field === LOGPROB) return undefined;
      if (field === DECODED_TOKEN) token = '';
      i += 4;
    } else if (c === 0x74 || c === 0x66) {
      const literal = c === 0x74 ? 'true' : 'false';
      if (field !== undefined || bytes.toString('latin1', i, i + literal.length) !== literal)
        return undefined;
      i += literal.length;
    } else {
      const end = numberEnd(bytes, i);
      if (end < 0 || field === DECODED_TOKEN) return undefined;
      if (field === LOGPROB) logprob = numberValue(bytes, i, end);
      i = end;
    }
    if (bytes[i] === COMMA) i++;
    else if (bytes[i] === CLOSE_BRACE) break;
    else return undefined;
  }
  if (logprob === undefined) return undefined;
  return { found: { token, logprob }, end: i + 1 };
}

const OPEN_LOGPROB = Buffer.from('{"logprob":');
const THEN_RANK = Buffer.from(',"rank":');
const THEN_DECODED_TOKEN = Buffer.from(',"decoded_token":');

/**
 * vLLM's own layout, `{"logprob":number,"rank":number|null,"decoded_token":string|null}`, read with its names
 * compared in place; undefined for anything else, which `readValueObject` then reads field by field.
 */
function readCompactValue(bytes: Buffer, at: number): { found: Scored; end: number } | undefined {
  if (!spells(bytes, at, OPEN_LOGPROB)) return undefined;
  let i = at + OPEN_LOGPROB.length;
  const logprobEnd = numberEnd(bytes, i);
  if (logprobEnd < 0) return undefined;
  const logprob = numberValue(bytes, i, logprobEnd);
  i = logprobEnd;
  if (!spells(bytes, i, THEN_RANK)) return undefined;
  i += THEN_RANK.length;
  i = isNull(bytes, i) ? i + 4 : numberEnd(bytes, i);
  if (i < 0 || !spells(bytes, i, THEN_DECODED_TOKEN)) return undefined;
  i += THEN_DECODED_TOKEN.length;
  let token = '';
  if (isNull(bytes, i)) i += 4;
  else {
    const end = stringEnd(bytes, i);
    if (end < 0) return undefined;
    token = stringValue(bytes, i, end);
    i = end;
  }
  if (bytes[i] !== CLOSE_BRACE) return undefined;
  return { found: { token, logprob }, end: i + 1 };
}

/** Whether `literal` is spelt at `at`. By hand: Buffer.compare's argument checks cost more than a few bytes. */
function spells(bytes: Buffer, at: number, literal: Buffer): boolean {
  for (let k = 0; k < literal.length; k++) if (bytes[at + k] !== literal[k]) return false;
  return true;
}

/** Which of the schema's field names the bytes [at, end) spell, or undefined for another name. */
function named(bytes: Buffer, at: number, end: number): Buffer | undefined {
  const name = end - at === 7 ? LOGPROB : end - at === 4 ? RANK : end - at === 13 ? DECODED_TOKEN : undefined;
  if (!name) return undefined;
  // By hand: Buffer.compare's argument checks cost more than comparing a dozen bytes.
  for (let k = 0; k < name.length; k++) if (bytes[at + k] !== name[k]) return undefined;
  return name;
}

/** Whether the bytes [at, end) are the decimal text of `id` (what `String(id)` gives). */
function isIdText(bytes: Buffer, at: number, end: number, id: number | undefined): boolean {
  if (id === undefined || end <= at || end - at > 15) return false;
  if (bytes[at] === 0x30 && end - at > 1) return false;
  let value = 0;
  for (let i = at; i < end; i++) {
    const c = bytes[i]!;
    if (c < 0x30 || c > 0x39) return false;
    value = value * 10 + (c - 0x30);
  }
  return value === id;
}

/** Whether the string `stringEnd` last passed over holds an escape. */
let escaped = false;

/** Index just after the string opening at `at` (its closing quote), or -1 (no string, a control character). */
function stringEnd(bytes: Buffer, at: number): number {
  if (bytes[at] !== QUOTE) return -1;
  escaped = false;
  for (let i = at + 1; i < bytes.length; i++) {
    const d = bytes[i]!;
    if (d === QUOTE) return i + 1;
    if (d === BACKSLASH) {
      escaped = true;
      i++;
    } else if (d < 0x20) return -1;
  }
  return -1;
}

/**
 * The string `stringEnd` just passed over (quotes at `at` and `end - 1`). Short ASCII strings (most decoded
 * tokens) are built here: a `toString` call per string costs more. Escapes are left to JSON.parse.
 */
function stringValue(bytes: Buffer, at: number, end: number): string {
  if (escaped) return JSON.parse(bytes.toString('utf8', at, end)) as string;
  if (end - at - 2 > 16) return bytes.toString('utf8', at + 1, end - 1);
  let text = '';
  for (let i = at + 1; i < end - 1; i++) {
    const c = bytes[i]!;
    if (c >= 0x80) return bytes.toString('utf8', at + 1, end - 1);
    text += String.fromCharCode(c);
  }
  return text;
}

/** Index just after a number in JSON's grammar (`-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?`) at `at`, or -1. */
function numberEnd(bytes: Buffer, at: number): number {
  let i = at;
  if (bytes[i] === 0x2d) i++;
  if (bytes[i] === 0x30) i++;
  else if (isDigit(bytes[i])) while (isDigit(bytes[i])) i++;
  else return -1;
  if (bytes[i] === 0x2e) {
    i++;
    if (!isDigit(bytes[i])) return -1;
    while (isDigit(bytes[i])) i++;
  }
  if (bytes[i] === 0x65 || bytes[i] === 0x45) {
    i++;
    if (bytes[i] === 0x2b || bytes[i] === 0x2d) i++;
    if (!isDigit(bytes[i])) return -1;
    while (isDigit(bytes[i])) i++;
  }
  return i;
}

/**
 * The number at [at, end) as JSON.parse reads it. With at most 15 digits and 22 decimals, integer / 10^k is one
 * correctly rounded division of two exact doubles, so it equals the correctly rounded decimal; anything else
 * (an exponent, more digits) goes to Number().
 */
function numberValue(bytes: Buffer, at: number, end: number): number {
  let i = at;
  const negative = bytes[i] === 0x2d;
  if (negative) i++;
  let digits = 0;
  let decimals = -1;
  let mantissa = 0;
  for (; i < end; i++) {
    const c = bytes[i]!;
    if (c === 0x2e) decimals = 0;
    else if (c >= 0x30 && c <= 0x39) {
      mantissa = mantissa * 10 + (c - 0x30);
      if (mantissa > 0 || digits > 0) digits++;
      if (decimals >= 0) decimals++;
    } else return Number(bytes.toString('latin1', at, end));
  }
  if (digits > 15 || decimals > 22) return Number(bytes.toString('latin1', at, end));
  const value = decimals > 0 ? mantissa / POWERS_OF_TEN[decimals]! : mantissa;
  return negative ? -value : value;
}

const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k);

/** Whether the JSON literal `null` starts at `at`. */
function isNull(bytes: Buffer, at: number): boolean {
  return bytes[at] === 0x6e && bytes[at + 1] === 0x75 && bytes[at + 2] === 0x6c && bytes[at + 3] === 0x6c;
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
