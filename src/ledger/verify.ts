import type { KeyObject } from 'node:crypto';
import { GATE_RECORD_KINDS, RECORD_KINDS, type RecordKind } from '../contracts/records.ts';
import { checkGateRecord } from './gate-sig.ts';
import { GENESIS_HASH, recordHash } from './ledger.ts';
import { openLedgerDatabase } from './sqlite-file.ts';

export interface LedgerBreak {
  /** Sequence number of the first record that does not verify (the expected one, for a gap). */
  seq: number;
  reason: string;
}

export interface LedgerVerification {
  ok: boolean;
  records: number;
  head: { seq: number; hash: string };
  /** Sequence number of the record whose hash is the evidence root, when one was checked. */
  rootSeq?: number;
  /**
   * Gate records (transition, override, release): how many, and whether their signatures were checked
   * against the gate's public key (`gatePub`). Without one they are signed but unverified.
   */
  gate: { records: number; verified: boolean; verifiedSeqs: number[] };
  error?: LedgerBreak;
}

interface RawRow {
  seq: number;
  ts: string;
  kind: string;
  payload: string;
  prev_hash: string;
  hash: string;
}

const KINDS: ReadonlySet<string> = new Set(RECORD_KINDS);

/**
 * Recomputes the hash chain of a ledger file, in sequence order. Reports the first record that was edited,
 * removed (a gap in sequence numbers or a broken back-link) or reordered. With `evidenceRoot` (from the
 * manifest) it also requires that root to be in the chain, so truncating the tail is caught, and that only
 * gate records (transition, override, release) follow it. Every gate record must carry the gate's signature;
 * with `gatePub` each is verified (bound to its position and, after the root, to `manifestHash`).
 */
export function verifyLedger(
  file: string,
  opts: { evidenceRoot?: string; manifestHash?: string; gatePub?: KeyObject } = {},
): LedgerVerification {
  const db = openLedgerDatabase(file, { readonly: true });
  try {
    const rows = db
      .prepare('SELECT seq, ts, kind, payload, prev_hash, hash FROM records ORDER BY seq')
      .iterate() as IterableIterator<RawRow>;
    let prev = GENESIS_HASH;
    let expectedSeq = 1;
    let rootSeq: number | undefined;
    let count = 0;
    let gateRecords = 0;
    const verifiedSeqs: number[] = [];
    const gate = () => ({ records: gateRecords, verified: opts.gatePub !== undefined, verifiedSeqs });
    const fail = (seq: number, reason: string): LedgerVerification => ({
      ok: false,
      records: count,
      head: { seq: expectedSeq - 1, hash: prev },
      rootSeq,
      gate: gate(),
      error: { seq, reason },
    });
    for (const row of rows) {
      if (row.seq !== expectedSeq) return fail(expectedSeq, `record ${expectedSeq} is missing`);
      if (!KINDS.has(row.kind)) return fail(row.seq, `record ${row.seq}: unknown kind '${row.kind}'`);
      if (row.prev_hash !== prev)
        return fail(row.seq, `record ${row.seq}: previous-hash link broken (removed or reordered)`);
      let payload: unknown;
      try {
        payload = JSON.parse(row.payload);
      } catch {
        return fail(row.seq, `record ${row.seq}: payload is not JSON`);
      }
      const hash = recordHash({
        seq: row.seq,
        ts: row.ts,
        kind: row.kind as RecordKind,
        payload,
        prevHash: prev,
      });
      if (hash !== row.hash)
        return fail(row.seq, `record ${row.seq}: content does not match its hash (edited)`);
      if (rootSeq !== undefined && !GATE_RECORD_KINDS.has(row.kind as RecordKind))
        return fail(row.seq, `record ${row.seq}: '${row.kind}' record after the evidence root`);
      if (GATE_RECORD_KINDS.has(row.kind as RecordKind)) {
        // Only the gate writes gate records, and it signs each one: anything else is a forgery.
        gateRecords += 1;
        const p = payload as { manifestHash?: unknown; gateSig?: unknown } | null;
        if (!p || typeof p !== 'object' || p.gateSig === undefined)
          return fail(
            row.seq,
            `record ${row.seq}: '${row.kind}' is not signed by a gate (forged gate record)`,
          );
        if (opts.gatePub) {
          const check = checkGateRecord(row.kind as RecordKind, row.seq, payload, opts.gatePub);
          if (check !== 'verified')
            return fail(
              row.seq,
              `record ${row.seq}: '${row.kind}' signature does not verify against gate.pub`,
            );
          if (rootSeq !== undefined && opts.manifestHash && p.manifestHash !== opts.manifestHash)
            return fail(row.seq, `record ${row.seq}: '${row.kind}' was signed for another run's manifest`);
          verifiedSeqs.push(row.seq);
        }
      }
      if (opts.evidenceRoot && hash === opts.evidenceRoot) rootSeq = row.seq;
      prev = hash;
      expectedSeq += 1;
      count += 1;
    }
    if (opts.evidenceRoot && rootSeq === undefined)
      return fail(
        expectedSeq,
        `evidence root ${opts.evidenceRoot.slice(0, 12)}… is not in the ledger (truncated or rewritten)`,
      );
    return { ok: true, records: count, head: { seq: expectedSeq - 1, hash: prev }, rootSeq, gate: gate() };
  } finally {
    db.close();
  }
}
