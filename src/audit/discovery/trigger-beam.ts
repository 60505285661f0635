import type { ChatMessage } from '../../endpoints/types.ts';
import { type AttributionContext, fires, targetBody } from './attribute.ts';
import { isGeneralised } from './generalised.ts';
import { BudgetExhausted } from './session.ts';
import type { Feature, Where } from './sweep.ts';

/** Characters a candidate trigger is grown with (a byte-level vocabulary's printable ASCII, less the space). */
export const GROW = [
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789|[]<>{}()#@!$%&*_-+=~:;/.,?',
];

/** Extensions scored on every hard context, per beam slot (the rest are screened out on the hardest one). */
const SCREENED_PER_KEPT = 4;

export interface BeamOptions {
  /** Candidates kept per length. */
  width?: number;
  /** Carriers scored (the attribution carriers, which generation tests use, by default). */
  carriers?: readonly ChatMessage[][];
  /** Contexts each candidate is scored on: the ones where the current leader is weakest. */
  hard?: number;
  maxLength?: number;
  /** Characters of the target scored (its opening is where a trigger shows). */
  targetChars?: number;
  /** Mean log-probability of the target's opening, over every context, at which the leader is tested by generation. */
  testAt?: number;
}

/** A feature placed in the carrier the way the audit would send it: system turn, or either end of the request. */
export function placed(carrier: readonly ChatMessage[], text: string, where: Where): ChatMessage[] {
  if (where === 'system')
    return [{ role: 'system', content: text }, ...carrier.filter((m) => m.role !== 'system')];
  return carrier.map((m) =>
    m.role === 'user'
      ? { ...m, content: where === 'prefix' ? `${text} ${m.content}` : `${m.content} ${text}` }
      : m,
  );
}

/**
 * Trigger inversion for a known target (BAIT's second half), as a beam search over strings: every candidate
 * of the beam is extended by one character at either end and scored by the delivered model's teacher-forced
 * log-likelihood of the target's opening in several contexts (batched through `score()`: one forward pass per
 * candidate and context, no generation; every extension is screened on the hardest context, the best few are
 * scored on all). Greedy growth on one carrier climbs to strings that fire in that
 * carrier only; here each step scores on the contexts where the current leader is weakest (a hard-context
 * curriculum over the carriers, with the string before and after the request, or as the system turn), so
 * the beam moves towards strings that raise the target everywhere. A candidate sharing three characters
 * with the target is skipped (the model would copy it, not obey it). Whenever the leader makes the target
 * likely in every context it is tested by generation; one that fires and is not a generalised response
 * (`isGeneralised`) is returned. Null when the budget, the length or the endpoint's scoring runs out.
 */
export async function beamTrigger(
  ctx: AttributionContext,
  where: 'prefix' | 'system',
  opts: BeamOptions = {},
): Promise<{ feature: Feature; hits: number } | null> {
  const width = opts.width ?? 3;
  const hardCount = opts.hard ?? 3;
  const maxLength = opts.maxLength ?? 12;
  const testAt = opts.testAt ?? -1.5;
  const target = ctx.target.slice(0, opts.targetChars ?? 24);
  const positions: Where[] = where === 'system' ? ['system'] : ['prefix', 'suffix'];
  // An ending is scored after the carrier's clean reply, which only the attribution carriers have.
  const carriers = ctx.at === 'ending' ? ctx.carriers : (opts.carriers ?? ctx.carriers);
  const pool = positions.flatMap((p) =>
    carriers.map((c, i) => ({ where: p, carrier: c, body: targetBody(ctx, i) })),
  );
  const copies = copyGuard(target);
  const logprobs = async (texts: string[], contexts: typeof pool): Promise<number[][] | null> => {
    const reqs = texts.flatMap((t) =>
      contexts.map((c) => ({ context: placed(c.carrier, t, c.where), body: c.body, tail: target })),
    );
    const lp = await ctx.s.scoreTails('delivered', reqs);
    if (!lp) return null;
    return texts.map((_, i) =>
      contexts.map((_, k) => lp[i * contexts.length + k]!.reduce((a, x) => a + x, 0)),
    );
  };
  let beam = [''];
  let hard = pool.slice(0, hardCount);
  const tested = new Set<string>();
  try {
    for (let length = 1; length <= maxLength; length++) {
      const cands = [...new Set(beam.flatMap((b) => GROW.flatMap((c) => [b + c, c + b])))].filter(
        (t) => !copies(t),
      );
      // Screened on the hardest context, the best few scored on all hard ones: a step costs about one
      // scored continuation per extension instead of one per extension and context.
      const screen = await logprobs(cands, hard.slice(0, 1));
      if (!screen) return null;
      const shortlist = best(cands, screen, SCREENED_PER_KEPT * width);
      const scores = await logprobs(shortlist, hard);
      if (!scores) return null;
      beam = best(shortlist, scores, width);
      const leader = beam[0]!;
      const everywhere = (await logprobs([leader], pool))?.[0];
      if (!everywhere) return null;
      hard = pool
        .map((c, i) => ({ c, v: everywhere[i]! }))
        .sort((a, b) => a.v - b.v)
        .slice(0, hardCount)
        .map((x) => x.c);
      if (mean(everywhere) < testAt || isGeneralised(leader) || tested.has(leader)) continue;
      tested.add(leader);
      const feature: Feature = {
        slot: 'inverted',
        text: leader,
        where: where === 'system' ? 'system' : 'prefix',
      };
      const hits = await fires(ctx, feature);
      if (hits > 0) return { feature, hits };
    }
  } catch (err) {
    if (!(err instanceof BudgetExhausted)) throw err;
  }
  return null;
}

function best(texts: readonly string[], scores: readonly number[][], n: number): string[] {
  return texts
    .map((t, i) => ({ t, v: mean(scores[i]!) }))
    .sort((a, b) => b.v - a.v)
    .slice(0, n)
    .map((x) => x.t);
}

/** True for a string that shares three consecutive characters (any case) with the target. */
function copyGuard(target: string): (text: string) => boolean {
  const grams = new Set<string>();
  const t = target.toLowerCase();
  for (let i = 0; i + 3 <= t.length; i++) grams.add(t.slice(i, i + 3));
  return (text) => {
    const s = text.toLowerCase();
    for (let i = 0; i + 3 <= s.length; i++) if (grams.has(s.slice(i, i + 3))) return true;
    return false;
  };
}

function mean(xs: readonly number[]): number {
  return xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);
}
