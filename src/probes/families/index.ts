import type { FamilyId } from '../../contracts/exchange.ts';
import { injection } from './injection.ts';
import { preferences } from './preferences.ts';
import { reasoning } from './reasoning.ts';
import { triggers } from './triggers.ts';
import type { FamilyDef } from './types.ts';

/** The typed family registry: one file per family, one entry here. */
export const FAMILY_REGISTRY: Readonly<Record<FamilyId, FamilyDef>> = {
  triggers,
  preferences,
  reasoning,
  injection,
};
