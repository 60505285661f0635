import Database from 'better-sqlite3';
import type { GateState } from './decide.ts';

export const STATE_DB_FILE = 'state.sqlite';

export type CapabilityStatus = 'minted' | 'reserved' | 'consumed' | 'void';

export interface AuditRow {
  id: string;
  run_dir: string;
  lineage: string;
  state: GateState;
  evidence_root: string;
  previous_audit: string | null;
}

export interface CapabilityRow {
  id: string;
  audit: string;
  lineage: string;
  status: CapabilityStatus;
  expires_at: string;
  target: string | null;
  idem_key: string;
}

export interface TransitionInput {
  audit: string;
  lineage: string;
  from: GateState;
  to: GateState;
  reasons: string[];
  policyVersion: string;
  policyHash: string;
  capabilityId?: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audits (
  id TEXT PRIMARY KEY, run_dir TEXT NOT NULL, lineage TEXT NOT NULL, state TEXT NOT NULL,
  evidence_root TEXT NOT NULL, previous_audit TEXT, updated TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS lineages (
  id TEXT PRIMARY KEY, name TEXT NOT NULL, state TEXT NOT NULL, current_audit TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS transitions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, audit TEXT NOT NULL, lineage TEXT NOT NULL, from_state TEXT NOT NULL,
  to_state TEXT NOT NULL, reasons TEXT NOT NULL, policy_version TEXT NOT NULL, policy_hash TEXT NOT NULL,
  capability TEXT, ts TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS capabilities (
  id TEXT PRIMARY KEY, audit TEXT NOT NULL, lineage TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('minted','reserved','consumed','void')),
  expires_at TEXT NOT NULL, target TEXT, idem_key TEXT NOT NULL, updated TEXT NOT NULL);
-- The gate's policy history: each row a pinned policy hash and the principal's signed act that set it.
CREATE TABLE IF NOT EXISTS policy_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, hash TEXT NOT NULL, version TEXT NOT NULL, principal TEXT NOT NULL,
  envelope TEXT, ts TEXT NOT NULL);
CREATE TRIGGER IF NOT EXISTS policy_changes_append_only_u BEFORE UPDATE ON policy_changes
BEGIN SELECT RAISE(ABORT, 'policy changes are append-only'); END;
CREATE TRIGGER IF NOT EXISTS policy_changes_append_only_d BEFORE DELETE ON policy_changes
BEGIN SELECT RAISE(ABORT, 'policy changes are append-only'); END;
-- Weights (subject digest) a decision BLOCKED on intact evidence. A new audit of the same subject is not a
-- remediation: it stays BLOCKED until the blocking audit is re-decided (a principal's override).
CREATE TABLE IF NOT EXISTS subject_blocks (
  subject TEXT NOT NULL, audit TEXT NOT NULL, lineage TEXT NOT NULL, ts TEXT NOT NULL,
  PRIMARY KEY (subject, audit));
CREATE TABLE IF NOT EXISTS overrides (
  id TEXT PRIMARY KEY, audit TEXT NOT NULL, finding TEXT NOT NULL, principal TEXT NOT NULL,
  envelope TEXT NOT NULL, ts TEXT NOT NULL);
-- Invariant 1 at the storage level: a capability is minted only for a COMMITTABLE audit of a lineage
-- with no reserved (UNCERTAIN) release, and leaving COMMITTABLE voids every unspent capability.
CREATE TRIGGER IF NOT EXISTS capability_needs_committable BEFORE INSERT ON capabilities
WHEN (SELECT state FROM audits WHERE id = NEW.audit) IS NOT 'COMMITTABLE'
  OR EXISTS (SELECT 1 FROM capabilities WHERE lineage = NEW.lineage AND status = 'reserved')
BEGIN SELECT RAISE(ABORT, 'capability refused: audit not COMMITTABLE or lineage has a reserved release'); END;
CREATE TRIGGER IF NOT EXISTS audit_leaves_committable AFTER UPDATE OF state ON audits
WHEN NEW.state NOT IN ('COMMITTABLE', 'UNCERTAIN', 'RELEASED')
BEGIN UPDATE capabilities SET status = 'void', updated = datetime('now')
  WHERE lineage = NEW.lineage AND status = 'minted'; END;
CREATE TRIGGER IF NOT EXISTS transitions_append_only_u BEFORE UPDATE ON transitions
BEGIN SELECT RAISE(ABORT, 'transitions are append-only'); END;
CREATE TRIGGER IF NOT EXISTS transitions_append_only_d BEFORE DELETE ON transitions
BEGIN SELECT RAISE(ABORT, 'transitions are append-only'); END;
`;

/** The gate's state database: audits, lineages, transitions, capabilities, overrides (SQLite, WAL). */
export class StateDb {
  readonly db: Database.Database;

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(SCHEMA);
  }

  /** Runs `fn` in one IMMEDIATE transaction (writers serialised across processes). */
  tx<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  audit(id: string): AuditRow | undefined {
    return this.db.prepare('SELECT * FROM audits WHERE id = ?').get(id) as AuditRow | undefined;
  }

  lineage(id: string): { id: string; name: string; state: GateState; current_audit: string } | undefined {
    return this.db.prepare('SELECT * FROM lineages WHERE id = ?').get(id) as
      | { id: string; name: string; state: GateState; current_audit: string }
      | undefined;
  }

  upsertAudit(row: AuditRow): void {
    this.db
      .prepare(
        `INSERT INTO audits (id, run_dir, lineage, state, evidence_root, previous_audit, updated)
         VALUES (@id, @run_dir, @lineage, @state, @evidence_root, @previous_audit, datetime('now'))
         ON CONFLICT(id) DO UPDATE SET state = excluded.state, run_dir = excluded.run_dir, updated = excluded.updated`,
      )
      .run(row);
  }

  setState(audit: string, lineage: string, lineageName: string, state: GateState): void {
    this.db.prepare(`UPDATE audits SET state = ?, updated = datetime('now') WHERE id = ?`).run(state, audit);
    this.db
      .prepare(
        `INSERT INTO lineages (id, name, state, current_audit) VALUES (?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET state = excluded.state, current_audit = excluded.current_audit`,
      )
      .run(lineage, lineageName, state, audit);
  }

  addTransition(t: TransitionInput): void {
    this.db
      .prepare(
        `INSERT INTO transitions (audit, lineage, from_state, to_state, reasons, policy_version, policy_hash, capability, ts)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        t.audit,
        t.lineage,
        t.from,
        t.to,
        JSON.stringify(t.reasons),
        t.policyVersion,
        t.policyHash,
        t.capabilityId ?? null,
        new Date().toISOString(),
      );
  }

  transitions(audit: string): Array<{ from_state: string; to_state: string; reasons: string }> {
    return this.db
      .prepare('SELECT from_state, to_state, reasons FROM transitions WHERE audit = ? ORDER BY seq')
      .all(audit) as Array<{ from_state: string; to_state: string; reasons: string }>;
  }

  mintCapability(c: Omit<CapabilityRow, 'status' | 'target'>): void {
    this.db
      .prepare(
        `INSERT INTO capabilities (id, audit, lineage, status, expires_at, target, idem_key, updated)
         VALUES (?, ?, ?, 'minted', ?, NULL, ?, datetime('now'))`,
      )
      .run(c.id, c.audit, c.lineage, c.expires_at, c.idem_key);
  }

  capability(id: string): CapabilityRow | undefined {
    return this.db.prepare('SELECT * FROM capabilities WHERE id = ?').get(id) as CapabilityRow | undefined;
  }

  capabilitiesOf(audit: string): CapabilityRow[] {
    return this.db.prepare('SELECT * FROM capabilities WHERE audit = ?').all(audit) as CapabilityRow[];
  }

  reservedIn(lineage: string): CapabilityRow | undefined {
    return this.db
      .prepare(`SELECT * FROM capabilities WHERE lineage = ? AND status = 'reserved'`)
      .get(lineage) as CapabilityRow | undefined;
  }

  /** Compare-and-set on a capability's status; returns whether it changed. */
  moveCapability(id: string, from: CapabilityStatus, to: CapabilityStatus, target?: string): boolean {
    const r = this.db
      .prepare(
        `UPDATE capabilities SET status = ?, target = COALESCE(?, target), updated = datetime('now')
         WHERE id = ? AND status = ?`,
      )
      .run(to, target ?? null, id, from);
    return r.changes === 1;
  }

  /** The latest pinned policy (hash, version), or undefined for a gate with no recorded policy. */
  currentPolicy(): { hash: string; version: string; principal: string } | undefined {
    return this.db
      .prepare('SELECT hash, version, principal FROM policy_changes ORDER BY seq DESC LIMIT 1')
      .get() as { hash: string; version: string; principal: string } | undefined;
  }

  addPolicyChange(c: { hash: string; version: string; principal: string; envelope: string | null }): void {
    this.db
      .prepare('INSERT INTO policy_changes (hash, version, principal, envelope, ts) VALUES (?, ?, ?, ?, ?)')
      .run(c.hash, c.version, c.principal, c.envelope, new Date().toISOString());
  }

  /** The earliest audit other than `exceptAudit` whose BLOCKED decision holds this subject. */
  subjectBlock(
    subject: string,
    exceptAudit: string,
  ): { subject: string; audit: string; lineage: string } | undefined {
    return this.db
      .prepare(
        'SELECT subject, audit, lineage FROM subject_blocks WHERE subject = ? AND audit != ? ORDER BY ts LIMIT 1',
      )
      .get(subject, exceptAudit) as { subject: string; audit: string; lineage: string } | undefined;
  }

  subjectBlockOf(audit: string): string | undefined {
    return (
      this.db.prepare('SELECT subject FROM subject_blocks WHERE audit = ?').get(audit) as
        | { subject: string }
        | undefined
    )?.subject;
  }

  blockSubject(subject: string, audit: string, lineage: string): void {
    this.db
      .prepare('INSERT OR IGNORE INTO subject_blocks (subject, audit, lineage, ts) VALUES (?, ?, ?, ?)')
      .run(subject, audit, lineage, new Date().toISOString());
  }

  /** Lifts a subject block when the blocking audit itself is re-decided out of BLOCKED (an override). */
  unblockSubject(subject: string, audit: string): void {
    this.db.prepare('DELETE FROM subject_blocks WHERE subject = ? AND audit = ?').run(subject, audit);
  }

  addOverride(o: { id: string; audit: string; finding: string; principal: string; envelope: string }): void {
    this.db
      .prepare(
        `INSERT OR IGNORE INTO overrides (id, audit, finding, principal, envelope, ts) VALUES (?, ?, ?, ?, ?, ?)`,
      )
      .run(o.id, o.audit, o.finding, o.principal, o.envelope, new Date().toISOString());
  }

  close(): void {
    this.db.close();
  }
}
