import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { hashJson } from '../util/hash.ts';
import type {
  ChatRequest,
  Completion,
  CompletionRequest,
  ModelEndpoint,
  ModelIdentity,
  ScoreRequest,
  ScoreResult,
} from './types.ts';

const completionSchema = z.object({
  text: z.string(),
  reasoning: z.string().optional(),
  finishReason: z.enum(['stop', 'length']),
  logprobs: z
    .array(
      z.object({
        token: z.string(),
        bytes: z.array(z.number()).optional(),
        logprob: z.number(),
        top: z.array(z.object({ token: z.string(), logprob: z.number() })).optional(),
      }),
    )
    .optional(),
  usage: z.object({ promptTokens: z.number(), completionTokens: z.number() }),
});

const scoreSchema = z.object({
  tokens: z.array(z.object({ token: z.string(), logprob: z.number() })),
  total: z.number(),
});

/**
 * Response cache, content-addressed by (endpoint identity hash, operation, canonical request, sample
 * index) in `DIR/responses.sqlite`. The identity includes the model fingerprint, so a swapped model never
 * hits another model's entries. Only successful replies are stored; a hit comes back with `cached: true`.
 */
export function withCache(endpoint: ModelEndpoint, dir: string): ModelEndpoint {
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, 'responses.sqlite'));
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
  const get = db.prepare<[string], { value: string }>('SELECT value FROM responses WHERE key = ?');
  const put = db.prepare<[string, string]>('INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)');

  let identity: Promise<ModelIdentity> | undefined;
  const identityOnce = () => {
    identity ??= endpoint.identity();
    identity.catch(() => {
      identity = undefined;
    });
    return identity;
  };
  const keyOf = async (op: string, request: unknown, sample: number) =>
    hashJson({ identity: hashJson(await identityOnce()), op, request, sample });
  const read = <T>(key: string, schema: z.ZodType<T>): T | undefined => {
    const row = get.get(key);
    if (!row) return undefined;
    try {
      const parsed = schema.safeParse(JSON.parse(row.value));
      return parsed.success ? parsed.data : undefined; // a damaged entry is a miss
    } catch {
      return undefined;
    }
  };

  const generations = async (
    op: 'chat' | 'complete',
    req: ChatRequest | CompletionRequest,
    call: () => Promise<Completion[]>,
  ): Promise<Completion[]> => {
    const n = req.params.n ?? 1;
    const keys = await Promise.all(Array.from({ length: n }, (_, i) => keyOf(op, req, i)));
    const hits = keys.map((k) => read(k, completionSchema));
    if (hits.every((h) => h !== undefined)) return hits.map((h) => ({ ...(h as Completion), cached: true }));
    const fresh = await call();
    db.transaction(() => {
      fresh.forEach((c, i) => {
        const { cached: _, ...rest } = c;
        if (keys[i]) put.run(keys[i], JSON.stringify(rest));
      });
    })();
    return fresh;
  };

  return {
    ref: endpoint.ref,
    samplesInFlight: endpoint.samplesInFlight,
    identity: identityOnce,
    chat: (req) => generations('chat', req, () => endpoint.chat(req)),
    complete: (req) => generations('complete', req, () => endpoint.complete(req)),
    async score(reqs: ScoreRequest[]): Promise<ScoreResult[]> {
      const keys = await Promise.all(reqs.map((r) => keyOf('score', r, 0)));
      const out: (ScoreResult | undefined)[] = keys.map((k) => read(k, scoreSchema));
      const missing = out.flatMap((r, i) => (r === undefined ? [i] : []));
      if (missing.length > 0) {
        const fresh = await endpoint.score(missing.map((i) => reqs[i]!));
        db.transaction(() => {
          missing.forEach((reqIndex, j) => {
            out[reqIndex] = fresh[j];
            put.run(keys[reqIndex]!, JSON.stringify(fresh[j]));
          });
        })();
      }
      return out as ScoreResult[];
    },
    async close() {
      if (db.open) db.close();
      await endpoint.close();
    },
  };
}
