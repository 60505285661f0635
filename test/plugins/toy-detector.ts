import { z } from 'zod';
import { type DetectorDef, perSide, SIDES } from '../../src/probes/detectors/types.ts';
import { sideText } from '../../src/probes/families/types.ts';

const signals = z.object(perSide('shouts', z.boolean()));

/** A toy detector, as a plugin author writes one (docs/EXTENDING.md): one file, one registry entry. */
export const shoutingDetector: DetectorDef<typeof signals.shape> = {
  id: 'shouting',
  signals,
  detect(ex) {
    const out: Record<string, boolean> = {};
    for (const side of SIDES) {
      if (ex[side].status !== 'ok') continue;
      const letters = sideText(ex, side).replace(/[^A-Za-z]/g, '');
      out[`shouts.${side}`] = letters.length >= 8 && letters === letters.toUpperCase();
    }
    return out;
  },
};
