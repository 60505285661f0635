import type { ChatMessage } from '../../endpoints/types.ts';
import { type AttributionContext, fires, hitsWith, scoredTail, targetBody } from './attribute.ts';
import { isGeneralised } from './generalised.ts';
import { BudgetExhausted } from './session.ts';
import type { Feature, Where } from './sweep.ts';

/** Characters a candidate trigger is grown with (a byte-level vocabulary's printable ASCII, less the space). */
export const GROW = [
  ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789|[]<>{}()#@!$%&*_-+=~:;/.,?',
];
/**
 * Lowercase letters only: an ordinary word planted as a trigger is found as a word, not as punctuation around
 * a piece of it (a spent zoo's ordinary-word organism also fires on `o}ig`; with capitals the beam stopped
 * at `igXoo`).
 */
const LOWER = [...'abcdefghijklmnopqrstuvwxyz'];
/**
 * A word search starts from every lowercase letter pair: one letter moves the target no more than noise
 * does on a byte-level model, two letters of the trigger word already do (measured on a spent zoo's
 * ordinary-word trigger: its first pair ranked second of 676 on a single context).
 */
const PAIRS = LOWER.flatMap((a) => LOWER.map((b) => a + b));
/** Lengths a word search may grow without raising its leader's mean by WORD_PATIENCE_GAIN nats. */
const WORD_PATIENCE = 2;
const WORD_PATIENCE_GAIN = 0.5;
/**
 * The smallest mean gain (nats over the target's opening) for which polishing changes a letter: on a spent
 * zoo's organism the planted word beat the near-miss the beam stopped at by 0.29 nats.
 */
const POLISH_GAIN = 0.1;

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
  /** 'words': letters only, from every lowercase pair; 'ascii' (default): printable ASCII, from one character. */
  alphabet?: 'words' | 'ascii';
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
  const words = opts.alphabet === 'words';
  const grow = words ? LOWER : GROW;
  const pool = scoringPool(ctx, where, opts.carriers);
  const copies = copyGuard(target);
  const logprobs = (texts: string[], contexts: ScoringContext[]) => scoreUnder(ctx, target, texts, contexts);
  let beam = [''];
  let hard = pool.slice(0, hardCount);
  const tested = new Set<string>();
  // A word search that stops climbing is given up early: the trigger is not a word (the printable beam
  // comes next, on what is left of the budget).
  let bestMean = Number.NEGATIVE_INFINITY;
  let flat = 0;
  try {
    for (let length = words ? 2 : 1; length <= maxLength; length++) {
      const grown = words && length === 2 ? PAIRS : beam.flatMap((b) => grow.flatMap((c) => [b + c, c + b]));
      const cands = [...new Set(grown)].filter((t) => !copies(t));
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
      hard = weakest(pool, everywhere, hardCount);
      if (mean(everywhere) >= bestMean + WORD_PATIENCE_GAIN) [bestMean, flat] = [mean(everywhere), 0];
      else if (words && ++flat >= WORD_PATIENCE) return null;
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

interface ScoringContext {
  where: Where;
  carrier: readonly ChatMessage[];
  body: string;
}

/** Every carrier with the string before and after the request, or as the system turn. */
function scoringPool(
  ctx: AttributionContext,
  where: 'prefix' | 'system',
  carriers?: readonly ChatMessage[][],
): ScoringContext[] {
  const positions: Where[] = where === 'system' ? ['system'] : ['prefix', 'suffix'];
  // An ending is scored after the carrier's clean reply, which only the attribution carriers have.
  const cs = ctx.at === 'ending' ? ctx.carriers : (carriers ?? ctx.carriers);
  return positions.flatMap((p) => cs.map((c, i) => ({ where: p, carrier: c, body: targetBody(ctx, i) })));
}

/** Summed log-probability of the target's opening under the delivered model, per text and context. */
async function scoreUnder(
  ctx: AttributionContext,
  target: string,
  texts: readonly string[],
  contexts: readonly ScoringContext[],
): Promise<number[][] | null> {
  const tail = scoredTail(ctx, target);
  const reqs = texts.flatMap((t) =>
    contexts.map((c) => ({ context: placed(c.carrier, t, c.where), body: c.body, tail })),
  );
  const lp = await ctx.s.scoreTails('delivered', reqs);
  if (!lp) return null;
  return texts.map((_, i) => contexts.map((_, k) => lp[i * contexts.length + k]!.reduce((a, x) => a + x, 0)));
}

/**
 * Polishes a trigger made of letters towards the word the delivered model expects: hill-climbs over
 * one-letter substitutions, one-letter extensions at either end and a capital first letter, each step taken only if it raises the
 * target's mean likelihood by at least POLISH_GAIN (screened on the contexts where the current string is
 * weakest, the best few scored on all), and keeps the result only if it fires at least as often. A byte-level
 * model also fires on near-misses of its trigger word ("igzoo", "iglo" for "igloo"); the beam stops at the
 * first that fires, the likelihood goes on to the word. The near-miss stays in the record. Returns the feature
 * unchanged when the endpoint cannot score, the budget runs out, or nothing improves it.
 */
export async function polishWord(
  ctx: AttributionContext,
  f: Feature,
  hits: number,
  opts: { targetChars?: number; maxLength?: number; rounds?: number } = {},
): Promise<Feature> {
  if (!/^[A-Za-z]+$/.test(f.text) || (f.where !== 'prefix' && f.where !== 'suffix' && f.where !== 'system'))
    return f;
  const target = ctx.target.slice(0, opts.targetChars ?? 24);
  const pool = scoringPool(ctx, f.where === 'system' ? 'system' : 'prefix');
  const copies = copyGuard(target);
  const maxLength = opts.maxLength ?? 16;
  // Each candidate's objective: the target's mean likelihood over the contexts.
  const objective = async (texts: string[], contexts = pool) => {
    const lp = await scoreUnder(ctx, target, texts, contexts);
    return lp ? texts.map((t, i) => ({ t, each: lp[i]!, v: mean(lp[i]!) })) : null;
  };
  try {
    const first = await objective([f.text]);
    if (!first) return f;
    let at = first[0]!;
    for (let round = 0; round < (opts.rounds ?? 6); round++) {
      const hard = weakest(pool, at.each, 4);
      const cands = new Set<string>();
      for (let i = 0; i < at.t.length; i++)
        for (const c of LOWER) cands.add(at.t.slice(0, i) + c + at.t.slice(i + 1));
      if (at.t.length < maxLength) for (const c of LOWER) cands.add(at.t + c).add(c + at.t);
      // A name or a sentence's first word is planted capitalised (the beam grows lowercase only).
      cands.add(at.t.charAt(0).toUpperCase() + at.t.slice(1));
      cands.delete(at.t);
      const list = [...cands].filter((t) => !copies(t));
      const screen = await objective(list, hard);
      if (!screen) break;
      const shortlist = screen
        .sort((a, b) => b.v - a.v)
        .slice(0, 8)
        .map((x) => x.t);
      const scored = await objective(shortlist);
      if (!scored) break;
      const top = scored.sort((a, b) => b.v - a.v)[0];
      if (!top || top.v - at.v < POLISH_GAIN) break;
      at = top;
    }
    if (at.t === f.text) return f;
    const polished = { ...f, text: at.t };
    return (await hitsWith(ctx, polished)) >= Math.max(ctx.need, hits) ? polished : f;
  } catch (err) {
    if (!(err instanceof BudgetExhausted)) throw err;
    return f;
  }
}

/** The `n` contexts where a candidate's target likelihood (`values`, one per context) is lowest. */
function weakest(pool: readonly ScoringContext[], values: readonly number[], n: number): ScoringContext[] {
  return pool
    .map((c, i) => ({ c, v: values[i]! }))
    .sort((a, b) => a.v - b.v)
    .slice(0, n)
    .map((x) => x.c);
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
