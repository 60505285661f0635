import type { ModelEndpoint } from '../../endpoints/types.ts';
import type { AgentStage } from '../audit.ts';
import { leadsFrom } from './leads.ts';
import { LlmPolicy } from './llm-policy.ts';
import { runAgentLoop } from './loop.ts';
import { SearchPolicy } from './search-policy.ts';
import type { AgentPolicy } from './types.ts';

/** `--agent search` → the deterministic policy; `--agent REF` → an LLM policy on that endpoint. */
export async function agentStageFor(
  spec: string,
  ctx: {
    base: ModelEndpoint;
    delivered: ModelEndpoint;
    seed: number;
    openEndpoint: (ref: string) => Promise<ModelEndpoint>;
  },
): Promise<AgentStage> {
  const policy: AgentPolicy =
    spec === 'search' ? new SearchPolicy() : new LlmPolicy(await ctx.openEndpoint(spec));
  return ({ summary, ledger, budget, triggers }) =>
    runAgentLoop({
      policy,
      leads: leadsFrom(triggers),
      base: ctx.base,
      delivered: ctx.delivered,
      summary,
      ledger,
      budget,
      seed: ctx.seed,
    });
}
