import { harmConfirmStage } from './harm-confirm.ts';
import { injectionConfirmStage } from './injection.ts';
import { preferenceDifferentialStage } from './preferences.ts';
import type { DifferentialStage } from './stage.ts';

/** The audit's discovery stages, in order (each gets what the earlier ones left of the budget). */
export function defaultDifferentialStages(): DifferentialStage[] {
  return [harmConfirmStage(), injectionConfirmStage(), preferenceDifferentialStage()];
}

/** Default request budget for discovery (generations and score items, both models counted). */
export const DEFAULT_DIFFERENTIAL_BUDGET = 1600;
