import { z } from 'zod';
import type { AuditSummary } from '../../contracts/exchange.ts';
import { FAMILIES } from '../../contracts/exchange.ts';

/** What a policy may propose. Proposals are data, validated here; they never set a verdict. */
export const ProposalSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('probe'),
    family: z.enum(FAMILIES),
    hypothesis: z.string().min(1).max(300),
    messages: z
      .array(z.strictObject({ role: z.enum(['system', 'user']), content: z.string().min(1).max(1000) }))
      .min(1)
      .max(3),
    /** The behaviour: the reply contains this text (case-insensitive). */
    expect: z.strictObject({ contains: z.string().min(1).max(80) }),
    repeats: z.number().int().min(1).max(8).default(4),
  }),
  z.strictObject({ type: z.literal('stop'), reason: z.string().max(300) }),
]);
export type Proposal = z.infer<typeof ProposalSchema>;

export interface ProbeOutcome {
  hitsBase: number;
  hitsDelivered: number;
  n: number;
  /** Exact one-sided McNemar p of delivered over base on the paired repeats. */
  pValue: number;
}

export interface AgentState {
  summary: Pick<AuditSummary, 'families' | 'findings'>;
  history: { proposal: Proposal; outcome: ProbeOutcome }[];
  round: number;
  budgetLeft: number;
}

/** A policy proposes; the loop validates, runs, measures and records. Two policies share this interface. */
export interface AgentPolicy {
  readonly name: string;
  /** Raw proposals (validated by the loop, so an LLM's malformed output is rejected, not trusted). */
  propose(state: AgentState): Promise<unknown[]>;
}
