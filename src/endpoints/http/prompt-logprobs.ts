/**
 * A `prompt_logprobs` reply parsed without reading the context's entries. vLLM returns one entry per prompt
 * token, the context's included, and teacher forcing reads only the continuation's; `JSON.parse` of the whole
 * reply was the largest single cost of the audit path's client (BENCHMARKS.md, issue 16). The first `skip`
 * entries of the array are counted on the raw bytes (brackets and strings tracked, so a decoded token holding
 * `,` `]` or `"` cannot misplace the count) and stand in the parsed value as `null`: the array keeps its length,
 * so the caller's check that there is one entry per prompt token still holds. What is skipped is counted, not
 * validated. Anything unexpected (no such key, fewer entries, a reply that does not parse this way) falls back
 * to parsing the whole reply, which then fails or succeeds as it would have.
 */
const KEY = Buffer.from('"prompt_logprobs":');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;

export function parseSkippingPromptLogprobs(bytes: Buffer, skip: number): unknown {
  const start = skip > 0 ? arrayStart(bytes) : -1;
  const resume = start < 0 ? -1 : afterEntries(bytes, start + 1, skip);
  if (resume >= 0) {
    try {
      return JSON.parse(
        `${bytes.toString('utf8', 0, start + 1)}${'null,'.repeat(skip)}${bytes.toString('utf8', resume)}`,
      );
    } catch {
      // fall through: the whole reply decides
    }
  }
  return JSON.parse(bytes.toString('utf8'));
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
  return bytes[i] === 0x5b ? i : -1;
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
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (depth === 0) return -1; // the array ended first
      depth--;
    } else if (c === COMMA && depth === 0 && ++commas === count) return i + 1;
  }
  return -1;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}
