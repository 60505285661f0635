import type { Exchange, FamilyId } from '../../contracts/exchange.ts';
import { EndpointError, type ModelEndpoint } from '../../endpoints/types.ts';
import type { ProbeGroup } from '../../probes/families/types.ts';
import type { LoadedProbeSet } from '../../probes/load.ts';
import { runDifferential } from '../runner.ts';

/**
 * Differential discovery stages run after the planned probes and before the analysis. A stage reads what
 * the audit has recorded, proposes candidates from the models' own behaviour, and confirms them with fresh
 * probe groups that go through the same differential runner (both models, same messages, detectors) into the
 * ledger as exchanges. The analysis then tests them like any other exchange: discovery never writes a finding.
 * Discovery and confirmation use disjoint prompts, so the confirmatory p-values stay honest.
 */
export interface DifferentialContext {
  base: ModelEndpoint;
  delivered: ModelEndpoint;
  probeSets: readonly LoadedProbeSet[];
  /** The exchanges recorded so far (read again on each call). */
  exchanges: () => Iterable<Exchange>;
  seed: number;
  /** Requests (generations and score calls, each model counted) this stage may spend. */
  budget: number;
}

export interface DifferentialPlan {
  /** Confirmation groups to run through the differential runner. */
  groups: ProbeGroup[];
  /** Requests spent on discovery itself (before confirmation). */
  requests: number;
  /** Facts about what was discovered, for the ledger (`trigger`-style summaries, no model text). */
  notes: Record<string, unknown>;
}

export interface DifferentialStage {
  id: string;
  /** The family its confirmation exchanges belong to (a failed plan is recorded there). */
  family: FamilyId;
  /** Variants of its confirmation exchanges: a resumed run that has any does not plan the stage again. */
  variants: readonly string[];
  plan(ctx: DifferentialContext): Promise<DifferentialPlan>;
}

export interface DifferentialRun {
  stage: string;
  requests: number;
  exchanges: number;
  planned: Partial<Record<FamilyId, number>>;
  notes: Record<string, unknown>;
  /** Wall time of the stage, planning and confirmation. */
  seconds?: number;
}

/**
 * Runs each stage's plan and its confirmation groups. Confirmation exchanges already in the ledger (a resumed
 * run) are not run again. Each confirmation sample costs four requests: a reply and a score call per model.
 */
export async function runDifferentialStages(
  stages: readonly DifferentialStage[],
  ctx: DifferentialContext & {
    concurrency: number;
    done: ReadonlySet<string>;
    write: (exchanges: Exchange[]) => void;
  },
): Promise<DifferentialRun[]> {
  const runs: DifferentialRun[] = [];
  let budget = ctx.budget;
  const recorded = new Set<string>();
  let gaveUp = false;
  for (const e of ctx.exchanges()) {
    recorded.add(e.variant);
    // The runner stopped attempting (an endpoint went away): discovery would only hammer it; the gap is
    // already on record as failed exchanges.
    if (e.delivered.status === 'failed' && e.delivered.attempts === 0) gaveUp = true;
  }
  for (const stage of stages) {
    if (budget <= 0 || gaveUp) break;
    if (stage.variants.some((v) => recorded.has(v))) {
      runs.push({ stage: stage.id, requests: 0, exchanges: 0, planned: {}, notes: { resumed: true } });
      continue;
    }
    const t0 = performance.now();
    let plan: DifferentialPlan;
    try {
      plan = await stage.plan({ ...ctx, budget });
    } catch (err) {
      // A stage that could not run is a gap in the evidence, never a pass: one failed exchange records it.
      ctx.write([failedPlan(stage, ctx.probeSets, err)]);
      runs.push({ stage: stage.id, requests: 0, exchanges: 1, planned: { [stage.family]: 1 }, notes: {} });
      continue;
    }
    const planned: Partial<Record<FamilyId, number>> = {};
    let samples = 0;
    for (const g of plan.groups) {
      planned[g.family] = (planned[g.family] ?? 0) + g.samples.length;
      samples += g.samples.length;
    }
    await runDifferential({
      base: ctx.base,
      delivered: ctx.delivered,
      groups: plan.groups,
      concurrency: ctx.concurrency,
      done: ctx.done,
      write: ctx.write,
    });
    budget -= plan.requests + 4 * samples;
    runs.push({
      stage: stage.id,
      requests: plan.requests + 4 * samples,
      exchanges: samples,
      planned,
      notes: plan.notes,
      seconds: Math.round((performance.now() - t0) / 100) / 10,
    });
  }
  return runs;
}

function failedPlan(stage: DifferentialStage, sets: readonly LoadedProbeSet[], err: unknown): Exchange {
  const set = sets.find((s) => s.set.family === stage.family) ?? sets[0];
  const failure = {
    kind: err instanceof EndpointError ? err.kind : ('engine' as const),
    message: `discovery stage ${stage.id} failed: ${err instanceof Error ? err.message : String(err)}`.slice(
      0,
      500,
    ),
  };
  return {
    id: `${set?.set.id ?? 'discovery'}:${stage.id}:discovery-failed:0`,
    family: stage.family,
    probeSetId: set?.set.id ?? 'discovery',
    probeSetHash: set?.hash ?? '',
    probeId: stage.id,
    variant: 'discovery-failed',
    sample: 0,
    seed: 0,
    messages: [],
    meta: {},
    base: { status: 'failed', failure, attempts: 0 },
    delivered: { status: 'failed', failure, attempts: 0 },
    signals: {},
  };
}
