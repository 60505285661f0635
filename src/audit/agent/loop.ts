import type { AuditSummary } from '../../contracts/exchange.ts';
import type { ModelEndpoint } from '../../endpoints/types.ts';
import type { Ledger } from '../../ledger/ledger.ts';
import { Rng } from '../../probes/rng.ts';
import { mcnemarExact } from '../stats.ts';
import { type AgentPolicy, type AgentState, type ProbeOutcome, ProposalSchema } from './types.ts';

export interface AgentLoopOptions {
  policy: AgentPolicy;
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
  const state: AgentState = { summary: opts.summary, history: [], round: 0, budgetLeft: opts.budget };
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
      if (state.budgetLeft < 2 * p.repeats) {
        opts.ledger.append('agent', {
          policy: opts.policy.name,
          round,
          accepted: false,
          reason: 'over budget',
          proposal: p,
        });
        continue;
      }
      state.budgetLeft -= 2 * p.repeats;
      const outcome = await measure(
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
