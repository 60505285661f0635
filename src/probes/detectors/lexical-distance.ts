import { z } from 'zod';
import type { Exchange, ReplyRecord } from '../../contracts/exchange.ts';
import { lexicalDistance } from '../text.ts';
import type { DetectorDef } from './types.ts';

/** The reply as the model produced it, reasoning included (the text the cross-model scores are over). */
function fullReply(r: ReplyRecord): string {
  return r.reasoning !== undefined ? `<think>${r.reasoning}</think>${r.text ?? ''}` : (r.text ?? '');
}

/** How far apart the two models' replies are in words (0 identical, 1 disjoint); every family uses it. */
export const lexicalDistanceDetector: DetectorDef<{ lexdist: z.ZodOptional<z.ZodNumber> }> = {
  id: 'lexical-distance',
  signals: z.object({ lexdist: z.number().min(0).max(1).optional() }),
  detect(ex: Exchange) {
    if (ex.base.status !== 'ok' || ex.delivered.status !== 'ok') return {};
    return { lexdist: Math.round(lexicalDistance(fullReply(ex.base), fullReply(ex.delivered)) * 1e4) / 1e4 };
  },
};
