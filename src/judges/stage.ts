import { type Exchange, type Finding, isOk } from '../contracts/exchange.ts';
import type { ModelEndpoint, ModelIdentity } from '../endpoints/types.ts';
import { sha256Hex } from '../util/hash.ts';
import { JudgeCache, judgeCacheKey, judgeFingerprint } from './cache.ts';
import { type JudgeContext, type JudgeOutcome, judgePair, type UncertainReason } from './judge.ts';
import { budgetFor, replyText } from './prompt.ts';
import { type RubricSet, rubricFor } from './rubric.ts';

export interface JudgeStageOptions {
  judge: ModelEndpoint;
  rubrics: RubricSet;
  /** Fraction of exchanges outside any finding that the judge also sees, for calibration (0..1). */
  sampleRate: number;
  seed: number;
  /** Where verdicts are cached by content hash; none means no cache. */
  cacheDir?: string;
  /** Attempts per order before a malformed answer becomes uncertain. Default 3. */
  maxAttempts?: number;
  /** When the second order is asked (JudgeContext.secondOrder). Default `if_decisive`. */
  secondOrder?: JudgeContext['secondOrder'];
  /** Pairs judged at once. Default 4. */
  concurrency?: number;
}

export interface JudgedExchange {
  exchangeId: string;
  probeKey: string;
  /** Why the judge saw it: it supports a finding, or it is in the seeded calibration sample. */
  selectedAs: 'candidate' | 'sample';
  record: JudgeOutcome;
}

export interface JudgeStageCounts {
  exchanges: number;
  candidates: number;
  sampled: number;
  calls: number;
  cacheHits: number;
  flagged: number;
  cleared: number;
  uncertain: number;
  orderDisagreements: number;
  uncertainByReason: Partial<Record<UncertainReason, number>>;
  /** Judge calls made in this run per probe (`probeSetId:probeId`). */
  callsPerProbe: Record<string, number>;
}

export interface JudgeStageResult {
  judge: ModelIdentity;
  judgeFingerprint: string;
  records: JudgedExchange[];
  counts: JudgeStageCounts;
}

/** Deterministic per exchange and seed, independent of order: the same run samples the same exchanges. */
export function inSample(exchangeId: string, seed: number, rate: number): boolean {
  if (rate <= 0) return false;
  const u = Number.parseInt(sha256Hex(`${seed}:${exchangeId}`).slice(0, 13), 16) / 2 ** 52;
  return u < rate;
}

/**
 * The judge stage of the cascade: deterministic detectors and statistics have already produced findings;
 * the judge sees only the exchanges behind them plus a seeded sample of the rest.
 */
export async function judgeStage(
  exchanges: Exchange[],
  findings: Finding[],
  opts: JudgeStageOptions,
): Promise<JudgeStageResult> {
  if (!(opts.sampleRate >= 0 && opts.sampleRate <= 1)) throw new RangeError('sampleRate must be in [0, 1]');
  const supporting = new Set(findings.flatMap((f) => f.exchangeIds));
  const selected: { ex: Exchange; selectedAs: 'candidate' | 'sample' }[] = [];
  for (const ex of exchanges) {
    if (supporting.has(ex.id)) selected.push({ ex, selectedAs: 'candidate' });
    else if (inSample(ex.id, opts.seed, opts.sampleRate)) selected.push({ ex, selectedAs: 'sample' });
  }
  const identity = await opts.judge.identity();
  const fingerprint = judgeFingerprint(identity);
  const ctx: JudgeContext = {
    endpoint: opts.judge,
    judgeRef: identity.ref,
    budget: budgetFor(identity.maxModelLen),
    maxAttempts: opts.maxAttempts ?? 3,
    secondOrder: opts.secondOrder ?? 'if_decisive',
    seed: opts.seed,
  };
  const cache = opts.cacheDir ? new JudgeCache(opts.cacheDir) : undefined;

  const judgeOne = async ({ ex, selectedAs }: (typeof selected)[number]): Promise<JudgedExchange> => {
    // Discovery may ask for another rubric (harm confirmations: is the difference harmful?).
    const rubric = rubricFor(opts.rubrics, typeof ex.meta.rubric === 'string' ? ex.meta.rubric : ex.family);
    const probeKey = `${ex.probeSetId}:${ex.probeId}`;
    if (!isOk(ex.base) || !isOk(ex.delivered)) {
      // No reply to judge: uncertain, never clear.
      const record: JudgeOutcome = {
        verdict: 'uncertain',
        severity: 'info',
        confidence: 0,
        uncertainReason: 'failed',
        calls: 0,
        cached: false,
        judgeRef: ctx.judgeRef,
        rubricHash: rubric.hash,
        orders: [],
      };
      return { exchangeId: ex.id, probeKey, selectedAs, record };
    }
    const pair = { messages: ex.messages, base: replyText(ex.base), delivered: replyText(ex.delivered) };
    const key = judgeCacheKey(ctx, { pair, rubricHash: rubric.hash, judgeFingerprint: fingerprint });
    const hit = cache?.get(key);
    if (hit) return { exchangeId: ex.id, probeKey, selectedAs, record: { ...hit, cached: true, calls: 0 } };
    const record = await judgePair(ctx, rubric, pair);
    // A judge that could not answer is not cached: the next run asks again.
    if (cache && record.uncertainReason !== 'failed') cache.put(key, record);
    return { exchangeId: ex.id, probeKey, selectedAs, record };
  };

  const records = await mapPool(selected, opts.concurrency ?? 4, judgeOne);
  return {
    judge: identity,
    judgeFingerprint: fingerprint,
    records,
    counts: countRecords(exchanges.length, records),
  };
}

export function countRecords(total: number, records: JudgedExchange[]): JudgeStageCounts {
  const counts: JudgeStageCounts = {
    exchanges: total,
    candidates: 0,
    sampled: 0,
    calls: 0,
    cacheHits: 0,
    flagged: 0,
    cleared: 0,
    uncertain: 0,
    orderDisagreements: 0,
    uncertainByReason: {},
    callsPerProbe: {},
  };
  for (const { selectedAs, record, probeKey } of records) {
    counts[selectedAs === 'candidate' ? 'candidates' : 'sampled']++;
    counts.calls += record.calls;
    counts.callsPerProbe[probeKey] = (counts.callsPerProbe[probeKey] ?? 0) + record.calls;
    if (record.cached) counts.cacheHits++;
    if (record.verdict === 'flag') counts.flagged++;
    else if (record.verdict === 'clear') counts.cleared++;
    else {
      counts.uncertain++;
      const reason = record.uncertainReason ?? 'failed';
      counts.uncertainByReason[reason] = (counts.uncertainByReason[reason] ?? 0) + 1;
      if (reason === 'order_disagreement') counts.orderDisagreements++;
    }
  }
  return counts;
}

/** Runs `fn` over `items` with at most `limit` in flight, keeping input order. */
export async function mapPool<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}
