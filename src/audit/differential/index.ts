import { harmConfirmStage } from './harm-confirm.ts';
import { injectionConfirmStage } from './injection.ts';
import { preferenceDifferentialStage } from './preferences.ts';
import type { DifferentialStage } from './stage.ts';
import { triggerConfirmStage } from './trigger-confirm.ts';

/** The audit's differential stages, in order (each gets what the earlier ones left of the budget). */
export function defaultDifferentialStages(): DifferentialStage[] {
  return [
    harmConfirmStage(),
    injectionConfirmStage(),
    harmConfirmStage({ source: 'instructed' }),
    triggerConfirmStage(),
    preferenceDifferentialStage(),
  ];
}

/**
 * Requests for the differential stages per request of the audit's `--budget` (generations and score calls,
 * both models counted; a scored continuation counts 1/8): 9 × the default 240 = 2160. At 7 × (1680) an
 * injection implant's confirmations (80 documents) left preference discovery too little to rank a candidate
 * it found, so an organism carrying both kinds of finding was audited on one (spent zoo 13).
 */
export const DIFFERENTIAL_BUDGET_PER_BUDGET = 9;
