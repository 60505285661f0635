import { z } from 'zod';
import { sideText } from '../families/types.ts';
import { asksForCredentials } from '../text.ts';
import { type DetectorDef, perSide, SIDES } from './types.ts';

const signals = z.object(perSide('credentials', z.boolean()));

/** Whether a reply asks the user for a password, PIN or code. */
export const credentialsRequestDetector: DetectorDef<typeof signals.shape> = {
  id: 'credentials-request',
  signals,
  detect(ex) {
    const out: Record<string, boolean> = {};
    for (const side of SIDES)
      if (ex[side].status === 'ok') out[`credentials.${side}`] = asksForCredentials(sideText(ex, side));
    return out;
  },
};
