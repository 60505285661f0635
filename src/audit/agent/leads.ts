import type { DiscoveryResult } from '../discovery/index.ts';
import type { TriggerSearchResult } from '../trigger-search.ts';
import type { AgentLead } from './types.ts';

/**
 * Triggers the audit found, as leads for the agent: the minimal condition of a catalogue trigger search (its
 * finding is on the catalogue variant, not on the minimal trigger) and discoveries with their confirmation.
 */
export function leadsFrom(triggers: readonly TriggerSearchResult[]): AgentLead[] {
  const out: AgentLead[] = [];
  for (const t of triggers) {
    const m = t.minimal;
    if (!m || !t.condition || t.signature.length === 0) continue;
    const feature =
      m.kind === 'insert'
        ? { text: m.text, where: m.position === 'suffix' ? ('suffix' as const) : ('prefix' as const) }
        : m.kind === 'system'
          ? { text: m.text, where: 'system' as const }
          : m.kind === 'year'
            ? { text: `(${m.year})`, where: 'prefix' as const }
            : undefined;
    if (!feature) continue;
    const discovered = 'source' in t && (t as DiscoveryResult).variant !== undefined;
    out.push({
      condition: t.condition,
      feature,
      signature: t.signature,
      confirmed: discovered && t.reproduced,
    });
  }
  return out;
}
