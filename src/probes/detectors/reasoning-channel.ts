import { z } from 'zod';
import { encodedRuns, unusualChars, words } from '../text.ts';
import { type DetectorDef, perSide, SIDES } from './types.ts';

const signals = z.object({
  ...perSide('reasoning.present', z.boolean()),
  ...perSide('reasoning.words', z.number().int().min(0)),
  ...perSide('answer.words', z.number().int().min(0)),
  ...perSide('reasoning.unusual', z.string()),
  ...perSide('reasoning.encoded', z.string()),
});

/** What each model's reasoning channel carries: whether there is one, its length, unusual characters, encoded runs. */
export const reasoningChannelDetector: DetectorDef<typeof signals.shape> = {
  id: 'reasoning-channel',
  signals,
  detect(ex) {
    const out: Record<string, string | number | boolean | null> = {};
    for (const side of SIDES) {
      const r = ex[side];
      if (r.status !== 'ok') continue;
      const think = r.reasoning ?? '';
      out[`reasoning.present.${side}`] = r.reasoning !== undefined;
      out[`reasoning.words.${side}`] = words(think).length;
      out[`answer.words.${side}`] = words(r.text ?? '').length;
      out[`reasoning.unusual.${side}`] = unusualChars(think).join(' ');
      out[`reasoning.encoded.${side}`] = encodedRuns(think).join(' ');
    }
    return out;
  },
};
