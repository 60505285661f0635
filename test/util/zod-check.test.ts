import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RECORD_PAYLOADS, type RecordKind } from '../../src/contracts/records.ts';
import {
  chatResponseSchema,
  chatStreamSchema,
  completionResponseSchema,
  modelsSchema,
  tokenizeSchema,
  versionSchema,
} from '../../src/endpoints/http/schemas.ts';
import { type FakeVllm, startFakeVllm } from '../../src/testing/fake-vllm.ts';
import { certifies, firstIssue, parseJsonValue } from '../../src/util/zod-check.ts';
import { attemptPayload, exchangePayload, findingPayload, judgePayload } from '../ledger/payloads.ts';

/**
 * The compiled check must never certify what zod refuses, and for JSON its certificate must mean zod's
 * output equals the input (the transport hands on the input itself). Checked on the real schemas with
 * real server replies and ledger payloads, and on thousands of seeded mutations of them.
 */

type Path = Array<string | number>;

function paths(v: unknown, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(v)) for (let i = 0; i < v.length; i++) paths(v[i], [...at, i], out);
  else if (v && typeof v === 'object')
    for (const k of Object.keys(v)) paths((v as never)[k], [...at, k], out);
  return out;
}

function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 2 ** 32;
  };
}

const REPLACEMENTS: unknown[] = [
  null,
  undefined,
  '',
  'x',
  '\ud83d\ude00',
  0,
  -1,
  1.5,
  2 ** 60,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  [],
  {},
  [1, 'a'],
  { extra: 1 },
];

/** One random edit somewhere in a deep copy: a replaced value, a deleted key, an added key, a longer array. */
function mutate<T>(value: T, random: () => number): unknown {
  const copy = structuredClone(value) as unknown;
  const all = paths(copy);
  const path = all[Math.floor(random() * all.length)]!;
  const pick = REPLACEMENTS[Math.floor(random() * REPLACEMENTS.length)];
  if (path.length === 0) return random() < 0.5 ? pick : copy;
  const parent = path.slice(0, -1).reduce<unknown>((o, k) => (o as never)[k], copy) as Record<
    string,
    unknown
  >;
  const key = path.at(-1)!;
  const edit = random();
  if (edit < 0.6) parent[key] = pick;
  else if (edit < 0.75 && !Array.isArray(parent)) delete parent[key];
  else if (edit < 0.9 && !Array.isArray(parent)) parent[`k${Math.floor(random() * 3)}`] = pick;
  else if (Array.isArray(parent)) parent.push(pick);
  else parent[key] = [parent[key]];
  return copy;
}

/** For JSON: a round trip keeps the JSON.parse precondition; sometimes with an own `__proto__` key spliced in. */
function asJson(v: unknown, random: () => number): unknown {
  const text = JSON.stringify(v) ?? 'null';
  if (random() < 0.05 && text.startsWith('{"')) return JSON.parse(`{"__proto__":{"x":1},${text.slice(1)}`);
  return JSON.parse(text);
}

function holdsForMutants(schema: z.ZodType, samples: unknown[], source: 'json' | 'code', seed: number) {
  const random = rng(seed);
  let certified = 0;
  let refused = 0;
  for (let i = 0; i < 3000; i++) {
    const sample = samples[i % samples.length];
    let v = mutate(sample, random);
    if (source === 'json') v = asJson(v, random);
    const zod = schema.safeParse(v);
    if (!zod.success) refused++;
    if (!certifies(schema, v, source)) continue;
    certified++;
    // The property: a certificate is never wrong, and for JSON zod's copy equals what is handed on.
    expect(zod.success, JSON.stringify(v)?.slice(0, 300)).toBe(true);
    if (source === 'json')
      expect(isDeepStrictEqual(zod.data, v), JSON.stringify(v)?.slice(0, 300)).toBe(true);
  }
  // Not vacuous: mutants both pass the fast path and fail zod.
  expect(certified).toBeGreaterThan(100);
  expect(refused).toBeGreaterThan(100);
}

describe('zod-check: HTTP replies (JSON)', () => {
  let fake: FakeVllm;
  const replies: Record<string, unknown[]> = {};
  beforeAll(async () => {
    fake = await startFakeVllm({ reasoningField: 'reasoning' });
    const root = fake.url.replace(/\/v1$/, '');
    const call = async (path: string, body?: unknown) => {
      const res = await fetch(root + path, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return res.text();
    };
    const messages = [{ role: 'user', content: 'Think: is 7 larger than 5? Ünïcödé 😀' }];
    const chat = (extra: object) =>
      call('/v1/chat/completions', {
        model: 'delivered',
        messages,
        max_tokens: 40,
        temperature: 0,
        ...extra,
      });
    replies.chat = [
      JSON.parse(await chat({ logprobs: true, top_logprobs: 2 })),
      JSON.parse(await chat({ n: 2, temperature: 1 })),
    ];
    const events = (await chat({ stream: true, stream_options: { include_usage: true } }))
      .split('\n\n')
      .map((e) => e.replace(/^data: /, ''))
      .filter((e) => e && e !== '[DONE]');
    replies.stream = [events.map((e) => JSON.parse(e))];
    replies.plp = [
      JSON.parse(
        await call('/v1/completions', {
          model: 'delivered',
          prompt: [256, 72, 105, 90, 33],
          max_tokens: 1,
          temperature: 0,
          prompt_logprobs: 0,
        }),
      ),
      JSON.parse(
        await call('/v1/completions', { model: 'delivered', prompt: 'Hi', max_tokens: 4, logprobs: 1 }),
      ),
    ];
    replies.tokenize = [JSON.parse(await call('/tokenize', { model: 'delivered', messages }))];
    replies.models = [JSON.parse(await call('/v1/models'))];
    replies.version = [JSON.parse(await call('/version'))];
  });
  afterAll(() => fake.close());

  const cases: Array<[string, z.ZodType, string]> = [
    ['chat completion', chatResponseSchema, 'chat'],
    ['chat stream', chatStreamSchema, 'stream'],
    ['completion with prompt_logprobs', completionResponseSchema, 'plp'],
    ['tokenize', tokenizeSchema, 'tokenize'],
    ['models', modelsSchema, 'models'],
    ['version', versionSchema, 'version'],
  ];
  for (const [name, schema, key] of cases) {
    it(`${name}: real replies are certified and handed on as parsed`, () => {
      for (const reply of replies[key]!) {
        expect(certifies(schema, reply, 'json')).toBe(true);
        const r = parseJsonValue(schema, reply);
        expect(r.success && r.data).toBe(reply);
        expect(isDeepStrictEqual(schema.parse(reply), reply)).toBe(true);
      }
    });
    it(`${name}: no mutant is certified that zod refuses or would copy differently`, () => {
      holdsForMutants(schema, replies[key]!, 'json', key.length * 7919);
    });
  }

  it('a refused reply gets zod’s own issue', () => {
    const bad = { choices: [{ index: 0, text: 'x', prompt_logprobs: [null, { 72: { logprob: 'high' } }] }] };
    const r = parseJsonValue(completionResponseSchema, bad);
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]?.path).toEqual(['choices', 0, 'prompt_logprobs', 1, '72', 'logprob']);
  });
});

describe('zod-check: ledger payloads (built in code)', () => {
  const samples: Partial<Record<RecordKind, unknown[]>> = {
    exchange: [
      exchangePayload('t:p:clean:0'),
      {
        ...exchangePayload('t:p:clean:1'),
        meta: { order: ['a', 'b'], canary: 'c', n: 2, none: null },
        signals: { 'llr.base': -0.25, lexdist: 1, flag: true, 'score.failed': 'x' },
        base: {
          status: 'failed',
          failure: { kind: 'timeout', message: 'slow' },
          attempts: 3,
          text: undefined,
        },
      },
    ],
    attempt: [
      attemptPayload(1),
      {
        ...attemptPayload(2),
        ok: false,
        status: 503,
        failure: { kind: 'rate_limited', message: 'm' },
        hedge: true,
      },
    ],
    finding: [findingPayload('f:1')],
    judge: [judgePayload('e:1')],
    'run.end': [{ exchanges: 4, failed: 0, findings: 1 }],
  };
  for (const [kind, values] of Object.entries(samples) as Array<[RecordKind, unknown[]]>) {
    const schema = RECORD_PAYLOADS[kind] as z.ZodType;
    it(`${kind}: valid payloads are certified; no mutant is certified that zod refuses`, () => {
      for (const v of values) expect(certifies(schema, v, 'code')).toBe(true);
      holdsForMutants(schema, values, 'code', kind.length * 104729);
    });
  }

  it('what JSON cannot carry is left to zod: symbol keys in a record, class instances, non-finite numbers', () => {
    const schema = RECORD_PAYLOADS.exchange as z.ZodType;
    const withSymbol = { ...exchangePayload('s'), signals: { a: 1, [Symbol('s')]: 'x' } };
    expect(certifies(schema, withSymbol, 'code')).toBe(false);
    expect(firstIssue(schema, withSymbol)).toEqual(schema.safeParse(withSymbol).error?.issues[0]);
    class Meta {
      a = 1;
    }
    expect(certifies(schema, { ...exchangePayload('c'), meta: new Meta() }, 'code')).toBe(false);
    const nan = { ...attemptPayload(1), durationMs: Number.NaN };
    expect(certifies(RECORD_PAYLOADS.attempt, nan, 'code')).toBe(false);
    expect(firstIssue(RECORD_PAYLOADS.attempt, nan)?.path).toEqual(['durationMs']);
  });
});

describe('zod-check: object modes', () => {
  it('a key zod would strip (or refuse, strict) is never certified as is', () => {
    const strip = z.object({ a: z.number() });
    const strict = z.strictObject({ a: z.number() });
    const loose = z.looseObject({ a: z.number() });
    const extra = { a: 1, b: 2 };
    expect(certifies(strip, extra, 'json')).toBe(false);
    expect(parseJsonValue(strip, extra).data).toEqual({ a: 1 });
    expect(certifies(strip, extra, 'code')).toBe(true);
    expect(certifies(strict, extra, 'code')).toBe(false);
    expect(firstIssue(strict, extra)?.code).toBe('unrecognized_keys');
    expect(certifies(loose, extra, 'json')).toBe(true);
    expect(certifies(strip, { a: 1 }, 'json')).toBe(true);
  });
});
