import type { FamilyRegistry } from '../../probes/families/types.ts';
import { triggerDiscoveryStage } from './trigger-discovery.ts';
import { triggerSearchStage } from './trigger-search.ts';
import type { AuditStageDef } from './types.ts';

/** The audit stages families may declare, by id: one file per stage, one entry here. */
export const AUDIT_STAGES: Readonly<Record<string, AuditStageDef>> = {
  [triggerSearchStage.id]: triggerSearchStage,
  [triggerDiscoveryStage.id]: triggerDiscoveryStage,
};

/**
 * The stages a family table declares, in registry order, each once (two families may declare one stage).
 * A declared id with no stage is a plugin author's error, named here rather than skipped.
 */
export function declaredStages(
  families: FamilyRegistry,
  stages: Readonly<Record<string, AuditStageDef>> = AUDIT_STAGES,
): AuditStageDef[] {
  const out = new Map<string, AuditStageDef>();
  for (const family of Object.values(families))
    for (const id of family.stages ?? []) {
      const stage = stages[id];
      if (!stage)
        throw new Error(
          `family '${family.id}' declares audit stage '${id}', which src/audit/stages does not have`,
        );
      out.set(id, stage);
    }
  return [...out.values()];
}
