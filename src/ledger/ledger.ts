import Database from 'better-sqlite3';
import { canonicalJson, sha256Hex } from '../util/hash.ts';
import type { LedgerRecord, RecordKind } from './records.ts';

/** The hash that precedes the first record. */
export const GENESIS_HASH = '0'.repeat(64);

export function recordHash(r: Omit<LedgerRecord, 'hash'>): string {
  return sha256Hex(
    canonicalJson({ seq: r.seq, ts: r.ts, kind: r.kind, payload: r.payload, prevHash: r.prevHash }),
  );
}

interface Row {
  seq: number;
  ts: string;
  kind: RecordKind;
  payload: string;
  prev_hash: string;
  hash: string;
}

/**
 * Append-only, hash-chained evidence store (SQLite, WAL). Each record carries the hash of the previous
 * one; the head hash is the evidence root. Appends are transactional: a crash loses at most the batch
 * in flight.
 */
export class Ledger {
  private readonly db: Database.Database;
  private headSeq: number;
  private headHash: string;

  private constructor(db: Database.Database) {
    this.db = db;
    const last = db.prepare('SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1').get() as
      | { seq: number; hash: string }
      | undefined;
    this.headSeq = last?.seq ?? 0;
    this.headHash = last?.hash ?? GENESIS_HASH;
  }

  static open(file: string, opts: { readonly?: boolean } = {}): Ledger {
    const db = new Database(file, {
      readonly: opts.readonly ?? false,
      fileMustExist: opts.readonly ?? false,
    });
    if (!opts.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec(`CREATE TABLE IF NOT EXISTS records (
        seq INTEGER PRIMARY KEY,
        ts TEXT NOT NULL,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
      )`);
      db.exec('CREATE INDEX IF NOT EXISTS records_kind ON records(kind)');
      // Append-only through any SQLite connection: editing the file by other means is what verify catches.
      db.exec(`CREATE TRIGGER IF NOT EXISTS records_no_update BEFORE UPDATE ON records
        BEGIN SELECT RAISE(ABORT, 'ledger is append-only: UPDATE refused'); END`);
      db.exec(`CREATE TRIGGER IF NOT EXISTS records_no_delete BEFORE DELETE ON records
        BEGIN SELECT RAISE(ABORT, 'ledger is append-only: DELETE refused'); END`);
    }
    return new Ledger(db);
  }

  /** Evidence root: the hash of the last record (GENESIS_HASH when empty). */
  head(): { seq: number; hash: string } {
    return { seq: this.headSeq, hash: this.headHash };
  }

  append<P>(kind: RecordKind, payload: P): LedgerRecord<P> {
    return this.appendMany([{ kind, payload }])[0] as LedgerRecord<P>;
  }

  /** Appends several records in one transaction: all or none. */
  appendMany(items: ReadonlyArray<{ kind: RecordKind; payload: unknown }>): LedgerRecord[] {
    const insert = this.db.prepare(
      'INSERT INTO records (seq, ts, kind, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)',
    );
    const out: LedgerRecord[] = [];
    let seq = this.headSeq;
    let prev = this.headHash;
    const tx = this.db.transaction(() => {
      for (const item of items) {
        seq += 1;
        // Round-trip the payload so the stored JSON and the hashed value are the same thing.
        const payload = JSON.parse(canonicalJson(item.payload)) as unknown;
        const base = { seq, ts: new Date().toISOString(), kind: item.kind, payload, prevHash: prev };
        const hash = recordHash(base);
        insert.run(seq, base.ts, item.kind, canonicalJson(payload), prev, hash);
        out.push({ ...base, hash });
        prev = hash;
      }
    });
    tx();
    this.headSeq = seq;
    this.headHash = prev;
    return out;
  }

  /** Iterates records in sequence order, optionally of some kinds only; streams, memory stays flat. */
  *records<P = unknown>(kinds?: ReadonlyArray<RecordKind>): Generator<LedgerRecord<P>> {
    const stmt = kinds?.length
      ? this.db.prepare(
          `SELECT * FROM records WHERE kind IN (${kinds.map(() => '?').join(',')}) ORDER BY seq`,
        )
      : this.db.prepare('SELECT * FROM records ORDER BY seq');
    const rows = (kinds?.length ? stmt.iterate(...kinds) : stmt.iterate()) as IterableIterator<Row>;
    for (const row of rows) yield fromRow<P>(row);
  }

  /**
   * Ids of the exchanges already recorded: `--resume` skips these, so a restarted run neither repeats nor
   * loses an exchange (an exchange in flight at a crash was never committed, so it is not in this set).
   */
  exchangeIds(): Set<string> {
    const rows = this.db
      .prepare("SELECT json_extract(payload, '$.id') AS id FROM records WHERE kind = 'exchange'")
      .pluck()
      .all() as Array<string | null>;
    return new Set(rows.filter((id): id is string => typeof id === 'string'));
  }

  count(kind?: RecordKind): number {
    const row = (
      kind
        ? this.db.prepare('SELECT COUNT(*) AS n FROM records WHERE kind = ?').get(kind)
        : this.db.prepare('SELECT COUNT(*) AS n FROM records').get()
    ) as { n: number };
    return row.n;
  }

  close(): void {
    this.db.close();
  }
}

function fromRow<P>(row: Row): LedgerRecord<P> {
  return {
    seq: row.seq,
    ts: row.ts,
    kind: row.kind,
    payload: JSON.parse(row.payload) as P,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}
