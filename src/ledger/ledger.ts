import type Database from 'better-sqlite3';
import {
  type LedgerRecord,
  payloadProblem,
  type RecordItem,
  type RecordKind,
  type RecordPayload,
} from '../contracts/records.ts';
import { canonicalJson, sha256Hex } from '../util/hash.ts';
import { openLedgerDatabase } from './sqlite-file.ts';

/** The hash that precedes the first record. */
export const GENESIS_HASH = '0'.repeat(64);

export function recordHash(r: Omit<LedgerRecord, 'hash'>): string {
  return sha256Hex(
    canonicalJson({ seq: r.seq, ts: r.ts, kind: r.kind, payload: r.payload, prevHash: r.prevHash }),
  );
}

/**
 * canonicalJson({seq, ts, kind, payload, prevHash}) assembled from the payload's canonical text (keys in
 * sorted order: kind, payload, prevHash, seq, ts), so a record is not re-serialised to be hashed.
 */
function hashedText(seq: number, ts: string, kind: string, payloadText: string, prevHash: string): string {
  return `{"kind":${JSON.stringify(kind)},"payload":${payloadText},"prevHash":${JSON.stringify(prevHash)},"seq":${seq},"ts":${JSON.stringify(ts)}}`;
}

/** Sees each record's sequence number and payload before it is stored, and gives the payload to store. */
type Finalize = (seq: number, kind: RecordKind, payload: unknown) => unknown;

interface Row {
  seq: number;
  ts: string;
  kind: RecordKind;
  payload: string;
  prev_hash: string;
  hash: string;
}

/**
 * Group commit of queued records: at most this many wait, and none longer than QUEUE_MS. A transaction per
 * probe group cost the HTTP audit path more than the records' own serialising (BENCHMARKS.md, "Throughput against
 * peers"); the bound is what a crash may lose, and `--resume` sends those exchanges again.
 */
export const QUEUE_RECORDS = 64;
export const QUEUE_MS = 250;

/**
 * Append-only, hash-chained evidence store (SQLite, WAL). Each record carries the hash of the previous
 * one; the head hash is the evidence root. Appends are transactional: a crash loses at most the batch
 * in flight, and the records queued for a group commit (`queue`, `queueAttempt`), which belong to work the
 * audit has not yet built on: an append, a read of records (`records`, `exchangeIds`, `head`), `flush` or
 * `close` commits them first.
 */
export class Ledger {
  private readonly db: Database.Database;
  private readonly insert: Database.Statement;
  private readonly write: (items: ReadonlyArray<RecordItem>, finalize?: Finalize) => LedgerRecord[];
  private readonly attempts: RecordPayload<'attempt'>[] = [];
  private readonly queued: RecordItem[] = [];
  private timer: NodeJS.Timeout | undefined;
  private headSeq: number;
  private headHash: string;

  private constructor(db: Database.Database) {
    this.db = db;
    const last = db.prepare('SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1').get() as
      | { seq: number; hash: string }
      | undefined;
    this.headSeq = last?.seq ?? 0;
    this.headHash = last?.hash ?? GENESIS_HASH;
    this.insert = db.readonly
      ? (undefined as unknown as Database.Statement)
      : db.prepare('INSERT INTO records (seq, ts, kind, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?)');
    this.write = db.readonly
      ? () => {
          throw new Error('ledger: opened read-only');
        }
      : db.transaction((items, finalize) => this.writeRecords(items, finalize));
  }

  static open(file: string, opts: { readonly?: boolean } = {}): Ledger {
    const db = openLedgerDatabase(file, { readonly: opts.readonly ?? false });
    if (!opts.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // Checkpoint the WAL every 8192 pages (32 MB) rather than 1000: an audit commits a small transaction
      // per probe group, and frequent checkpoints were a measurable share of append cost.
      db.pragma('wal_autocheckpoint = 8192');

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
    this.flush();
    return { seq: this.headSeq, hash: this.headHash };
  }

  append<K extends RecordKind>(kind: K, payload: RecordPayload<K>): LedgerRecord<RecordPayload<K>> {
    return this.appendMany([{ kind, payload } as RecordItem])[0] as LedgerRecord<RecordPayload<K>>;
  }

  /**
   * Queues an endpoint attempt for the next transaction (the next append, `flush`, `close`, or when 256 are
   * waiting), where the attempts waiting become one `attempts` record ahead of what is appended: a record and
   * a transaction per HTTP attempt cost more than the request. A crash loses only queued attempts, which
   * belong to work not yet committed.
   */
  queueAttempt(attempt: RecordPayload<'attempt'>): void {
    checkPayload('attempt', attempt);
    this.attempts.push(attempt);
    if (this.attempts.length >= 256) this.flush();
    else this.arm();
  }

  /**
   * Queues records for a group commit (each checked now): they are committed, in order, with the next
   * transaction, once QUEUE_RECORDS wait, or QUEUE_MS after the first was queued. For records nothing builds
   * on until it reads them back (an audit's exchanges: its analysis reads the ledger, which commits them first).
   */
  queue(items: ReadonlyArray<RecordItem>): void {
    for (const item of items) checkPayload(item.kind, item.payload);
    this.queued.push(...items);
    if (this.queued.length >= QUEUE_RECORDS) this.flush();
    else this.arm();
  }

  /** Commits what is queued now. */
  flush(): void {
    if (this.attempts.length || this.queued.length) this.appendMany([]);
  }

  /**
   * The group commit's deadline. A commit that fails here (disk full) leaves the records queued: the next
   * append, read, flush or close tries again and reports the failure to its caller.
   */
  private arm(): void {
    if (this.timer || this.db.readonly) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      try {
        this.flush();
      } catch {
        // Reported by the next synchronous commit, which tries the same records again.
      }
    }, QUEUE_MS);
    this.timer.unref();
  }

  /**
   * Appends several records in one transaction, all or none, after what is queued (the queued attempts as one
   * record, then the queued records). Each payload must fit its kind's contract (src/contracts/records.ts); one
   * that does not is a writer's bug and nothing is written. `finalize` sees each given record's sequence number
   * before it is stored (the gate signs its records bound to their position); returns the given records only.
   */
  appendMany(given: ReadonlyArray<RecordItem>, finalize?: Finalize): LedgerRecord[] {
    for (const item of given) checkPayload(item.kind, item.payload);
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    // Queued attempts and records were checked when queued; they go first, in the order they came.
    const attempts = this.attempts.splice(0);
    const records = this.queued.splice(0);
    const ahead = (attempts.length ? 1 : 0) + records.length;
    const items: ReadonlyArray<RecordItem> = ahead
      ? [
          ...(attempts.length ? [{ kind: 'attempts' as const, payload: { attempts } }] : []),
          ...records,
          ...given,
        ]
      : given;
    let out: LedgerRecord[];
    try {
      // `finalize` (the gate's signature) is for the records given here, not for queued ones.
      out = this.write(
        items,
        finalize &&
          ((seq, kind, payload) => (seq > this.headSeq + ahead ? finalize(seq, kind, payload) : payload)),
      );
    } catch (err) {
      this.attempts.unshift(...attempts);
      this.queued.unshift(...records);
      throw err;
    }
    // The head moves only once the transaction committed.
    const last = out.at(-1);
    if (last) {
      this.headSeq = last.seq;
      this.headHash = last.hash;
    }
    return ahead ? out.slice(ahead) : out;
  }

  /** The records stored, chained from the head; one transaction, made once (not a wrapper per append). */
  private writeRecords(items: ReadonlyArray<RecordItem>, finalize?: Finalize): LedgerRecord[] {
    const out: LedgerRecord[] = [];
    let seq = this.headSeq;
    let prev = this.headHash;
    for (const item of items) {
      seq += 1;
      // Serialised once: the stored text is the hashed text, and the returned payload is parsed from it.
      const text = canonicalJson(finalize ? finalize(seq, item.kind, item.payload) : item.payload);
      const ts = new Date().toISOString();
      const hash = sha256Hex(hashedText(seq, ts, item.kind, text, prev));
      this.insert.run(seq, ts, item.kind, text, prev, hash);
      out.push(storedRecord(seq, ts, item.kind, text, prev, hash));
      prev = hash;
    }
    return out;
  }

  /** Iterates records in sequence order, optionally of some kinds only; streams, memory stays flat. */
  *records<P = unknown>(kinds?: ReadonlyArray<RecordKind>): Generator<LedgerRecord<P>> {
    this.flush();
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
    this.flush();
    const rows = this.db
      .prepare("SELECT json_extract(payload, '$.id') AS id FROM records WHERE kind = 'exchange'")
      .pluck()
      .all() as Array<string | null>;
    return new Set(rows.filter((id): id is string => typeof id === 'string'));
  }

  /** Records committed (what is queued is not counted until it is). */
  count(kind?: RecordKind): number {
    const row = (
      kind
        ? this.db.prepare('SELECT COUNT(*) AS n FROM records WHERE kind = ?').get(kind)
        : this.db.prepare('SELECT COUNT(*) AS n FROM records').get()
    ) as { n: number };
    return row.n;
  }

  close(): void {
    try {
      if (!this.db.readonly) this.flush();
    } finally {
      clearTimeout(this.timer);
      this.db.close();
    }
  }
}

function checkPayload(kind: RecordKind, payload: unknown): void {
  const problem = payloadProblem(kind, payload);
  if (problem) throw new Error(`ledger: refusing a record that does not fit its contract: ${problem}`);
}

/**
 * A record as stored. Its payload is parsed from the stored text when first read: most writers never read
 * it back (an audit's attempts and exchanges), and parsing every one was a measurable share of appending.
 */
function storedRecord(
  seq: number,
  ts: string,
  kind: RecordKind,
  text: string,
  prevHash: string,
  hash: string,
): LedgerRecord {
  let payload: unknown;
  let parsed = false;
  return {
    seq,
    ts,
    kind,
    get payload() {
      if (!parsed) {
        payload = JSON.parse(text);
        parsed = true;
      }
      return payload;
    },
    set payload(value: unknown) {
      payload = value;
      parsed = true;
    },
    prevHash,
    hash,
  };
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
