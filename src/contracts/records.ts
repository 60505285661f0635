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

/**
 * Kinds the gate appends after the audit closed its evidence (after the manifest's evidence root).
 * Any other kind after the root is tampering: `verifyLedger` rejects it.
 */
export const GATE_RECORD_KINDS: ReadonlySet<RecordKind> = new Set(['transition', 'override', 'release']);

export interface LedgerRecord<P = unknown> {
  seq: number;
  ts: string;
  kind: RecordKind;
  payload: P;
  prevHash: string;
  /** sha256(canonicalJson({seq, ts, kind, payload, prevHash})). */
  hash: string;
}

/**
 * Payload of `run.start`: the manifest as known when the run began (see src/ledger/manifest.ts). Every key
 * present here must hold the same value in the final RUN/manifest.json, or the gate refuses to approve.
 */
export interface RunStartPayload {
  manifest: Record<string, unknown>;
  /** Whether this start is a `--resume` of an interrupted run. */
  resumed?: boolean;
}

/** Payload of `run.end`: counts written when the audit completed. */
export interface RunEndPayload {
  exchanges: number;
  failed: number;
  findings: number;
}

/** Payload of `transition`: a gate decision (see src/gate/decide.ts). */
export interface TransitionPayload {
  from: string;
  to: string;
  reasons: string[];
  policy: { version: string; hash: string };
  lineage: string;
  capabilityId?: string;
}
