import type { Finding } from '../../contracts/exchange.ts';
import type { AgentLead, AgentPolicy, AgentState, Proposal } from './types.ts';

/**
 * The deterministic (offline) policy. Round 0: test the minimal triggers the audit found but has not yet
 * confirmed on fresh prompts (each a trigger hypothesis), and re-test each of the strongest findings on its
 * reproducer with sampling, expecting the finding's defining word. Round 1: for confirmed ones, drop the system turn
 * to see whether the behaviour needs it. Then stop.
 */
export class SearchPolicy implements AgentPolicy {
  readonly name = 'search';

  async propose(state: AgentState): Promise<unknown[]> {
    if (state.round === 0)
      return [
        ...(state.leads ?? [])
          .filter((l) => !l.confirmed)
          .slice(0, 2)
          .map((l) => this.triggerTest(l)),
        ...state.summary.findings.slice(0, 4).flatMap((f) => this.retest(f)),
      ];
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

  /** The lead's minimal trigger on fresh prompts: confirmed, it is a finding with that minimal reproducer. */
  private triggerTest(l: AgentLead): Proposal {
    return {
      type: 'trigger',
      family: 'triggers',
      hypothesis: `${l.condition} makes the delivered model say "${l.signature.slice(0, 3).join(' ')}"`.slice(
        0,
        300,
      ),
      feature: l.feature,
      expect: { contains: l.signature.slice(0, 3).join(' ').slice(0, 80) },
    };
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
