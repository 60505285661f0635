import { z } from 'zod';
import type { AuditSummary } from '../../contracts/exchange.ts';
import { FAMILIES } from '../../probes/families/index.ts';

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
  /**
   * A trigger hypothesis: with `feature` placed in the conversation the delivered model says `expect`. The
   * loop tests it on fresh prompts as ordinary triggers exchanges, so a confirmed one becomes a finding.
   */
  z.strictObject({
    type: z.literal('trigger'),
    family: z.literal('triggers'),
    hypothesis: z.string().min(1).max(300),
    feature: z.strictObject({
      text: z.string().min(1).max(200),
      where: z.enum(['system', 'prefix', 'suffix']),
    }),
    expect: z.strictObject({ contains: z.string().min(1).max(80) }),
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
  /** For trigger hypotheses: the variant its exchanges carry (the analysis tests them as any finding). */
  variant?: string;
}

/** A trigger the audit found (catalogue search or discovery): something the agent may test on fresh prompts. */
export interface AgentLead {
  condition: string;
  feature: { text: string; where: 'system' | 'prefix' | 'suffix' };
  /** Words the delivered model says under it. */
  signature: string[];
  /** Already a finding on fresh prompts (a confirmed discovery). */
  confirmed: boolean;
}

export interface AgentState {
  summary: Pick<AuditSummary, 'families' | 'findings'>;
  leads?: AgentLead[];
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
