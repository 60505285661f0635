import type { ChatMessage } from '../../endpoints/types.ts';
import type { Signature } from './anomaly.ts';
import { type AttributionContext, firstRanked, minimise } from './attribute.ts';
import type { Hypothesis } from './confirm.ts';
import type { TargetPlace } from './invert.ts';
import type { Feature } from './sweep.ts';
import { type BeamOptions, beamTrigger, polishWord } from './trigger-beam.ts';

/** What attribution starts from: a sweep cluster or an inverted target, and how each is tested for its trigger. */
export interface Lead {
  source: 'sweep' | 'inversion';
  signature: Signature;
  target: string;
  /** Where an inverted target sits in the reply. */
  at?: TargetPlace;
  description: string;
  /** Candidate features, best guess first. */
  candidates: Feature[];
  /** Units every (or most) prompt of a sweep cluster carries. */
  shared: Feature[];
  /** A sweep cluster's features at a place its prompts hold far more often than the sweep's (`Cluster.placed`). */
  placed?: Feature[];
  /** A sweep cluster whose words an inverted target also shows: found by both methods. */
  corroborated?: boolean;
  /** A sweep cluster's anomalous span, as its replies spell it (`anomalousSpan`). */
  span?: { text: string; at: TargetPlace };
  /** A sweep cluster's delivered replies. */
  replies?: string[];
}

/**
 * The trigger inverted from the lead's target by beam search: in the request, then as the system turn; in each,
 * with every alphabet given in turn (a word first, then any printable string). Null if none fires. (Both word
 * searches first cost the shipped tag organism its printable string at 3 × 700 requests, and found nothing
 * in a spent zoo's system turn.)
 */
export async function invertTrigger(
  ctx: AttributionContext,
  scoring: readonly ChatMessage[][],
  alphabets: readonly NonNullable<BeamOptions['alphabet']>[],
): Promise<{ feature: Feature; hits: number } | null> {
  const opts = { carriers: [...ctx.carriers, ...scoring], width: 4, hard: 4 };
  for (const where of ['prefix', 'system'] as const)
    for (const alphabet of alphabets) {
      const found = await beamTrigger(ctx, where, { ...opts, alphabet });
      if (found) return found;
    }
  return null;
}

/**
 * An inverted opening expands from its first characters under the delivered model alone and may come out garbled
 * ("Loove Zolumet" for "Live on Zolumet FM:" on a spent zoo organism, which then never reproduced): when a sweep
 * cluster corroborates it and its replies open with the span, the confirmation opens with the span's own first
 * word and looks for the cluster's words after it.
 */
export function respell(
  hypotheses: (Hypothesis & { lead: Lead })[],
  t: { text: string; at: TargetPlace },
  cluster: Lead,
): void {
  if (t.at !== 'opening' || cluster.span?.at !== 'opening') return;
  const h = hypotheses.find((x) => x.lead.source === 'inversion' && x.lead.target === t.text);
  const first = cluster.span.text.match(/^\S+/)?.[0] ?? '';
  if (h?.feature.where !== 'opening' || (first.match(/\p{L}/gu)?.length ?? 0) < 2) return;
  h.feature = { ...h.feature, text: first };
  h.signature = cluster.signature;
  h.lead = {
    ...h.lead,
    description: `${h.lead.description}, opened as the sweep's replies spell it ("${first}")`,
  };
}

/** The trigger inverted as a word, minimised and polished; null if none fires. */
export async function invertWord(
  ctx: AttributionContext,
  scoring: readonly ChatMessage[][],
): Promise<Feature | null> {
  const found = await invertTrigger(ctx, scoring, ['words']);
  return found && polishWord(ctx, await minimise(ctx, found.feature, found.hits), found.hits);
}

/** Tests per lead before beam inversion: its outright candidates, then the likeliest of its other units. */
const TESTS_PER_LEAD = 4;

/**
 * A lead's outright candidates: units most of a sweep cluster's prompts share, then texts at a place its prompts
 * hold far more often than the sweep's (a model that fires on the place fires on any of them).
 */
export function outright(lead: Lead): Feature[] {
  if (lead.source !== 'sweep') return [];
  const shared = lead.shared.slice(0, 2);
  const placed = (lead.placed ?? []).filter((f) => !shared.some((x) => x.text === f.text)).slice(0, 2);
  return [...shared, ...placed];
}

/**
 * The lead's other units by likelihood gain, up to TESTS_PER_LEAD tests with its outright candidates. Null if
 * none fires (the caller may then invert the trigger by beam search).
 */
export function testRanked(
  ctx: AttributionContext,
  lead: Lead,
): Promise<{ feature: Feature; hits: number } | null> {
  const tested = outright(lead);
  const rest = lead.candidates.filter((f) => !tested.some((x) => x.text === f.text));
  return firstRanked(ctx, rest, Math.max(0, TESTS_PER_LEAD - tested.length));
}
