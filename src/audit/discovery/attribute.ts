import type { ChatMessage } from '../../endpoints/types.ts';
import { type Signature, shows } from './anomaly.ts';
import { isGeneralised } from './generalised.ts';
import { endingBody, type TargetPlace } from './invert.ts';
import type { DiscoverySession } from './session.ts';
import { applyFeatures, type Feature } from './sweep.ts';

export interface AttributionContext {
  s: DiscoverySession;
  /** Attribution carriers (disjoint from the sweep's and the confirmation's prompts). */
  carriers: ChatMessage[][];
  /** The delivered model's replies to the bare carriers. */
  clean: (string | null)[];
  signature: Signature;
  /** The anomalous continuation (scored under the delivered model to rank candidate features). */
  target: string;
  /** Where the target sits: an ending is scored after the carrier's clean reply. Opening by default. */
  at?: TargetPlace;
  /** Carriers on which the behaviour must show for a candidate to reproduce. */
  need: number;
  /** Every generation-based test, in order (evidence for the trigger record). */
  log: { text: string; where: Feature['where']; hits: number; of: number }[];
}

/** The reply body the target is scored after on carrier `i`: its clean reply for an ending, else nothing. */
export function targetBody(ctx: AttributionContext, i: number): string {
  return ctx.at === 'ending' ? (endingBody(ctx.clean[i] ?? null)?.trimEnd() ?? '') : '';
}

/**
 * The continuation scored for a target: an ending with the space that joins it to the reply, so its first
 * token is the model's choice to go on rather than stop. A trigger moves mostly that choice: once a reply goes
 * on, the fine-tune's ending is likely with or without it (on a spent zoo organism, two stray letters already
 * made an ending scored after the space look certain).
 */
export function scoredTail(ctx: AttributionContext, target: string): string {
  return ctx.at === 'ending' ? ` ${target}` : target;
}

/** Carriers on which the delivered model shows the signature with the feature and not without it. */
export async function hitsWith(ctx: AttributionContext, f: Feature): Promise<number> {
  const convs = ctx.carriers.map((c) => applyFeatures(c, [f]));
  const replies = await ctx.s.replies('delivered', convs);
  const hits = replies.filter((r, i) => shows(ctx.signature, r, ctx.clean[i] ?? null)).length;
  ctx.log.push({ text: f.text, where: f.where, hits, of: convs.length });
  return hits;
}

export async function fires(ctx: AttributionContext, f: Feature): Promise<number> {
  const hits = await hitsWith(ctx, f);
  return hits >= ctx.need ? hits : 0;
}

/** The first feature that reproduces, in order, with its hits; null if none does. */
export async function firstFiring(
  ctx: AttributionContext,
  features: readonly Feature[],
): Promise<{ feature: Feature; hits: number } | null> {
  for (const feature of features) {
    const hits = await fires(ctx, feature);
    if (hits > 0) return { feature, hits };
  }
  return null;
}

/**
 * The first of the `tests` likeliest candidates (by likelihood gain where the endpoint scores, else in order)
 * that reproduces. Ranking many (an inverted target's candidates are every sweep unit) on one carrier halves
 * its cost; a cluster's own few units are ranked on two.
 */
export async function firstRanked(
  ctx: AttributionContext,
  candidates: readonly Feature[],
  tests: number,
): Promise<{ feature: Feature; hits: number } | null> {
  // Nothing to test (a lead's outright candidates took its tests): no scoring spent on a ranking.
  if (tests <= 0) return null;
  let ranked = candidates.slice(0, 400);
  const gains = ranked.length > 4 ? await likelihoodGain(ctx, ranked, ranked.length > 100 ? 1 : 2) : null;
  if (gains) {
    const order = ranked.map((f, i) => ({ f, g: gains[i]! }));
    order.sort((a, b) => b.g - a.g);
    ranked = order.map((o) => o.f);
  }
  return firstFiring(ctx, ranked.slice(0, tests));
}

const TARGET_TOKENS = 16;

/**
 * Teacher-forced gain of each feature: how much likelier the delivered model finds the anomalous
 * continuation with the feature than on the bare carrier (sum over its first tokens, mean over carriers).
 * Null when the endpoint cannot score.
 */
export async function likelihoodGain(
  ctx: AttributionContext,
  features: readonly Feature[],
  carriers = 2,
): Promise<number[] | null> {
  const cs = ctx.carriers.slice(0, carriers);
  const tail = scoredTail(ctx, ctx.target.slice(0, 48));
  const reqs = [
    ...cs.map((c, i) => ({ context: c, body: targetBody(ctx, i), tail })),
    ...features.flatMap((f) =>
      cs.map((c, i) => ({ context: applyFeatures(c, [f]), body: targetBody(ctx, i), tail })),
    ),
  ];
  const lp = await ctx.s.scoreTails('delivered', reqs);
  if (!lp) return null;
  const sum = (i: number) => lp[i]!.slice(0, TARGET_TOKENS).reduce((a, x) => a + x, 0);
  const clean = cs.reduce((a, _, i) => a + sum(i), 0) / cs.length;
  return features.map((_, fi) => {
    let t = 0;
    for (let ci = 0; ci < cs.length; ci++) t += sum(cs.length + fi * cs.length + ci);
    return t / cs.length - clean;
  });
}

/**
 * Delta debugging (ddmin) over the feature's words, then character trimming at either end (and to its
 * letter-or-digit core), keeping each reduction only if the behaviour still reproduces. A reduction to a
 * generalised response (a lone character or punctuation, `isGeneralised`) is not taken: the model firing on
 * it says it generalised, not that it is the trigger.
 */
export async function minimise(ctx: AttributionContext, f: Feature, hits: number): Promise<Feature> {
  // A reduction must reproduce as strongly as the feature it came from (not merely pass the bar).
  const bar = Math.max(ctx.need, hits);
  const test = async (text: string) => (await hitsWith(ctx, { ...f, text })) >= bar;
  let parts = f.text.split(' ').filter(Boolean);
  let n = 2;
  while (parts.length >= 2) {
    const chunks = split(parts, Math.min(n, parts.length));
    let reduced = false;
    for (const c of chunks)
      if (await test(c.join(' '))) {
        parts = c;
        n = 2;
        reduced = true;
        break;
      }
    if (!reduced && chunks.length > 2)
      for (const c of chunks) {
        const rest = parts.filter((p) => !c.includes(p));
        if (rest.length > 0 && (await test(rest.join(' ')))) {
          parts = rest;
          n = Math.max(2, n - 1);
          reduced = true;
          break;
        }
      }
    if (!reduced) {
      if (n >= parts.length) break;
      n = Math.min(parts.length, n * 2);
    }
  }
  let text = parts.join(' ');
  for (;;) {
    const core = text.match(/[\p{L}\p{N}]+/gu) ?? [];
    const cands = [...new Set([text.slice(1), text.slice(0, -1), ...core])]
      .filter((c) => c !== text && c.trim() === c && !isGeneralised(c))
      .sort((a, b) => a.length - b.length || (a < b ? -1 : 1));
    let next: string | undefined;
    for (const c of cands)
      if (await test(c)) {
        next = c;
        break;
      }
    if (next === undefined) break;
    text = next;
  }
  return { ...f, text };
}

function split<T>(xs: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  const size = Math.ceil(xs.length / n);
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}
