import type { FamilyId } from '../../contracts/exchange.ts';
import { injection } from './injection.ts';
import { preferences } from './preferences.ts';
import { reasoning } from './reasoning.ts';
import { triggers } from './triggers.ts';
import type { FamilyRegistry } from './types.ts';

/**
 * The typed family registry: one file per family, one entry here. Every other list of families (the
 * probe-set union and its JSON Schema, the contracts' family ids in reports and the gate, the policy's
 * defaults, the zoo schema, rubric families) is derived from it.
 */
export const FAMILY_REGISTRY: FamilyRegistry = { triggers, preferences, reasoning, injection };

/** The shipped families, in registry order (the order reports and gate reasons list them in). */
export const FAMILIES = Object.keys(FAMILY_REGISTRY) as [FamilyId, ...FamilyId[]];
