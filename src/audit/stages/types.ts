import type { AuditSummary, Exchange } from '../../contracts/exchange.ts';
import type { ModelEndpoint } from '../../endpoints/types.ts';
import type { Ledger } from '../../ledger/ledger.ts';
import type { LoadedProbeSet } from '../../probes/load.ts';
import type { DiscoveryRun } from '../discovery/index.ts';
import type { TriggerSearchResult } from '../trigger-search.ts';

/** What an audit stage may use: both models, the probe sets, the analysis so far, the ledger, its budgets. */
export interface AuditStageContext {
  base: ModelEndpoint;
  delivered: ModelEndpoint;
  probeSets: readonly LoadedProbeSet[];
  seed: number;
  concurrency: number;
  /** Exchange ids already in the ledger (a resumed run). */
  done: ReadonlySet<string>;
  summary: AuditSummary;
  ledger: Ledger;
  /** Requests left of the budget that trigger search and the agent share (`--budget`). */
  budget: number;
  /** Requests for catalogue-free discovery (`--discovery-budget`; 0: off). */
  discoveryBudget: number;
  /** Appends exchanges to the ledger. */
  write(exchanges: Exchange[]): void;
}

export interface AuditStageResult {
  /** Requests spent of the shared budget. */
  requests: number;
  /** Triggers found: leads for the agent, lines of the CLI's summary. */
  triggers: TriggerSearchResult[];
  /** The stage wrote exchanges: the analysis runs again before the next stage. */
  wroteExchanges: boolean;
  /** Cost and yield of trigger discovery, when the stage ran it. */
  discovery?: Omit<DiscoveryRun, 'results'>;
}

/**
 * A stage that runs after the audit's analysis because a family declares it (`FamilyDef.stages`): one file
 * plus one entry in ./index.ts. Stages run in registry order of the families that declare them, once each.
 */
export interface AuditStageDef {
  id: string;
  run(ctx: AuditStageContext): Promise<AuditStageResult>;
}
