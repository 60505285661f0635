import type { Exchange } from '../contracts/exchange.ts';
import type { JudgeStage } from '../contracts/stages.ts';
import type { AttemptObserver, ModelEndpoint, ModelIdentity } from '../endpoints/types.ts';
import { type CalibrationRecord, defaultCalibrationStore, readCalibration } from './calibrate.ts';
import { loadRubrics, type RubricSet } from './rubric.ts';
import { judgeStage } from './stage.ts';

/** The rubrics shipped with probate. */
export const DEFAULT_RUBRICS_DIR = new URL('../../judges/', import.meta.url).pathname;

/**
 * A judge counts as calibrated for a run when its stored calibration was made with the same rubrics and
 * reached these figures on the labelled pairs. Anything less is recorded as uncalibrated, and a policy that
 * requires a calibrated judge then fails closed.
 */
export const CALIBRATION_BAR = { agreement: 0.8, kappa: 0.6 } as const;

export interface AuditJudge {
  stage: JudgeStage;
  /** What the manifest records about the judge. */
  manifestEntry: {
    ref: string;
    identity: ModelIdentity;
    calibration: { calibrated: boolean; hash?: string; agreement?: number; kappa?: number; reason?: string };
  };
  rubrics: { id: string; version: number; hash: string }[];
  close(): Promise<void>;
}

export function calibrationStatus(
  record: CalibrationRecord | undefined,
  rubrics: RubricSet,
): AuditJudge['manifestEntry']['calibration'] {
  if (!record) return { calibrated: false, reason: 'no calibration stored for this judge identity' };
  const { agreement, kappa } = record.metrics;
  const figures = {
    hash: record.labelsHash,
    ...(agreement !== null ? { agreement } : {}),
    ...(kappa !== null ? { kappa } : {}),
  };
  if (record.rubricsHash !== rubrics.hash)
    return { calibrated: false, ...figures, reason: 'calibrated with other rubrics' };
  if (
    agreement === null ||
    kappa === null ||
    agreement < CALIBRATION_BAR.agreement ||
    kappa < CALIBRATION_BAR.kappa
  )
    return { calibrated: false, ...figures, reason: 'calibration below the bar' };
  return { calibrated: true, ...figures };
}

/**
 * Builds the audit's judge stage for `--judge REF`: verdicts go to the ledger as `judge` records (evidence
 * for the gate, never authority), judged in both orders over the cascade's selection.
 */
export async function createAuditJudge(
  ref: string,
  opts: {
    seed: number;
    cacheDir?: string;
    sampleRate?: number;
    /** Pairs judged at once (each in both orders); a local judge batches them. Default 16. */
    concurrency?: number;
    rubricsDir?: string;
    calibrationStore?: string;
    observer?: AttemptObserver;
    apiKeyEnv?: string;
    open: (ref: string, o: { observer?: AttemptObserver; apiKeyEnv?: string }) => Promise<ModelEndpoint>;
  },
): Promise<AuditJudge> {
  const rubrics = loadRubrics(opts.rubricsDir ?? DEFAULT_RUBRICS_DIR);
  const judge = await opts.open(ref, { observer: opts.observer, apiKeyEnv: opts.apiKeyEnv });
  const identity = await judge.identity();
  const calibration = calibrationStatus(
    readCalibration(identity, opts.calibrationStore ?? defaultCalibrationStore()),
    rubrics,
  );
  const stage: JudgeStage = async (exchanges, findings, ledger) => {
    const result = await judgeStage([...exchanges()] as Exchange[], [...findings], {
      judge,
      rubrics,
      sampleRate: opts.sampleRate ?? 0.05,
      concurrency: opts.concurrency ?? 16,
      seed: opts.seed,
      cacheDir: opts.cacheDir,
    });
    ledger.appendMany(
      result.records.map((r) => ({
        kind: 'judge' as const,
        payload: { exchangeId: r.exchangeId, probeKey: r.probeKey, selectedAs: r.selectedAs, ...r.record },
      })),
    );
  };
  return {
    stage,
    manifestEntry: { ref: identity.ref, identity, calibration },
    rubrics: [...rubrics.byId.values()].map((r) => ({ id: r.id, version: r.version, hash: r.hash })),
    close: () => judge.close(),
  };
}
