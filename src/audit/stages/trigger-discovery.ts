import type { RecordPayload } from '../../contracts/records.ts';
import { discoverTriggers } from '../discovery/index.ts';
import type { AuditStageDef } from './types.ts';

/** Catalogue-free trigger discovery (src/audit/discovery/) on its own budget; writes exchanges and `trigger` records. */
export const triggerDiscoveryStage: AuditStageDef = {
  id: 'trigger-discovery',
  async run(ctx) {
    if (ctx.discoveryBudget <= 0) return { requests: 0, triggers: [], wroteExchanges: false };
    const { results, ...cost } = await discoverTriggers({
      base: ctx.base,
      delivered: ctx.delivered,
      seed: ctx.seed,
      budget: ctx.discoveryBudget,
      concurrency: ctx.concurrency,
      done: ctx.done,
      write: ctx.write,
      // The sweep summary carries more than the contract names; the ledger checks what it does name.
      record: (payload) => ctx.ledger.append('trigger', payload as RecordPayload<'trigger'>),
    });
    return { requests: 0, triggers: results, wroteExchanges: true, discovery: cost };
  },
};
