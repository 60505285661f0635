import { describe, expect, it } from 'vitest';
import { readScoreReply } from '../../../src/endpoints/http/prompt-logprobs.ts';

type Value = { logprob: unknown; rank?: unknown; decoded_token?: unknown; [k: string]: unknown };
type Entry = Record<string, Value> | null;

/** A vLLM `/v1/completions` reply with these prompt_logprobs. */
function reply(entries: Entry[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'cmpl-1',
    object: 'text_completion',
    choices: [{ index: 0, text: 'x', finish_reason: 'length', prompt_logprobs: entries, ...extra }],
    usage: { prompt_tokens: entries.length, completion_tokens: 1, total_tokens: entries.length + 1 },
  };
}

const IDS = Array.from({ length: 40 }, (_, i) => 100 + i);

function entries(tokens: string[]): Entry[] {
  return tokens.map((t, i) =>
    i === 0 ? null : { [String(IDS[i])]: { logprob: -i / 4, rank: 1, decoded_token: t } },
  );
}

/**
 * What teacher forcing makes of a reply parsed whole by JSON.parse: the continuation's tokens, or the
 * reason it refuses the reply. The reader must reach the same outcome.
 */
function outcome(r: ReturnType<typeof readScoreReply>, ids: readonly number[], skip: number): unknown {
  if (r.continuation) {
    if (r.entries !== ids.length) return `count ${r.entries}`;
    if (r.missing !== undefined) return `missing ${r.missing}`;
    return r.continuation;
  }
  const list = (r.reply as { choices: Array<{ prompt_logprobs: Entry[] | null }> }).choices[0]!
    .prompt_logprobs;
  if (!list || list.length !== ids.length) return `count ${list?.length}`;
  const out: Array<{ token: unknown; logprob: unknown }> = [];
  for (let i = skip; i < ids.length; i++) {
    const v = list[i]?.[String(ids[i])];
    if (!v) return `missing ${i}`;
    out.push({ token: v.decoded_token ?? '', logprob: v.logprob });
  }
  return out;
}

function check(text: string, ids: readonly number[], skip: number, fast: boolean) {
  const whole = JSON.parse(text) as { choices: Array<Record<string, unknown>> };
  const got = readScoreReply(Buffer.from(text), ids, skip);
  expect(got.continuation !== undefined, 'fast path taken').toBe(fast);
  expect(outcome(got, ids, skip)).toEqual(outcome({ reply: whole }, ids, skip));
  // The rest of the reply is what JSON.parse gives; on the fast path the array is left out.
  if (fast) whole.choices[0]!.prompt_logprobs = null;
  expect(got.reply).toEqual(whole);
}

// Tokens that would break a scanner that ignores strings or escapes.
// `}},` and `null,` look like the separators the context is first counted by.
const NASTY = ['a', ',', ']', '}', '{', '[', '"', '\\', '\\"', '"}]', 'é', '日本', '\u0000', '\n', ' ', '🙂'];
NASTY.push('}},', 'null,', '}},{"1":', 'x}},null,');

describe('readScoreReply: the context counted, the continuation read in place', () => {
  it('reads the continuation as JSON.parse would, at every skip, with nasty decoded tokens', () => {
    const tokens = ['', ...NASTY, 'tail1', 'tail2', 'tail"3'];
    const text = JSON.stringify(reply(entries(tokens)));
    const ids = IDS.slice(0, tokens.length);
    for (let skip = 1; skip < tokens.length; skip++) check(text, ids, skip, true);
  });

  it('agrees with JSON.parse on random tokens of structural characters', () => {
    let state = 7;
    const rand = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    const alphabet = [...'",[]{}\\:x é'];
    for (let round = 0; round < 40; round++) {
      const tokens = Array.from({ length: 2 + rand(30) }, () =>
        Array.from({ length: rand(5) }, () => alphabet[rand(alphabet.length)]).join(''),
      );
      const ids = IDS.slice(0, tokens.length);
      check(JSON.stringify(reply(entries(tokens))), ids, 1 + rand(tokens.length - 1), true);
    }
  });

  it('reads numbers in every JSON form exactly as JSON.parse does', () => {
    const numbers = [
      '-0',
      '0',
      '-1.25',
      '-0.1',
      '-1e-7',
      '-2.5E+3',
      '-12345678901234567',
      '-0.30000000000000004',
    ];
    numbers.push('-9999.0', '-1.7976931348623157e308', '-123.456789012345678901234');
    const body = numbers.map((n, i) => `{"${IDS[i + 1]}":{"logprob":${n},"rank":1,"decoded_token":"t"}}`);
    const text = `{"choices":[{"index":0,"text":"x","finish_reason":"length","prompt_logprobs":[null,${body.join(',')}]}],"usage":{}}`;
    const ids = IDS.slice(0, numbers.length + 1);
    check(text, ids, 1, true);
    const got = readScoreReply(Buffer.from(text), ids, 1).continuation!.map((t) => t.logprob);
    expect(Object.is(got[0], -0)).toBe(true);
    expect(got).toEqual(numbers.map(Number));
  });

  it('finds the token among alternatives, with null and missing fields, and the last of duplicate keys', () => {
    const list: Entry[] = [
      null,
      { '7': { logprob: -3, rank: 2, decoded_token: 'q' }, [IDS[1]!]: { logprob: -1, rank: null } },
      { [IDS[2]!]: { logprob: -2, decoded_token: null, extra: true, other: 'x' } },
    ];
    check(JSON.stringify(reply(list)), IDS.slice(0, 3), 1, true);
    const dup = `{"choices":[{"index":0,"text":"x","finish_reason":"length","prompt_logprobs":[null,{"${IDS[1]}":{"logprob":-1,"decoded_token":"a"},"${IDS[1]}":{"logprob":-2,"decoded_token":"b"}}]}]}`;
    check(dup, IDS.slice(0, 2), 1, true);
  });

  it('reports the first entry lacking its token id, and a wrong count, as a whole parse would', () => {
    const list = entries(['', 'a', 'b', 'c']);
    list[2] = { '999': { logprob: -1, rank: 1, decoded_token: 'b' } };
    check(JSON.stringify(reply(list)), IDS.slice(0, 4), 1, true);
    const withNull = entries(['', 'a', 'b']);
    withNull[2] = null;
    check(JSON.stringify(reply(withNull)), IDS.slice(0, 3), 1, true);
    // One entry too many, or too few for the prompt.
    check(JSON.stringify(reply(entries(['', 'a', 'b', 'c']))), IDS.slice(0, 3), 1, true);
    check(JSON.stringify(reply(entries(['', 'a', 'b']))), IDS.slice(0, 4), 1, true);
  });

  it('leaves what it does not expect to JSON.parse: whitespace, escapes in keys, nesting, wrong types', () => {
    const ids = IDS.slice(0, 4);
    const base = reply(entries(['', 'a', 'b', 'c']));
    check(JSON.stringify(base, null, 2), ids, 2, false);
    const escapedKey = JSON.stringify(base).replace(
      `"${IDS[3]}"`,
      `"\\u003${String(IDS[3]).slice(0, 1)}${String(IDS[3]).slice(1)}"`,
    );
    check(escapedKey, ids, 2, false);
    const nested = reply([null, { [IDS[1]!]: { logprob: -1, top: [{ a: 1 }] } }]);
    check(JSON.stringify(nested), IDS.slice(0, 2), 1, false);
    for (const bad of [
      { logprob: '-1' },
      { logprob: -1, rank: '1' },
      { logprob: -1, decoded_token: 3 },
      { rank: 1 },
    ]) {
      check(JSON.stringify(reply([null, { [IDS[1]!]: bad as Value }])), IDS.slice(0, 2), 1, false);
    }
  });

  it('look-alikes of the key inside a string or another key are not mistaken for it', () => {
    const ids = IDS.slice(0, 4);
    check(
      JSON.stringify(reply(entries(['', 'a', 'b', 'c']), { text: '"prompt_logprobs":[1,2,3]' })),
      ids,
      2,
      true,
    );
    const inKey = { 'x"prompt_logprobs': [1, 2, 3], ...reply(entries(['', 'a', 'b', 'c'])) };
    check(JSON.stringify(inKey), ids, 2, true);
  });

  it('with fewer entries than the context, or no prompt_logprobs, the reply is parsed whole', () => {
    check(JSON.stringify(reply(entries(['', 'a', 'b']))), IDS.slice(0, 5), 3, false);
    check(JSON.stringify({ choices: [{ text: 'x', prompt_logprobs: null }] }), IDS.slice(0, 5), 3, false);
  });

  it('a reply that is not JSON still fails, also when what is broken is in the part read', () => {
    const text = JSON.stringify(reply(entries(['', 'a', 'b', 'c'])));
    const ids = IDS.slice(0, 4);
    expect(() => readScoreReply(Buffer.from(text.slice(0, -1)), ids, 2)).toThrow(SyntaxError);
    const broken = text.replace('"decoded_token":"c"', '"decoded_token":c');
    expect(() => readScoreReply(Buffer.from(broken), ids, 2)).toThrow(SyntaxError);
    // The context's entries are counted, not validated (as before this reader): only their count matters.
    const inContext = text.replace('"decoded_token":"a"', '"decoded_token":a');
    expect(readScoreReply(Buffer.from(inContext), ids, 2).continuation).toHaveLength(2);
  });
});
