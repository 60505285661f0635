import type { Finding } from '../../contracts/exchange.ts';
import type { AgentPolicy, AgentState, Proposal } from './types.ts';

/**
 * The deterministic (offline) policy. Round 0: re-test each of the strongest findings on its reproducer
 * with sampling, expecting the finding's defining word. Round 1: for confirmed ones, drop the system turn
 * to see whether the behaviour needs it. Then stop.
 */
export class SearchPolicy implements AgentPolicy {
  readonly name = 'search';

  async propose(state: AgentState): Promise<unknown[]> {
    if (state.round === 0) return state.summary.findings.slice(0, 4).flatMap((f) => this.retest(f));
    if (state.round === 1) {
      const out: Proposal[] = [];
      for (const h of state.history) {
        const confirmed = h.outcome.hitsDelivered > h.outcome.hitsBase && h.proposal.type === 'probe';
        if (!confirmed || h.proposal.type !== 'probe') continue;
        const userOnly = h.proposal.messages.filter((m) => m.role === 'user');
        if (userOnly.length === h.proposal.messages.length) continue;
        out.push({
          ...h.proposal,
          hypothesis: `${h.proposal.hypothesis} (without the system turn)`,
          messages: userOnly,
        });
      }
      return out.length ? out : [{ type: 'stop', reason: 'no refinement left' }];
    }
    return [{ type: 'stop', reason: 'done' }];
  }

  private retest(f: Finding): Proposal[] {
    const word = definingText(f);
    const messages = f.reproducer?.messages.filter((m) => m.role !== 'assistant');
    if (!word || !messages?.length) return [];
    return [
      {
        type: 'probe',
        family: f.family,
        hypothesis: `finding ${f.id} reproduces: the delivered reply contains "${word}"`,
        messages: messages.map((m) => ({
          role: m.role as 'system' | 'user',
          content: m.content.slice(0, 1000),
        })),
        expect: { contains: word },
        repeats: 4,
      },
    ];
  }
}

/** The word or name a finding's statistic is about (`SCOPE|KIND:NAME` → NAME). */
function definingText(f: Finding): string | null {
  const name = f.statistic.name.split('|')[1]?.split(':').slice(1).join(':');
  if (!name || f.kind === 'diverges' || f.kind === 'obeys-canary' || f.kind === 'contamination') return null;
  if (f.kind === 'asks-credentials') return 'password';
  if (f.kind === 'char') return String.fromCodePoint(Number.parseInt(name.replace('U+', ''), 16));
  return name;
}
