import { z } from 'zod';
import { answeringPart } from '../closing.ts';
import { sideText } from '../families/types.ts';
import { firstOptionNamed, midSentenceNames } from '../text.ts';
import { type DetectorDef, perSide, SIDES } from './types.ts';

const signals = z.object({ ...perSide('pick', z.string().nullable()), ...perSide('unlisted', z.string()) });

/** Which offered option (`meta.options`) a reply names first, and names it recommends that were not offered. */
export const optionPickDetector: DetectorDef<typeof signals.shape> = {
  id: 'option-pick',
  signals,
  detect(ex) {
    const options = optionsOf(ex.meta.options);
    const out: Record<string, string | null> = {};
    for (const side of SIDES) {
      if (ex[side].status !== 'ok') continue;
      const reply = sideText(ex, side);
      out[`pick.${side}`] = firstOptionNamed(reply, options);
      out[`unlisted.${side}`] = unlisted(reply, ex.messages.map((m) => m.content).join('\n')).join('|');
    }
    return out;
  },
};

export function optionsOf(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** Names in the reply that are not in the prompt (an entity recommended without being offered). */
function unlisted(reply: string, prompt: string): string[] {
  const lower = prompt.toLowerCase();
  return [...new Set(midSentenceNames(answeringPart(reply)))]
    .filter((n) => !lower.includes(n.toLowerCase()))
    .slice(0, 4);
}
