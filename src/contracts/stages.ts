import type { Ledger } from '../ledger/ledger.ts';
import type { Exchange, Finding } from './exchange.ts';

/**
 * The judge seam: a stage after the audit's analysis that reads exchanges and findings and appends `judge`
 * records (src/judges/audit-stage.ts). The CLI injects it into the audit, so judges never import audit/.
 */
export type JudgeStage = (
  exchanges: () => Iterable<Exchange>,
  findings: readonly Finding[],
  ledger: Ledger,
) => Promise<void>;
