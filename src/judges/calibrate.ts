import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { SEVERITIES } from '../contracts/exchange.ts';
import type { ModelEndpoint, ModelIdentity } from '../endpoints/types.ts';
import { UserError } from '../util/errors.ts';
import { hashJson } from '../util/hash.ts';
import { readValidated } from '../util/zodfile.ts';
import { JudgeCache, judgeCacheKey, judgeFingerprint } from './cache.ts';
import { type JudgeContext, type JudgeOutcome, judgePair } from './judge.ts';
import { budgetFor, PROMPT_VERSION } from './prompt.ts';
import { type RubricSet, rubricById } from './rubric.ts';
import { mapPool } from './stage.ts';

const LabelPairSchema = z.strictObject({
  id: z.string().min(1),
  rubric: z.string().min(1),
  behaviour: z.string().optional(),
  messages: z
    .array(z.strictObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string() }))
    .min(1),
  base: z.string(),
  delivered: z.string(),
  label: z.enum(['flag', 'clear']),
  severity: z.enum(SEVERITIES),
});
const LabelFileSchema = z.strictObject({
  version: z.literal(1),
  source: z.string().optional(),
  pairs: z.array(LabelPairSchema).min(1),
});
export type LabelPair = z.infer<typeof LabelPairSchema>;

/** Labelled pairs from one file or every *.json/*.yaml file in a folder; ids must be unique. */
export function loadLabels(path: string): LabelPair[] {
  let files: string[];
  try {
    files = statSync(path).isDirectory()
      ? readdirSync(path)
          .filter((f) => /\.(json|ya?ml)$/.test(f))
          .sort()
          .map((f) => join(path, f))
      : [path];
  } catch (err) {
    throw new UserError(`${path}: cannot read labels (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const pairs: LabelPair[] = [];
  const seen = new Set<string>();
  for (const f of files) {
    for (const p of readValidated(f, LabelFileSchema).pairs) {
      if (seen.has(p.id)) throw new UserError(`${f}: pairs.id: duplicate label id '${p.id}'`);
      seen.add(p.id);
      pairs.push(p);
    }
  }
  if (pairs.length === 0) throw new UserError(`${path}: no labelled pairs`);
  return pairs;
}

export const CalibrationMetricsSchema = z.object({
  pairs: z.number().int(),
  decisive: z.number().int(),
  /** Accuracy on pairs the judge decided (flag/clear), i.e. excluding uncertain ones. */
  agreement: z.number().nullable(),
  /** Cohen's kappa between judge and labels on decided pairs; null when undefined (one class only). */
  kappa: z.number().nullable(),
  /** Pairs whose two orders both answered validly but disagreed, over such pairs. */
  position_flip_rate: z.number().nullable(),
  uncertain_rate: z.number(),
  confusion: z.object({ tp: z.number(), fp: z.number(), tn: z.number(), fn: z.number() }),
  uncertain_by_reason: z.record(z.string(), z.number()),
  by_behaviour: z.record(
    z.string(),
    z.object({ pairs: z.number(), correct: z.number(), uncertain: z.number() }),
  ),
  judge_calls: z.number().int(),
});
export type CalibrationMetrics = z.infer<typeof CalibrationMetricsSchema>;

export function calibrationMetrics(pairs: LabelPair[], outcomes: JudgeOutcome[]): CalibrationMetrics {
  const confusion = { tp: 0, fp: 0, tn: 0, fn: 0 };
  const uncertainByReason: Record<string, number> = {};
  const byBehaviour: CalibrationMetrics['by_behaviour'] = {};
  let uncertain = 0;
  let bothValid = 0;
  let flips = 0;
  outcomes.forEach((o, i) => {
    const label = (pairs[i] as LabelPair).label;
    const key = pairs[i]?.behaviour ?? pairs[i]?.rubric ?? 'unknown';
    const b = byBehaviour[key] ?? { pairs: 0, correct: 0, uncertain: 0 };
    byBehaviour[key] = b;
    b.pairs++;
    if (o.orders.length === 2 && o.orders.every((r) => r.ok)) {
      bothValid++;
      if (o.uncertainReason === 'order_disagreement') flips++;
    }
    if (o.verdict === 'uncertain') {
      uncertain++;
      b.uncertain++;
      const r = o.uncertainReason ?? 'failed';
      uncertainByReason[r] = (uncertainByReason[r] ?? 0) + 1;
      return;
    }
    if (o.verdict === label) b.correct++;
    if (o.verdict === 'flag') confusion[label === 'flag' ? 'tp' : 'fp']++;
    else confusion[label === 'clear' ? 'tn' : 'fn']++;
  });
  const decisive = confusion.tp + confusion.fp + confusion.tn + confusion.fn;
  const po = decisive ? (confusion.tp + confusion.tn) / decisive : null;
  let kappa: number | null = null;
  if (decisive && po !== null) {
    const judgeFlag = (confusion.tp + confusion.fp) / decisive;
    const labelFlag = (confusion.tp + confusion.fn) / decisive;
    const pe = judgeFlag * labelFlag + (1 - judgeFlag) * (1 - labelFlag);
    kappa = pe < 1 ? (po - pe) / (1 - pe) : null;
  }
  return {
    pairs: pairs.length,
    decisive,
    agreement: po,
    kappa,
    position_flip_rate: bothValid ? flips / bothValid : null,
    uncertain_rate: pairs.length ? uncertain / pairs.length : 0,
    confusion,
    uncertain_by_reason: uncertainByReason,
    by_behaviour: byBehaviour,
    judge_calls: outcomes.reduce((n, o) => n + o.calls, 0),
  };
}

export const CalibrationRecordSchema = z.object({
  fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
  judgeRef: z.string(),
  modelId: z.string(),
  promptVersion: z.string(),
  labelsHash: z.string(),
  rubricsHash: z.string(),
  createdAt: z.string(),
  metrics: CalibrationMetricsSchema,
});
export type CalibrationRecord = z.infer<typeof CalibrationRecordSchema>;

export function defaultCalibrationStore(): string {
  return join(homedir(), '.probate', 'calibrations');
}

export interface CalibrateOptions {
  judge: ModelEndpoint;
  rubrics: RubricSet;
  labels: LabelPair[];
  cacheDir?: string;
  maxAttempts?: number;
  concurrency?: number;
  seed?: number;
}

/** Judges every labelled pair in both orders and measures agreement with the labels. */
export async function calibrate(opts: CalibrateOptions): Promise<CalibrationRecord> {
  const identity = await opts.judge.identity();
  const fingerprint = judgeFingerprint(identity);
  const ctx: JudgeContext = {
    endpoint: opts.judge,
    judgeRef: identity.ref,
    budget: budgetFor(identity.maxModelLen),
    maxAttempts: opts.maxAttempts ?? 3,
    secondOrder: 'always',
    seed: opts.seed ?? 0,
  };
  const cache = opts.cacheDir ? new JudgeCache(opts.cacheDir) : undefined;
  const outcomes = await mapPool(opts.labels, opts.concurrency ?? 4, async (p) => {
    const rubric = rubricById(opts.rubrics, p.rubric);
    const pair = { messages: p.messages, base: p.base, delivered: p.delivered };
    const key = judgeCacheKey(ctx, { pair, rubricHash: rubric.hash, judgeFingerprint: fingerprint });
    const hit = cache?.get(key);
    if (hit) return { ...hit, cached: true, calls: 0 };
    const outcome = await judgePair(ctx, rubric, pair);
    if (cache && outcome.uncertainReason !== 'failed') cache.put(key, outcome);
    return outcome;
  });
  return {
    fingerprint,
    judgeRef: identity.ref,
    modelId: identity.modelId,
    promptVersion: PROMPT_VERSION,
    labelsHash: hashJson(opts.labels),
    rubricsHash: opts.rubrics.hash,
    createdAt: new Date().toISOString(),
    metrics: calibrationMetrics(opts.labels, outcomes),
  };
}

export function writeCalibration(
  record: CalibrationRecord,
  store: string = defaultCalibrationStore(),
): string {
  mkdirSync(store, { recursive: true });
  const file = join(store, `${record.fingerprint}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`);
  renameSync(tmp, file);
  return file;
}

/** The stored calibration of this judge (by identity fingerprint), or undefined if it was never calibrated. */
export function readCalibration(
  identity: ModelIdentity,
  store: string = defaultCalibrationStore(),
): CalibrationRecord | undefined {
  const file = join(store, `${judgeFingerprint(identity)}.json`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new UserError(`${file}: not valid JSON (calibration record)`);
  }
  const parsed = CalibrationRecordSchema.safeParse(data);
  if (!parsed.success)
    throw new UserError(`${file}: not a calibration record (${parsed.error.issues[0]?.message})`);
  return parsed.data;
}
