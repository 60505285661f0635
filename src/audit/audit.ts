import { join } from 'node:path';
import type { AuditSummary, Exchange, FamilyId } from '../contracts/exchange.ts';
import type { JudgeStage } from '../contracts/stages.ts';
import type { AttemptRecord, ModelEndpoint, ModelIdentity } from '../endpoints/types.ts';
import { Ledger } from '../ledger/ledger.ts';
import { type Manifest, writeManifest } from '../ledger/manifest.ts';
import { FAMILY_REGISTRY } from '../probes/families/index.ts';
import type { FamilyRegistry, ProbeGroup } from '../probes/families/types.ts';
import type { LoadedProbeSet, SkippedProbeSet } from '../probes/load.ts';
import { UserError } from '../util/errors.ts';
import { analyze } from './analyze.ts';
import { contaminationExchanges } from './contamination.ts';
import { DIFFERENTIAL_BUDGET_PER_BUDGET, defaultDifferentialStages } from './differential/index.ts';
import { type DifferentialRun, type DifferentialStage, runDifferentialStages } from './differential/stage.ts';
import type { DiscoveryRun } from './discovery/index.ts';
import { createRunFolder, LEDGER_FILE, removeRunFolder } from './run-folder.ts';
import { runDifferential } from './runner.ts';
import { AUDIT_STAGES, declaredStages } from './stages/index.ts';
import type { AuditStageDef } from './stages/types.ts';
import { rankTriggers } from './trigger-rank.ts';
import type { TriggerSearchResult } from './trigger-search.ts';

/** The auditor-agent seam (src/audit/agent): proposes and runs extra probes, writes `agent` records. */
export type AgentStage = (ctx: {
  summary: AuditSummary;
  ledger: Ledger;
  budget: number;
  /** Triggers found by catalogue search and discovery (leads the agent may test on fresh prompts). */
  triggers: readonly TriggerSearchResult[];
}) => Promise<{ requests: number }>;

export interface AuditOptions {
  base: ModelEndpoint;
  delivered: ModelEndpoint;
  probeSets: LoadedProbeSet[];
  skippedProbeSets?: SkippedProbeSet[];
  outDir: string;
  seed: number;
  samples?: number;
  concurrency: number;
  /** Requests for trigger search and the agent together. */
  budget: number;
  /** Requests for catalogue-free trigger discovery (default: 6 × budget; 0 turns it off). */
  discoveryBudget?: number;
  /** Requests for the differential stages (harm, injection carriers, preferences); default 9 × budget; 0: off. */
  differentialBudget?: number;
  /** The probe families (default: FAMILY_REGISTRY); their declared stages run after the analysis. */
  families?: FamilyRegistry;
  /** The stages families may declare, by id (default: AUDIT_STAGES). */
  stages?: Readonly<Record<string, AuditStageDef>>;
  /** Differential stages (default: defaultDifferentialStages()). */
  differential?: readonly DifferentialStage[];
  resume?: boolean;
  /** Manifest fields decided by the caller (tool version, policy). */
  manifest: {
    runId: string;
    toolVersion: string;
    policy: { version: string; hash: string; path?: string };
    /** The judge and its calibration, when the run has a judge stage. */
    judge?: Record<string, unknown> | null;
    rubrics?: { id: string; version?: number; hash: string }[];
  };
  config?: Record<string, unknown>;
  judgeStage?: JudgeStage;
  agentStage?: AgentStage;
  onProgress?: (total: number) => (p: { done: number; failed: number }) => void;
  /**
   * Endpoint attempt records are relayed here; the audit points `target` at its ledger while it runs and
   * records any `pending` ones (made before the ledger existed, e.g. identity requests) first.
   */
  attempts?: { target?: (record: AttemptRecord) => void; pending?: AttemptRecord[] };
}

export interface AuditResult {
  summary: AuditSummary;
  triggers: TriggerSearchResult[];
  differential: DifferentialRun[];
  /** Cost and yield of trigger discovery (absent when it was off). */
  discovery?: Omit<DiscoveryRun, 'results'>;
  exchanges: number;
  failed: number;
  ledgerFile: string;
  manifest: Record<string, unknown>;
}

export function planGroups(
  sets: readonly LoadedProbeSet[],
  seed: number,
  samples?: number,
  families: FamilyRegistry = FAMILY_REGISTRY,
): () => Iterable<ProbeGroup> {
  return function* () {
    for (const s of sets) {
      const family = families[s.set.family];
      if (!family) throw new UserError(`${s.file}: family: '${s.set.family}' is not a probe family here`);
      yield* family.expand(s, { seed, samples });
    }
  };
}

/**
 * One audit: records run.start, streams exchanges to the ledger as they finish, checks held-out sets for
 * contamination, analyses the ledger's exchanges (the same pure function the gate uses), searches for minimal
 * triggers, runs the optional agent and judge stages, and closes with findings, scores and run.end.
 */
export async function runAudit(opts: AuditOptions): Promise<AuditResult> {
  // Identities first: an endpoint that fails here leaves no run folder behind.
  const base = await opts.base.identity();
  const delivered = await opts.delivered.identity();
  const folder = createRunFolder(opts.outDir);
  const ledgerFile = join(opts.outDir, LEDGER_FILE);
  let ledger: Ledger | undefined;
  let started = false;
  try {
    ledger = Ledger.open(ledgerFile);
    const opened = ledger;
    for (const r of opts.attempts?.pending?.splice(0) ?? []) opened.queueAttempt(r);
    if (opts.attempts) opts.attempts.target = (r) => opened.queueAttempt(r);
    const result = await auditInto(opts, ledger, { base, delivered }, () => {
      started = true;
    });
    return { ...result, ledgerFile };
  } catch (err) {
    if (opts.attempts) opts.attempts.target = undefined;
    if (!started) {
      ledger?.close();
      ledger = undefined;
      removeRunFolder(folder);
    } else if (ledger) {
      try {
        recordAbort(ledger, err);
      } catch {
        // The ledger itself failed (disk full?): its last run.start without run.end reads as unfinished.
      }
    }
    throw err;
  } finally {
    if (opts.attempts) opts.attempts.target = undefined;
    ledger?.close();
  }
}

/**
 * Exchanges go to the ledger's group commit: the analysis that builds on them reads the ledger, which commits
 * them first, and a crash loses only the last few, which `--resume` sends again.
 */
export function queueExchanges(ledger: Ledger, exs: readonly Exchange[]): void {
  ledger.queue(exs.map((payload) => ({ kind: 'exchange' as const, payload })));
}

/** Closes a run that failed after run.start with an `aborted` run.end, so verify and report see it. */
function recordAbort(ledger: Ledger, err: unknown): void {
  const reason = String((err as Error)?.message ?? err)
    .split('\n')[0]!
    .slice(0, 300);
  const counts = countExchanges(mapIter(ledger.records<Exchange>(['exchange']), (r) => r.payload));
  ledger.append('run.end', { ...counts, findings: 0, status: 'aborted', reason });
}

async function auditInto(
  opts: AuditOptions,
  ledger: Ledger,
  identities: { base: ModelIdentity; delivered: ModelIdentity },
  onStarted: () => void,
): Promise<Omit<AuditResult, 'ledgerFile'>> {
  const families = opts.families ?? FAMILY_REGISTRY;
  const stages = declaredStages(families, opts.stages ?? AUDIT_STAGES);
  const groups = planGroups(opts.probeSets, opts.seed, opts.samples, families);
  const planned: Record<FamilyId, number> = {};
  let total = 0;
  for (const g of groups()) {
    planned[g.family] = (planned[g.family] ?? 0) + g.samples.length;
    total += g.samples.length;
  }
  const done = new Set<string>();
  if (opts.resume) for (const r of ledger.records<Exchange>(['exchange'])) done.add(r.payload.id);
  else if (ledger.count() > 0)
    throw new UserError(
      `${join(opts.outDir, LEDGER_FILE)} already holds a run: use --resume or another --out`,
    );
  const manifest = {
    schema: 'probate.manifest/v1' as const,
    ...opts.manifest,
    createdAt: new Date().toISOString(),
    base: identities.base,
    delivered: identities.delivered,
    probeSets: opts.probeSets.map((s) => ({
      id: s.set.id,
      version: s.set.version,
      hash: s.hash,
      family: s.set.family,
      split: s.set.split,
      ...(s.sealedFileHash ? { sealedFileHash: s.sealedFileHash } : {}),
    })),
    rubrics: opts.manifest.rubrics ?? [],
  };
  ledger.append('run.start', {
    manifest,
    resumed: opts.resume === true && done.size > 0,
    config: {
      ...opts.config,
      seed: opts.seed,
      samples: opts.samples ?? null,
      concurrency: opts.concurrency,
      budget: opts.budget,
    },
    seed: opts.seed,
    planned,
    skippedProbeSets: opts.skippedProbeSets ?? [],
  });
  onStarted();
  const progress = opts.onProgress?.(total);
  // Contamination checks run alongside the probes (their exchanges are appended after them).
  const contamination = Promise.all(
    opts.probeSets
      .filter((p) => p.set.split === 'heldout')
      .map((s) => contaminationExchanges(opts.base, opts.delivered, s, { seed: opts.seed })),
  );
  contamination.catch(() => {}); // awaited below; a runner failure must not leave it unhandled
  const run = await runDifferential({
    base: opts.base,
    delivered: opts.delivered,
    groups: groups(),
    registry: families,
    concurrency: opts.concurrency,
    done,
    write: (exs) => queueExchanges(ledger, exs),
    onProgress: progress && ((p) => progress({ done: p.done + done.size, failed: p.failed })),
  });
  for (const exs of await contamination) {
    const fresh = exs.filter((e) => !done.has(e.id));
    queueExchanges(ledger, fresh);
  }
  const exchanges = () => mapIter(ledger.records<Exchange>(['exchange']), (r) => r.payload);
  const differential = await runDifferentialStages(opts.differential ?? defaultDifferentialStages(), {
    base: opts.base,
    delivered: opts.delivered,
    probeSets: opts.probeSets,
    exchanges,
    seed: opts.seed,
    budget: opts.differentialBudget ?? DIFFERENTIAL_BUDGET_PER_BUDGET * opts.budget,
    concurrency: opts.concurrency,
    done,
    write: (exs) => queueExchanges(ledger, exs),
  });
  for (const d of differential)
    for (const [f, n] of Object.entries(d.planned) as [FamilyId, number][])
      planned[f] = (planned[f] ?? 0) + n;
  const analyzeAll = () => analyze(exchanges(), { seed: opts.seed, planned, families });
  let summary = analyzeAll();
  let budget = opts.budget;
  const triggers: TriggerSearchResult[] = [];
  let discovery: AuditResult['discovery'];
  const write = (exs: Exchange[]) => queueExchanges(ledger, exs);
  for (const stage of stages) {
    const r = await stage.run({
      base: opts.base,
      delivered: opts.delivered,
      probeSets: opts.probeSets,
      seed: opts.seed,
      concurrency: opts.concurrency,
      done,
      summary,
      ledger,
      budget,
      discoveryBudget: opts.discoveryBudget ?? 6 * opts.budget,
      write,
    });
    budget -= r.requests;
    triggers.push(...r.triggers);
    if (r.discovery) discovery = r.discovery;
    if (r.wroteExchanges) summary = analyzeAll();
  }
  if (opts.agentStage && budget > 0) {
    await opts.agentStage({ summary, ledger, budget, triggers });
    // The agent's confirmatory probes are exchanges: they count through the same analysis.
    summary = analyzeAll();
  }
  if (opts.judgeStage) await opts.judgeStage(exchanges, summary.findings, ledger);
  ledger.appendMany([
    ...summary.findings.map((payload) => ({ kind: 'finding' as const, payload })),
    { kind: 'score', payload: { families: summary.families, overall: summary.overall } },
  ]);
  const counts = countExchanges(exchanges());
  const end = ledger.append('run.end', {
    exchanges: counts.exchanges,
    failed: counts.failed,
    findings: summary.findings.length,
  });
  // writeManifest validates with zod: the cast only bridges ModelIdentity's lack of an index signature.
  writeManifest(opts.outDir, {
    ...manifest,
    evidenceRoot: end.hash,
    evidenceSeq: end.seq,
  } as unknown as Manifest);
  return {
    summary,
    triggers: rankTriggers(triggers),
    differential,
    discovery,
    exchanges: counts.exchanges,
    failed: counts.failed || run.failed,
    manifest,
  };
}

function countExchanges(exs: Iterable<Exchange>): { exchanges: number; failed: number } {
  let exchanges = 0;
  let failed = 0;
  for (const e of exs) {
    exchanges++;
    if (e.base.status !== 'ok' || e.delivered.status !== 'ok') failed++;
  }
  return { exchanges, failed };
}

function* mapIter<T, U>(it: Iterable<T>, f: (t: T) => U): Generator<U> {
  for (const t of it) yield f(t);
}
