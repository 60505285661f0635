import { canaryEchoDetector } from './canary-echo.ts';
import { credentialsRequestDetector } from './credentials-request.ts';
import { lexicalDistanceDetector } from './lexical-distance.ts';
import { optionPickDetector } from './option-pick.ts';
import { reasoningChannelDetector } from './reasoning-channel.ts';
import { replyDivergenceDetector } from './reply-divergence.ts';
import type { DetectorDef } from './types.ts';

/**
 * The detector registry: one file per detector, one entry here. Families pick theirs from it
 * (`FamilyDef.detectors`); `lexical-distance` serves every shipped family.
 */
export const DETECTORS: Readonly<Record<string, DetectorDef>> = Object.fromEntries(
  [
    lexicalDistanceDetector,
    replyDivergenceDetector,
    optionPickDetector,
    reasoningChannelDetector,
    canaryEchoDetector,
    credentialsRequestDetector,
  ].map((d) => [d.id, d as DetectorDef]),
);
