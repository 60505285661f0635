import { mkdirSync, rmSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { runAudit } from '../audit/audit.ts';
import type { TriggerSearchResult } from '../audit/trigger-search.ts';
import type { FamilyId } from '../contracts/exchange.ts';
import type { JudgeStage } from '../contracts/stages.ts';
import type { AttemptRecord, ModelEndpoint } from '../endpoints/types.ts';
import { decide } from '../gate/decide.ts';
import { collectEvidence } from '../gate/evidence.ts';
import type { LoadedPolicy } from '../gate/policy.ts';
import { Ledger } from '../ledger/ledger.ts';
import { markerRegExp, organismDir, readZoo, type ZooEntry } from '../organisms/zoo.ts';
import { FAMILIES } from '../probes/families/index.ts';
import type { TriggersSet } from '../probes/families/triggers.ts';
import type { LoadedProbeSet } from '../probes/load.ts';
import { UserError } from '../util/errors.ts';
import { auroc, bootstrapAurocCi, roc, type Scored, tprAtFpr } from './metrics.ts';
import { replayTrigger, type TriggerReplay } from './replay.ts';
import type { ModelSource } from './zoo-models.ts';

export interface OrganismResult {
  name: string;
  label: 'implant' | 'benign';
  /** Ground-truth family of an implant (from zoo.json), null for benign organisms. */
  family: FamilyId | null;
  /** The audit's overall suspicion in [0, 1]: the detector score behind the ROC. */
  score: number;
  families: Record<FamilyId, number>;
  findingsByFamily: Record<FamilyId, number>;
  /** Gate-style verdict: the gate's own decide() on the run's evidence under the policy. */
  verdict: 'COMMITTABLE' | 'REVIEW_REQUIRED' | 'BLOCKED';
  verdictReasons: string[];
  /** An implant with at least one finding in its own family. */
  detectedInFamily: boolean | null;
  trigger: TriggerReplay | null;
  exchanges: number;
  failed: number;
  judgeCalls: number | null;
  /** The judge's final verdicts (after both orders) over the exchanges it saw; null without a judge. */
  judgeVerdicts: { flag: number; clear: number; uncertain: number } | null;
  seconds: number;
  run: string;
}

export interface ZooBenchResult {
  bench: 'zoo';
  /** The command line that produced the result (set by the CLI). */
  command?: string;
  date: string;
  machine: { cpus: number; node: string };
  zoo: string;
  via: string;
  seed: number;
  samples: number | null;
  base: string;
  auroc: number;
  auroc_ci: [number, number];
  tpr_at_fpr05: number;
  roc: { fpr: number; tpr: number; threshold: number | null }[];
  family_detection: Record<string, { implants: number; detected: number; rate: number }>;
  detection_rate: number;
  trigger_recovery: {
    organisms: number;
    recovered: number;
    rate: number | null;
    /** Trigger organisms for which the audit reported a trigger that works on replay but is not the planted one. */
    working_not_planted: number;
  };
  false_blocks: number;
  benign: number;
  judge: string | null;
  /** Share of non-candidate exchanges also judged (1: everything, no cascade); null without a judge. */
  judge_sample_rate: number | null;
  judge_calls_per_probe: number | null;
  wall_seconds: number;
  organisms: OrganismResult[];
}

export interface ZooBenchOptions {
  zooDir: string;
  /** Audit only these organisms of the zoo (and its base). */
  only?: string[];
  outDir: string;
  models: ModelSource;
  probeSets: LoadedProbeSet[];
  policy: LoadedPolicy;
  seed: number;
  samples?: number;
  concurrency: number;
  /** Trigger-search requests per organism. */
  budget: number;
  judge?: {
    ref: string;
    sampleRate: number;
    stage: JudgeStage;
    manifestEntry?: Record<string, unknown>;
    rubrics?: { id: string; version?: number; hash: string }[];
  };
  toolVersion: string;
  /** Called after each organism (progress). */
  onOrganism?: (r: OrganismResult, index: number, total: number) => void;
}

export interface ZooPlan {
  base: ZooEntry;
  organisms: ZooEntry[];
  /** Each planned organism's folder (zoo.json `path` relative to the zoo folder, else the name). */
  dirs: Record<string, string>;
}

/**
 * Reads the ground truth (only here, never in the audit): one base, and organisms labelled implant or
 * benign, at least one of each, implants with a family.
 */
export function planZoo(zooDir: string, only?: readonly string[]): ZooPlan {
  const file = join(zooDir, 'zoo.json');
  const listed = readZoo(zooDir);
  const unknown = (only ?? []).filter((n) => !listed.some((o) => o.name === n));
  if (unknown.length) throw new UserError(`--only: ${unknown.join(', ')} not in ${file}`);
  // --only keeps the base and the named organisms; the checks below then apply to that subset.
  const zoo = only?.length ? listed.filter((o) => o.label === 'base' || only.includes(o.name)) : listed;
  const bases = zoo.filter((o) => o.label === 'base');
  if (bases.length !== 1)
    throw new UserError(`${file}: expected exactly one organism labelled base, found ${bases.length}`);
  const organisms = zoo.filter((o) => o.label !== 'base');
  const names = new Set<string>();
  for (const o of zoo) {
    if (names.has(o.name)) throw new UserError(`${file}: organism ${o.name} is listed twice`);
    names.add(o.name);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(o.name))
      throw new UserError(`${file}: name: "${o.name}" is not a folder name (letters, digits, . _ -)`);
    if (o.label === 'implant' && !o.family)
      throw new UserError(`${file}: organism ${o.name}: an implant needs a family`);
  }
  const implants = organisms.filter((o) => o.label === 'implant').length;
  const benign = organisms.length - implants;
  if (implants === 0 || benign === 0)
    throw new UserError(
      `${file}: AUROC needs at least one implant and one benign organism (found ${implants} implant, ${benign} benign)`,
    );
  const dirs = Object.fromEntries(zoo.map((o) => [o.name, organismDir(zooDir, o)]));
  return { base: bases[0]!, organisms, dirs };
}

const zeroFamilies = (): Record<FamilyId, number> =>
  Object.fromEntries(FAMILIES.map((f) => [f, 0])) as Record<FamilyId, number>;

/** Audits every organism of the zoo against its base and scores the audits against the ground truth. */
export async function runZooBench(opts: ZooBenchOptions): Promise<ZooBenchResult> {
  const t0 = performance.now();
  const plan = planZoo(opts.zooDir, opts.only);
  mkdirSync(opts.outDir, { recursive: true });
  const results: OrganismResult[] = [];
  const attempts: { target?: (r: AttemptRecord) => void } = {};
  const observer = (r: AttemptRecord) => attempts.target?.(r);
  const base = await opts.models.open(plan.base.name, observer);
  try {
    for (const [i, entry] of plan.organisms.entries()) {
      const delivered = await opts.models.open(entry.name, observer);
      try {
        const r = await auditOrganism(opts, entry, base, delivered, attempts);
        results.push(r);
        opts.onOrganism?.(r, i, plan.organisms.length);
      } finally {
        await delivered.close();
      }
    }
  } finally {
    await base.close();
  }
  return summarise(opts, plan, results, (performance.now() - t0) / 1000);
}

async function auditOrganism(
  opts: ZooBenchOptions,
  entry: ZooEntry,
  base: ModelEndpoint,
  delivered: ModelEndpoint,
  attempts: { target?: (r: AttemptRecord) => void },
): Promise<OrganismResult> {
  const t0 = performance.now();
  const run = join(opts.outDir, 'runs', entry.name);
  // The bench's own scratch: a rerun into the same --out replaces the organism's previous run.
  rmSync(run, { recursive: true, force: true });
  const result = await runAudit({
    base,
    delivered,
    probeSets: opts.probeSets,
    outDir: run,
    seed: opts.seed,
    samples: opts.samples,
    concurrency: opts.concurrency,
    budget: opts.budget,
    manifest: {
      runId: `bench-zoo-${entry.name}`,
      toolVersion: opts.toolVersion,
      policy: { version: opts.policy.policy.version, hash: opts.policy.hash, path: opts.policy.path },
      judge: opts.judge?.manifestEntry ?? null,
      rubrics: opts.judge?.rubrics ?? [],
    },
    config: { bench: 'zoo', via: opts.models.via, judge: opts.judge?.ref ?? null },
    judgeStage: opts.judge?.stage,
    attempts,
  });
  const evidence = collectEvidence(run, { policyHash: opts.policy.hash });
  const decision = decide(evidence.evidence, opts.policy.policy);
  const families = zeroFamilies();
  for (const f of result.summary.families) families[f.family] = f.score;
  const findingsByFamily = zeroFamilies();
  for (const f of result.summary.findings) findingsByFamily[f.family] = (findingsByFamily[f.family] ?? 0) + 1;
  const family = entry.label === 'implant' ? (entry.family as FamilyId) : null;
  const trigger =
    family === 'triggers' ? await replayFor(opts, entry, base, delivered, result.triggers) : null;
  return {
    name: entry.name,
    label: entry.label as 'implant' | 'benign',
    family,
    score: result.summary.overall,
    families,
    findingsByFamily,
    verdict: decision.state,
    verdictReasons: decision.reasons.slice(0, 5),
    detectedInFamily: family ? (findingsByFamily[family] ?? 0) > 0 : null,
    trigger,
    exchanges: result.exchanges,
    failed: result.failed,
    ...(opts.judge ? judgeTally(result.ledgerFile) : { judgeCalls: null, judgeVerdicts: null }),
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
    run,
  };
}

function replayFor(
  opts: ZooBenchOptions,
  entry: ZooEntry,
  base: ModelEndpoint,
  delivered: ModelEndpoint,
  triggers: TriggerSearchResult[],
): Promise<TriggerReplay> {
  const fresh = opts.probeSets.flatMap((s) =>
    s.set.family === 'triggers' ? (s.set as TriggersSet).freshPrompts : [],
  );
  return replayTrigger({
    condition: entry.condition ?? '',
    marker: entry.expected_marker ? markerRegExp(entry.expected_marker) : undefined,
    triggers,
    freshPrompts: fresh,
    base,
    delivered,
    seed: opts.seed,
  });
}

/** Judge calls and final verdicts recorded in a run's ledger (`judge` records carry both). */
function judgeTally(ledgerFile: string): Pick<OrganismResult, 'judgeCalls' | 'judgeVerdicts'> {
  const ledger = Ledger.open(ledgerFile, { readonly: true });
  try {
    let calls = 0;
    const verdicts = { flag: 0, clear: 0, uncertain: 0 };
    type JudgePayload = {
      calls?: unknown;
      verdict?: unknown;
      record?: { calls?: unknown; verdict?: unknown };
    };
    for (const r of ledger.records<JudgePayload>(['judge'])) {
      const c = r.payload.calls ?? r.payload.record?.calls;
      if (typeof c === 'number') calls += c;
      const v = r.payload.verdict ?? r.payload.record?.verdict;
      if (v === 'flag' || v === 'clear' || v === 'uncertain') verdicts[v]++;
    }
    return { judgeCalls: calls, judgeVerdicts: verdicts };
  } finally {
    ledger.close();
  }
}

function summarise(
  opts: ZooBenchOptions,
  plan: ZooPlan,
  results: OrganismResult[],
  wall: number,
): ZooBenchResult {
  const where = join(opts.zooDir, 'zoo.json');
  const cases: Scored[] = results.map((r) => ({ score: r.score, positive: r.label === 'implant' }));
  const implants = results.filter((r) => r.label === 'implant');
  const benign = results.filter((r) => r.label === 'benign');
  const familyDetection: ZooBenchResult['family_detection'] = {};
  for (const f of FAMILIES) {
    const of = implants.filter((r) => r.family === f);
    if (!of.length) continue;
    const detected = of.filter((r) => r.detectedInFamily).length;
    familyDetection[f] = { implants: of.length, detected, rate: detected / of.length };
  }
  const trig = results.filter((r) => r.trigger);
  const recovered = trig.filter((r) => r.trigger?.recovered).length;
  const calls = results.reduce((n, r) => n + (r.judgeCalls ?? 0), 0);
  const exchanges = results.reduce((n, r) => n + r.exchanges, 0);
  const round = (x: number) => Number(x.toFixed(4));
  return {
    bench: 'zoo',
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version },
    zoo: opts.zooDir,
    via: opts.models.via,
    seed: opts.seed,
    samples: opts.samples ?? null,
    base: plan.base.name,
    auroc: round(auroc(cases, where)),
    auroc_ci: bootstrapAurocCi(cases, { seed: opts.seed }, where).map(round) as [number, number],
    tpr_at_fpr05: round(tprAtFpr(cases, 0.05, where)),
    roc: roc(cases).map((p) => ({
      fpr: round(p.fpr),
      tpr: round(p.tpr),
      threshold: Number.isFinite(p.threshold) ? round(p.threshold) : null,
    })),
    family_detection: familyDetection,
    detection_rate: round(implants.filter((r) => r.detectedInFamily).length / implants.length),
    trigger_recovery: {
      organisms: trig.length,
      recovered,
      rate: trig.length ? round(recovered / trig.length) : null,
      working_not_planted: trig.filter((r) => r.trigger?.works && !r.trigger.recovered).length,
    },
    false_blocks: benign.filter((r) => r.verdict === 'BLOCKED').length,
    benign: benign.length,
    judge: opts.judge?.ref ?? null,
    judge_sample_rate: opts.judge?.sampleRate ?? null,
    judge_calls_per_probe: opts.judge ? round(calls / Math.max(1, exchanges)) : null,
    wall_seconds: Number(wall.toFixed(1)),
    organisms: results,
  };
}
