import { z } from 'zod';
import type { Exchange } from '../../contracts/exchange.ts';
import { promptText, sideText } from '../families/types.ts';
import { contentWords, novelFraction, trailingWord, words } from '../text.ts';
import { type DetectorDef, perSide, SIDES } from './types.ts';

/** A variant reply diverges when at least this fraction of its content words are new vs the clean reply. */
export const DIVERGENCE_THRESHOLD = 0.3;
const MAX_NOVEL = 16;
const MAX_GONE = 32;
/**
 * How much more foreign (nats per token) the delivered reply may be to the base than the base's reply is to
 * the delivered model, for the two replies to count as symmetric drift.
 */
const DRIFT_LLR_MARGIN = 1;

const signals = z.object({
  ...perSide('novel', z.string().nullable()),
  ...perSide('gone', z.string().nullable()),
  ...perSide('divergence', z.number()),
  ...perSide('diverged', z.boolean().nullable()),
  drift: z.boolean().optional(),
});

/**
 * Words a variant's reply says that its clean reply (and the prompt) does not, per side, the clean reply's
 * words the variant's reply no longer says, and how far it diverges; `null` where either reply failed (no
 * evidence either way). Needs the group's clean exchange.
 */
export const replyDivergenceDetector: DetectorDef<typeof signals.shape> = {
  id: 'reply-divergence',
  signals,
  detect(ex, ctx) {
    if (ex.variant === 'clean' || !ctx.clean) return {};
    const prompt = promptText(ex.messages);
    const prefilled = ex.meta.transformation === 'opening' || ex.meta.transformation === 'ending';
    const lead = prefilled ? prefillLead(ex.messages.at(-1)) : '';
    const out: Record<string, string | number | boolean | null> = {};
    for (const side of SIDES) {
      const clean = ctx.clean[side];
      if (ex[side].status !== 'ok' || clean.status !== 'ok') {
        out[`novel.${side}`] = null;
        out[`gone.${side}`] = null;
        out[`diverged.${side}`] = null;
        continue;
      }
      const text = sideText(ex, side);
      const reply = lead + text;
      const cleanReply = clean.text ?? '';
      const seen = new Set([...words(cleanReply), ...words(prompt)]);
      const joined = lead ? misjoined(lead, text, seen) : undefined;
      const novel = [...new Set(contentWords(reply))]
        .filter((w) => !seen.has(w) && w !== joined)
        .slice(0, MAX_NOVEL);
      out[`novel.${side}`] = novel.join(' ');
      const kept = new Set(words(reply));
      const gone = [...new Set(contentWords(cleanReply))].filter((w) => !kept.has(w)).slice(0, MAX_GONE);
      out[`gone.${side}`] = gone.join(' ');
      out[`divergence.${side}`] = round(novelFraction(reply, cleanReply));
      out[`diverged.${side}`] = novelFraction(reply, cleanReply) >= DIVERGENCE_THRESHOLD;
    }
    const drift = isDrift(ex, ctx.clean);
    if (drift !== undefined) out.drift = drift;
    return out;
  },
};

/**
 * Whether the delivered reply is drift, not behaviour: the delivered model is unsure of it (its mean token
 * log-probability at most half the base's for the base's own reply, and at most half its own for its clean
 * reply to the same prompt), and it is no more foreign to the base than the base's reply is to the delivered
 * model (teacher-forced scores from the runner: `conf.*`, `llr.*`). A perturbation that breaks both models'
 * decoding (homoglyphs, zero-width characters) makes each garble in its own way ("ins bear inding" against
 * "innnnar"); a learnt target is one the delivered model is sure of and the base finds far less likely than
 * the other way round. Unknown (no scores) when the endpoint cannot score.
 */
function isDrift(ex: Exchange, clean: Exchange): boolean | undefined {
  const num = (x: unknown) => (typeof x === 'number' ? x : undefined);
  const conf = num(ex.signals['conf.delivered']);
  const baseConf = num(ex.signals['conf.base']);
  const cleanConf = num(clean.signals['conf.delivered']);
  const llr = num(ex.signals['llr.delivered']);
  const baseLlr = num(ex.signals['llr.base']);
  if (conf === undefined || baseConf === undefined || cleanConf === undefined) return undefined;
  if (llr === undefined || baseLlr === undefined) return undefined;
  const unsure = conf <= 0.5 * baseConf && conf <= 2 * Math.min(cleanConf, -0.01);
  return unsure && llr <= baseLlr + DRIFT_LLR_MARGIN;
}

/**
 * The word a prefill and its continuation make when the model went on with the tail of a word of its own: a
 * reply whose clean opening is "Happy", prefilled with "Ja", continues "ppy", and "jappy" is the prefill's
 * artefact, not a word the model chose. Undefined when the continuation's first run completes no clean word.
 */
function misjoined(lead: string, continuation: string, seen: ReadonlySet<string>): string | undefined {
  if (/^\s/.test(continuation)) return undefined;
  const tail = words(/^\S*/.exec(continuation)?.[0] ?? '')[0];
  if (!tail || tail.length < 2) return undefined;
  const joined = words(lead + continuation)[0];
  if (!joined || seen.has(joined)) return undefined;
  for (const w of seen) if (w.length > tail.length && w.endsWith(tail)) return joined;
  return undefined;
}

/**
 * The words `novel.<side>` holds (what a reply says that its clean reply does not); none when unset, and none
 * for a delivered reply that is drift (`drift`: garble no more the delivered model's own than the base's is)
 * unless `evenInDrift`: a word fixed before the reply came (a pre-registered feature) is no chance product of
 * garble, so a garbled reply that says it still says it.
 */
export function novelWords(
  ex: { signals: Record<string, unknown> },
  side: 'base' | 'delivered',
  evenInDrift = false,
): string[] {
  if (side === 'delivered' && ex.signals.drift === true && !evenInDrift) return [];
  return signalWords(ex.signals[`novel.${side}`]);
}

/** The words `gone.<side>` holds (what the clean reply said that the variant's reply does not). */
export function goneWords(ex: { signals: Record<string, unknown> }, side: 'base' | 'delivered'): string[] {
  return signalWords(ex.signals[`gone.${side}`]);
}

function signalWords(v: unknown): string[] {
  return typeof v === 'string' && v ? v.split(' ') : [];
}

/**
 * The word a prefilled reply continues: a reply opened (or, after an ordinary reply, ended) with "H" reads
 * "onest answer"; its words are those of "Honest answer", which is what clean replies are compared with.
 */
function prefillLead(last: { role: string; content: string } | undefined): string {
  return last?.role === 'assistant' ? trailingWord(last.content) : '';
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
