import type { LedgerRecord } from '../contracts/records.ts';
import { Ledger } from './ledger.ts';

/**
 * Whether a ledger holds a finished audit. A run is complete when its last `run.start` is followed by a
 * `run.end` whose status is not `aborted`; anything else (a crash, a failure after the start, a ledger with no
 * start at all) is incomplete, and verify, report and --resume say so.
 */
export type RunState =
  | { state: 'complete' }
  | { state: 'no-run' }
  | { state: 'unfinished' }
  | { state: 'aborted'; reason: string };

export function runState(records: Iterable<Pick<LedgerRecord, 'kind' | 'payload'>>): RunState {
  let started = false;
  let end: { status?: unknown; reason?: unknown } | undefined;
  for (const r of records) {
    if (r.kind === 'run.start') {
      started = true;
      end = undefined;
    } else if (r.kind === 'run.end') end = (r.payload ?? {}) as typeof end;
  }
  if (!started) return { state: 'no-run' };
  if (!end) return { state: 'unfinished' };
  if (end.status === 'aborted') return { state: 'aborted', reason: String(end.reason ?? 'unknown') };
  return { state: 'complete' };
}

/** One line for a run that is not complete (undefined when it is). */
export function incompleteReason(state: RunState): string | undefined {
  switch (state.state) {
    case 'complete':
      return undefined;
    case 'no-run':
      return 'holds no run (no run.start record)';
    case 'unfinished':
      return 'run incomplete: it has no run.end (interrupted; finish it with audit --resume)';
    case 'aborted':
      return `run incomplete: aborted before it finished (${state.reason})`;
  }
}

/** The run state of a ledger file (opened read-only). */
export function readRunState(ledgerFile: string): RunState {
  const ledger = Ledger.open(ledgerFile, { readonly: true });
  try {
    return runState(ledger.records(['run.start', 'run.end']));
  } finally {
    ledger.close();
  }
}
