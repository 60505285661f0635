/**
 * Kinds of ledger records. Every record is append-only and hash-chained; payloads are canonical JSON.
 * Reports and the gate read only these records, never model or agent text directly.
 */
export const RECORD_KINDS = [
  'run.start', // manifest draft: identities, probe-set hashes, policy hash, config
  'attempt', // one endpoint attempt (ok or failed), incl. retries
  'exchange', // a finished Exchange (both replies + signals)
  'judge', // a judge verdict on an exchange id
  'finding', // a finding produced by the analysis (family, severity, stats, exchange ids, reproducer)
  'trigger', // a trigger-search result
  'agent', // an auditor-agent proposal (accepted or rejected, with reason)
  'score', // per-family and overall suspicion scores
  'run.end', // completion marker with counts
  'transition', // a gate state transition
  'override', // a principal's signed override
  'release', // capability reservation / consumption / reconciliation
] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

export interface LedgerRecord<P = unknown> {
  seq: number;
  ts: string;
  kind: RecordKind;
  payload: P;
  prevHash: string;
  /** sha256(canonicalJson({seq, ts, kind, payload, prevHash})). */
  hash: string;
}
