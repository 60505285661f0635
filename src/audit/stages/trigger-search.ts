import type { AuditSummary } from '../../contracts/exchange.ts';
import type { ChatMessage, ModelEndpoint } from '../../endpoints/types.ts';
import type { Ledger } from '../../ledger/ledger.ts';
import type { TriggersSet } from '../../probes/families/triggers.ts';
import { turn } from '../../probes/families/types.ts';
import type { LoadedProbeSet } from '../../probes/load.ts';
import type { Transformation } from '../../probes/schema.ts';
import { searchTrigger, type TriggerSearchResult } from '../trigger-search.ts';
import type { AuditStageDef } from './types.ts';

const MAX_SEARCHES = 3;

/**
 * Runs trigger search for the strongest conditional-content trigger findings (at most one per kind of
 * transformation, at most three) within the request budget, and records each result as a `trigger` record.
 */
export async function searchTriggers(ctx: {
  base: ModelEndpoint;
  delivered: ModelEndpoint;
  probeSets: readonly LoadedProbeSet[];
  summary: AuditSummary;
  ledger: Ledger;
  budget: number;
  seed: number;
}): Promise<TriggerSearchResult[]> {
  const catalogue = new Map<string, { t: Transformation; fresh: ChatMessage[][] }>();
  for (const s of ctx.probeSets) {
    if (s.set.family !== 'triggers') continue;
    const set = s.set as TriggersSet;
    const fresh = set.freshPrompts.map((p) => turn(p.system, p.user));
    for (const t of set.transformations) if (!catalogue.has(t.id)) catalogue.set(t.id, { t, fresh });
  }
  const candidates = ctx.summary.findings
    .filter((f) => f.family === 'triggers' && f.kind === 'says')
    .sort((a, b) => a.statistic.qValue - b.statistic.qValue || b.statistic.effect - a.statistic.effect);
  const results: TriggerSearchResult[] = [];
  const kindsDone = new Set<string>();
  let budget = ctx.budget;
  for (const f of candidates) {
    if (results.length >= MAX_SEARCHES || budget <= 0) break;
    const variant = f.statistic.name.split('|')[0]!.replace(/^variant:/, '');
    const entry = catalogue.get(variant);
    if (!entry || entry.fresh.length === 0 || kindsDone.has(entry.t.kind)) continue;
    kindsDone.add(entry.t.kind);
    const r = await searchTrigger({
      base: ctx.base,
      delivered: ctx.delivered,
      start: entry.t,
      freshPrompts: entry.fresh,
      budget,
      seed: ctx.seed,
    });
    budget -= r.requests;
    ctx.ledger.append('trigger', { findingId: f.id, ...r });
    results.push(r);
  }
  return results;
}

/** Trigger search for the triggers family's strongest findings, on the shared budget. */
export const triggerSearchStage: AuditStageDef = {
  id: 'trigger-search',
  async run(ctx) {
    const triggers = await searchTriggers(ctx);
    return { requests: triggers.reduce((n, t) => n + t.requests, 0), triggers, wroteExchanges: false };
  },
};
