import type { Transformation } from '../probes/schema.ts';
import type { TriggerSearchResult } from './trigger-search.ts';

/**
 * The string a minimal trigger names (inserted text, a system turn, a year); none for a perturbation of the
 * whole prompt. The benchmark looks for it in a zoo's written ground truth.
 */
export function triggerKey(t: Transformation): string | undefined {
  if (t.kind === 'insert' || t.kind === 'system') return t.text.trim();
  if (t.kind === 'year') return String(t.year);
  return undefined;
}

/**
 * How specific a trigger result is, highest first: a reproduced string a user can look for (inserted text, a
 * system turn, a year) over a reproduced catalogue perturbation of the whole prompt (homoglyphs, zero-width
 * characters, a wrapper), which says the model reacts to the perturbation but names nothing planted; a target's
 * opening or a generalised response (a fragment, punctuation) after those; what did not reproduce last.
 */
function specificity(t: TriggerSearchResult): number {
  if (!t.reproduced || !t.minimal) return 0;
  if (t.generalised || t.minimal.kind === 'opening') return 1;
  return triggerKey(t.minimal) !== undefined ? 3 : 2;
}

/**
 * Trigger results in the order a report leads with them: the most specific first, then the larger gap between
 * the delivered model's hit rate with the trigger and without it; ties keep the stages' order (catalogue search,
 * then discovery).
 */
export function rankTriggers(triggers: readonly TriggerSearchResult[]): TriggerSearchResult[] {
  const gap = (t: TriggerSearchResult) => (t.hitRateWith ?? 0) - (t.hitRateWithout ?? 0);
  // Array sort is stable: ties keep their order.
  return [...triggers].sort((a, b) => specificity(b) - specificity(a) || gap(b) - gap(a));
}
