import type { AuditSummary } from '../../contracts/exchange.ts';
import type { ModelEndpoint } from '../../endpoints/types.ts';
import type { Ledger } from '../../ledger/ledger.ts';
import { Rng } from '../../probes/rng.ts';
import { contentWords, words } from '../../probes/text.ts';
import { confirmHypotheses } from '../discovery/confirm.ts';
import { freshPrompts } from '../discovery/sweep.ts';
import { mcnemarExact } from '../stats.ts';
import {
  type AgentLead,
  type AgentPolicy,
  type AgentState,
  type ProbeOutcome,
  type Proposal,
  ProposalSchema,
} from './types.ts';

export interface AgentLoopOptions {
  policy: AgentPolicy;
  /** Triggers the audit found, for policies that test them on fresh prompts. */
  leads?: AgentLead[];
  concurrency?: number;
  base: ModelEndpoint;
  delivered: ModelEndpoint;
  summary: AuditSummary;
  ledger: Ledger;
  /** Model requests (both models count). */
  budget: number;
  seed: number;
  rounds?: number;
}

/**
 * Hypothesis → probes → statistics → refine, under a request budget. Every proposal, accepted or rejected,
 * becomes an `agent` record with its measured outcome. The agent's text never reaches findings or verdicts.
 */
export async function runAgentLoop(opts: AgentLoopOptions): Promise<{ requests: number }> {
  const state: AgentState = {
    summary: opts.summary,
    leads: opts.leads ?? [],
    history: [],
    round: 0,
    budgetLeft: opts.budget,
  };
  const rounds = opts.rounds ?? 3;
  for (let round = 0; round < rounds && state.budgetLeft > 0; round++) {
    state.round = round;
    let raw: unknown[];
    try {
      raw = await opts.policy.propose(state);
    } catch (err) {
      opts.ledger.append('agent', {
        policy: opts.policy.name,
        round,
        accepted: false,
        reason: `policy failed: ${(err as Error).message.slice(0, 200)}`,
      });
      break;
    }
    if (raw.length === 0) break;
    let stop = false;
    for (const [i, item] of raw.entries()) {
      const parsed = ProposalSchema.safeParse(item);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        opts.ledger.append('agent', {
          policy: opts.policy.name,
          round,
          accepted: false,
          reason: `invalid proposal: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`,
          raw: JSON.stringify(item ?? null).slice(0, 2000),
        });
        continue;
      }
      const p = parsed.data;
      if (p.type === 'stop') {
        opts.ledger.append('agent', { policy: opts.policy.name, round, accepted: true, proposal: p });
        stop = true;
        break;
      }
      const cost = p.type === 'trigger' ? TRIGGER_COST : 2 * p.repeats;
      if (state.budgetLeft < cost) {
        opts.ledger.append('agent', {
          policy: opts.policy.name,
          round,
          accepted: false,
          reason: 'over budget',
          proposal: p,
        });
        continue;
      }
      state.budgetLeft -= cost;
      const outcome =
        p.type === 'trigger'
          ? await confirmTrigger(opts, p, `agent-r${round}-${i}`)
          : await measure(
              opts,
              p.messages,
              p.expect.contains,
              p.repeats,
              Rng.derive(opts.seed, 'agent', round, i),
            );
      opts.ledger.append('agent', { policy: opts.policy.name, round, accepted: true, proposal: p, outcome });
      state.history.push({ proposal: p, outcome });
    }
    if (stop) break;
  }
  return { requests: opts.budget - state.budgetLeft };
}

const AGENT_PROMPTS = 16;
/** Clean and featured prompt, both models, per fresh prompt. */
const TRIGGER_COST = 4 * AGENT_PROMPTS;

/**
 * Tests a trigger hypothesis on fresh prompts (none used by the sweep, attribution or discovery's
 * confirmation) as ordinary triggers exchanges in the ledger: the audit's analysis then decides, by the
 * same paired statistics as every finding, whether it is one. The hypothesis text stays in the agent record.
 */
async function confirmTrigger(
  opts: AgentLoopOptions,
  p: Extract<Proposal, { type: 'trigger' }>,
  probeSetId: string,
): Promise<ProbeOutcome> {
  const sig = contentWords(p.expect.contains);
  const { confirmations } = await confirmHypotheses({
    base: opts.base,
    delivered: opts.delivered,
    hypotheses: [
      {
        feature: { slot: 'agent', ...p.feature },
        signature: { words: sig.length > 0 ? sig.slice(0, 6) : words(p.expect.contains).slice(0, 6) },
      },
    ],
    prompts: freshPrompts(opts.seed, AGENT_PROMPTS),
    probeSetId,
    seed: opts.seed,
    concurrency: opts.concurrency ?? 8,
    write: (exs) => opts.ledger.appendMany(exs.map((payload) => ({ kind: 'exchange' as const, payload }))),
  });
  const c = confirmations[0]!;
  return {
    hitsBase: c.hitsBase,
    hitsDelivered: c.hitsDelivered,
    n: c.n,
    pValue: c.pValue,
    variant: c.variant,
  };
}

async function measure(
  opts: AgentLoopOptions,
  messages: { role: 'system' | 'user'; content: string }[],
  contains: string,
  repeats: number,
  rng: Rng,
): Promise<ProbeOutcome> {
  let both = 0;
  let b = 0;
  let c = 0;
  const needle = contains.toLowerCase();
  for (let r = 0; r < repeats; r++) {
    // Repeats sample at temperature 0.7 with a shared seed per repeat, so the pair is comparable.
    const params = { maxTokens: 96, temperature: r === 0 ? 0 : 0.7, seed: rng.seed() };
    const [rb, rd] = await Promise.allSettled([
      opts.base.chat({ messages, params }),
      opts.delivered.chat({ messages, params }),
    ]);
    const hit = (x: typeof rb) =>
      x.status === 'fulfilled' && (x.value[0]?.text ?? '').toLowerCase().includes(needle);
    const hb = hit(rb);
    const hd = hit(rd);
    if (hb && hd) both++;
    else if (hd) b++;
    else if (hb) c++;
  }
  return { hitsBase: both + c, hitsDelivered: both + b, n: repeats, pValue: mcnemarExact(b, c) };
}
