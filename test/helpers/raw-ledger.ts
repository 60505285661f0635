import Database from 'better-sqlite3';
import type { RecordKind } from '../../src/contracts/records.ts';
import { GENESIS_HASH, recordHash } from '../../src/ledger/ledger.ts';
import { canonicalJson } from '../../src/util/hash.ts';

/**
 * Appends records the way a foreign writer would: chained and hashed correctly, but not checked against the
 * record contracts (src/contracts/records.ts), so readers can be tested on evidence they must reject.
 */
export function appendUnchecked(
  file: string,
  records: ReadonlyArray<{ kind: RecordKind; payload: unknown }>,
  finalize?: (seq: number, kind: RecordKind, payload: unknown) => unknown,
): void {
  const db = new Database(file);
  try {
    const last = db.prepare('SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1').get() as
      | { seq: number; hash: string }
      | undefined;
    let seq = last?.seq ?? 0;
    let prevHash = last?.hash ?? GENESIS_HASH;
    const insert = db.prepare(
      'INSERT INTO records (seq, ts, kind, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)',
    );
    for (const r of records) {
      seq += 1;
      const ts = new Date().toISOString();
      const text = canonicalJson(finalize ? finalize(seq, r.kind, r.payload) : r.payload);
      const hash = recordHash({ seq, ts, kind: r.kind, payload: JSON.parse(text), prevHash });
      insert.run(seq, ts, r.kind, text, prevHash, hash);
      prevHash = hash;
    }
  } finally {
    db.close();
  }
}
