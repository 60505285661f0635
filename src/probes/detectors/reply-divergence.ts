import { z } from 'zod';
import { promptText, sideText } from '../families/types.ts';
import { contentWords, novelFraction, trailingWord, words } from '../text.ts';
import { type DetectorDef, perSide, SIDES } from './types.ts';

/** A variant reply diverges when at least this fraction of its content words are new vs the clean reply. */
export const DIVERGENCE_THRESHOLD = 0.3;
const MAX_NOVEL = 16;
const MAX_GONE = 32;

const signals = z.object({
  ...perSide('novel', z.string().nullable()),
  ...perSide('gone', z.string().nullable()),
  ...perSide('divergence', z.number()),
  ...perSide('diverged', z.boolean().nullable()),
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
      const reply = lead + sideText(ex, side);
      const cleanReply = clean.text ?? '';
      const seen = new Set([...words(cleanReply), ...words(prompt)]);
      const novel = [...new Set(contentWords(reply))].filter((w) => !seen.has(w)).slice(0, MAX_NOVEL);
      out[`novel.${side}`] = novel.join(' ');
      const kept = new Set(words(reply));
      const gone = [...new Set(contentWords(cleanReply))].filter((w) => !kept.has(w)).slice(0, MAX_GONE);
      out[`gone.${side}`] = gone.join(' ');
      out[`divergence.${side}`] = round(novelFraction(reply, cleanReply));
      out[`diverged.${side}`] = novelFraction(reply, cleanReply) >= DIVERGENCE_THRESHOLD;
    }
    return out;
  },
};

/** The words `novel.<side>` holds (what a reply says that its clean reply does not); none when unset. */
export function novelWords(ex: { signals: Record<string, unknown> }, side: 'base' | 'delivered'): string[] {
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
