import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { SEVERITIES } from '../contracts/exchange.ts';
import type { ModelIdentity } from '../endpoints/types.ts';
import { canonicalJson, hashJson } from '../util/hash.ts';
import type { JudgeContext, JudgeOutcome, PairInput } from './judge.ts';
import { PROMPT_VERSION } from './prompt.ts';

/** What a judge is, independent of where it is served: calibrations and caches are keyed by this. */
export function judgeFingerprint(identity: ModelIdentity): string {
  const pinned = identity.weightDigests !== undefined || identity.fingerprint !== undefined;
  return hashJson({
    kind: identity.kind,
    modelId: identity.modelId,
    // A served path differs between machines; weights or greedy replies pin the model better when known.
    root: pinned ? undefined : identity.root,
    weightDigests: identity.weightDigests,
    fingerprint: identity.fingerprint,
  });
}

/** How the judge is asked: every field of the context that can change a verdict is part of the key. */
export type CacheKeyContext = Pick<JudgeContext, 'budget' | 'maxAttempts' | 'secondOrder' | 'seed'>;

export function judgeCacheKey(
  ctx: CacheKeyContext,
  p: { pair: PairInput; rubricHash: string; judgeFingerprint: string },
): string {
  const { budget, maxAttempts, secondOrder, seed } = ctx;
  return hashJson({ v: PROMPT_VERSION, ...p, budget, maxAttempts, secondOrder, seed });
}

// Cache files are read back as untrusted input: a corrupt or foreign file is a miss, never a verdict.
const CachedOutcomeSchema = z.looseObject({
  verdict: z.enum(['flag', 'clear', 'uncertain']),
  severity: z.enum(SEVERITIES),
  confidence: z.number().min(0).max(1),
  uncertainReason: z
    .enum(['order_disagreement', 'malformed', 'invalid_citation', 'failed', 'judge_uncertain'])
    .optional(),
  calls: z.number().int().min(0),
  judgeRef: z.string(),
  rubricHash: z.string(),
  orders: z.array(z.looseObject({ order: z.string(), ok: z.boolean(), calls: z.number() })),
});

/** Judge verdicts by content hash, one JSON file each (written to a temp file, then renamed). */
export class JudgeCache {
  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  get(key: string): JudgeOutcome | undefined {
    let text: string;
    try {
      text = readFileSync(join(this.dir, `${key}.json`), 'utf8');
    } catch {
      return undefined;
    }
    try {
      const parsed = CachedOutcomeSchema.safeParse(JSON.parse(text));
      return parsed.success ? (parsed.data as unknown as JudgeOutcome) : undefined;
    } catch {
      return undefined;
    }
  }

  put(key: string, outcome: JudgeOutcome): void {
    const file = join(this.dir, `${key}.json`);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, canonicalJson(outcome));
    renameSync(tmp, file);
  }
}
