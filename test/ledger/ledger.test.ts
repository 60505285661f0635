import { execFileSync, spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { RecordKind, RecordPayload } from '../../src/contracts/records.ts';
import { signGateRecord } from '../../src/ledger/gate-sig.ts';
import { Ledger, QUEUE_MS, QUEUE_RECORDS, recordHash } from '../../src/ledger/ledger.ts';
import { verifyLedger } from '../../src/ledger/verify.ts';
import { writeRun } from '../gate/fixtures.ts';
import { attemptPayload, exchangePayload, findingPayload, judgePayload } from './payloads.ts';

function fresh(n = 5): { file: string; hashes: string[] } {
  const file = join(mkdtempSync(join(tmpdir(), 'ledger-')), 'ledger.sqlite');
  const ledger = Ledger.open(file);
  const hashes = [];
  for (let i = 0; i < n; i++)
    hashes.push(ledger.append('exchange', exchangePayload(`x${i}`, `reply ${i}`)).hash);
  ledger.close();
  return { file, hashes };
}

/** Tampering with the file directly: a plain SQLite connection that drops the append-only triggers. */
function tamper(file: string, sql: string, ...params: unknown[]): void {
  const db = new Database(file);
  db.exec('DROP TRIGGER IF EXISTS records_no_update; DROP TRIGGER IF EXISTS records_no_delete;');
  db.prepare(sql).run(...params);
  db.close();
}

describe('ledger', () => {
  it('verifies an intact chain and reports the head as evidence root', () => {
    const { file, hashes } = fresh();
    const r = verifyLedger(file, { evidenceRoot: hashes[4] });
    expect(r).toMatchObject({ ok: true, records: 5, rootSeq: 5 });
    expect(r.head.hash).toBe(hashes[4]);
  });

  it('hashes each record as recordHash of its canonical fields, nested keys sorted, undefined dropped', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ledger-')), 'ledger.sqlite');
    const ledger = Ledger.open(file);
    const [a, b] = ledger.appendMany([
      {
        kind: 'run.start',
        payload: { manifest: { z: 1, a: { y: [2, { d: 'ü"', c: null }], x: undefined } } },
      },
      { kind: 'run.end', payload: { exchanges: 0, failed: 0, findings: 0 } },
    ]);
    ledger.close();
    const { hash: ha, ...restA } = a!;
    const { hash: hb, ...restB } = b!;
    expect(restA.payload).toEqual({ manifest: { a: { y: [2, { c: null, d: 'ü"' }] }, z: 1 } });
    expect(ha).toBe(recordHash(restA));
    expect(hb).toBe(recordHash(restB));
    expect(restB.prevHash).toBe(ha);
    expect(verifyLedger(file, { evidenceRoot: hb })).toMatchObject({ ok: true, records: 2 });
  });

  it('commits queued attempts as one record before the next append, returns only the appended ones, flushes on close', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ledger-')), 'ledger.sqlite');
    const ledger = Ledger.open(file);
    ledger.queueAttempt(attemptPayload(1));
    ledger.queueAttempt(attemptPayload(2));
    expect(ledger.count()).toBe(0);
    const ex = ledger.append('exchange', exchangePayload('x'));
    expect(ex).toMatchObject({ seq: 2, kind: 'exchange', payload: { id: 'x' } });
    expect(ledger.count('attempts')).toBe(1);
    ledger.queueAttempt(attemptPayload(3));
    ledger.close();
    const again = Ledger.open(file, { readonly: true });
    const records = [...again.records()];
    expect(records.map((r) => r.kind)).toEqual(['attempts', 'exchange', 'attempts']);
    const numbers = (r: (typeof records)[number]) =>
      (r.payload as { attempts: Array<{ attempt: number }> }).attempts.map((a) => a.attempt);
    expect(numbers(records[0]!)).toEqual([1, 2]);
    expect(numbers(records[2]!)).toEqual([3]);
    again.close();
    expect(verifyLedger(file)).toMatchObject({ ok: true, records: 3 });
  });

  it('still verifies a ledger of one record per attempt, as probate wrote them before the batch', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ledger-')), 'ledger.sqlite');
    const ledger = Ledger.open(file);
    ledger.appendMany([
      { kind: 'attempt', payload: attemptPayload(1) },
      { kind: 'exchange', payload: exchangePayload('x') },
    ]);
    ledger.close();
    expect(verifyLedger(file)).toMatchObject({ ok: true, records: 2 });
  });

  it('commits on its own once 256 attempts wait, and refuses an attempt that does not fit its contract', () => {
    const ledger = Ledger.open(join(mkdtempSync(join(tmpdir(), 'ledger-')), 'ledger.sqlite'));
    for (let i = 0; i < 255; i++) ledger.queueAttempt(attemptPayload(i));
    expect(ledger.count()).toBe(0);
    ledger.queueAttempt(attemptPayload(255));
    expect(ledger.count('attempts')).toBe(1);
    expect(() => ledger.queueAttempt({ ...attemptPayload(1), ok: 'yes' } as never)).toThrow(
      /attempt payload: ok/,
    );
    ledger.close();
  });

  it('group commit: queued records wait for the next append, a read, a flush, close, QUEUE_RECORDS or QUEUE_MS', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ledger-')), 'ledger.sqlite');
    const ledger = Ledger.open(file);
    // What another reader sees is what is committed.
    const committed = () => {
      const r = Ledger.open(file, { readonly: true });
      const n = r.count();
      r.close();
      return n;
    };
    ledger.queueAttempt(attemptPayload(1));
    ledger.queue([{ kind: 'exchange', payload: exchangePayload('a') }]);
    ledger.queue([{ kind: 'exchange', payload: exchangePayload('b') }]);
    expect(committed()).toBe(0);
    // An append commits what waits first, in order, and returns only its own record.
    const f = ledger.append('finding', findingPayload('f'));
    expect(f.seq).toBe(4);
    expect(committed()).toBe(4);
    // Reading builds on the evidence: it commits first.
    ledger.queue([{ kind: 'exchange', payload: exchangePayload('c') }]);
    expect(ledger.exchangeIds()).toEqual(new Set(['a', 'b', 'c']));
    ledger.queue([{ kind: 'exchange', payload: exchangePayload('d') }]);
    expect([...ledger.records(['exchange'])].map((r) => (r.payload as { id: string }).id)).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
    // QUEUE_RECORDS waiting commit at once.
    const before = committed();
    for (let i = 0; i < QUEUE_RECORDS - 1; i++)
      ledger.queue([{ kind: 'exchange', payload: exchangePayload(`n${i}`) }]);
    expect(committed()).toBe(before);
    ledger.queue([{ kind: 'exchange', payload: exchangePayload('last') }]);
    expect(committed()).toBe(before + QUEUE_RECORDS);
    // And none waits longer than QUEUE_MS.
    ledger.queue([{ kind: 'exchange', payload: exchangePayload('late') }]);
    expect(committed()).toBe(before + QUEUE_RECORDS);
    await new Promise((r) => setTimeout(r, QUEUE_MS + 100));
    expect(committed()).toBe(before + QUEUE_RECORDS + 1);
    ledger.queue([{ kind: 'exchange', payload: exchangePayload('closing') }]);
    ledger.close();
    expect(committed()).toBe(before + QUEUE_RECORDS + 2);
    expect(verifyLedger(file)).toMatchObject({ ok: true, records: before + QUEUE_RECORDS + 2 });
  });

  it('group commit: a record that does not fit its contract is refused when queued; a failed commit keeps the queue', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'ledger-')), 'ledger.sqlite');
    const ledger = Ledger.open(file);
    expect(() =>
      ledger.queue([{ kind: 'exchange', payload: { ...exchangePayload('x'), id: 7 } as never }]),
    ).toThrow(/exchange payload: id/);
    ledger.queue([{ kind: 'exchange', payload: exchangePayload('kept') }]);
    // A commit that fails (here: the gate's finalize throws for the record given) leaves nothing half-written
    // and the queued record still queued.
    expect(() =>
      ledger.appendMany([{ kind: 'finding', payload: findingPayload('f') }], () => {
        throw new Error('no signature');
      }),
    ).toThrow(/no signature/);
    expect(ledger.count()).toBe(0);
    // finalize sees only the records given, not the ones queued ahead of them.
    const seen: number[] = [];
    const [rec] = ledger.appendMany([{ kind: 'finding', payload: findingPayload('f') }], (seq, _k, p) => {
      seen.push(seq);
      return p;
    });
    expect(seen).toEqual([2]);
    expect(rec!.seq).toBe(2);
    expect([...ledger.records()].map((r) => r.kind)).toEqual(['exchange', 'finding']);
    ledger.close();
  });

  it('refuses UPDATE and DELETE through SQLite', () => {
    const { file } = fresh(2);
    const db = new Database(file);
    expect(() => db.prepare(`UPDATE records SET payload = '{}' WHERE seq = 1`).run()).toThrow(/append-only/);
    expect(() => db.prepare('DELETE FROM records WHERE seq = 2').run()).toThrow(/append-only/);
    db.close();
    expect(verifyLedger(file).ok).toBe(true);
  });

  it('names the first edited record', () => {
    const { file } = fresh();
    tamper(file, `UPDATE records SET payload = ? WHERE seq = 3`, JSON.stringify({ id: 'x2', n: 99 }));
    expect(verifyLedger(file)).toMatchObject({ ok: false, error: { seq: 3 } });
    expect(verifyLedger(file).error?.reason).toMatch(/edited/);
  });

  it('names a removed record', () => {
    const { file } = fresh();
    tamper(file, 'DELETE FROM records WHERE seq = 2');
    expect(verifyLedger(file)).toMatchObject({ ok: false, error: { seq: 2 } });
  });

  it('catches a removed record whose successors were renumbered', () => {
    const { file } = fresh();
    tamper(file, 'DELETE FROM records WHERE seq = 2');
    tamper(file, 'UPDATE records SET seq = seq - 1 WHERE seq > 2');
    expect(verifyLedger(file)).toMatchObject({ ok: false, error: { seq: 2 } });
  });

  it('catches reordered records', () => {
    const { file } = fresh();
    tamper(file, 'UPDATE records SET seq = 100 WHERE seq = 2');
    tamper(file, 'UPDATE records SET seq = 2 WHERE seq = 3');
    tamper(file, 'UPDATE records SET seq = 3 WHERE seq = 100');
    expect(verifyLedger(file)).toMatchObject({ ok: false, error: { seq: 2 } });
  });

  it('catches truncation of the tail against the evidence root', () => {
    const { file, hashes } = fresh();
    tamper(file, 'DELETE FROM records WHERE seq = 5');
    expect(verifyLedger(file).ok).toBe(true); // a chain alone cannot see a cut tail...
    const r = verifyLedger(file, { evidenceRoot: hashes[4] });
    expect(r.ok).toBe(false); // ...the manifest's evidence root can
    expect(r.error?.reason).toMatch(/evidence root .* not in the ledger/);
  });

  it('rejects evidence appended after the evidence root, allows gate records the gate signed', () => {
    const { file, hashes } = fresh(3);
    const gate = generateKeyPairSync('ed25519');
    const sign = (seq: number, kind: RecordKind, p: unknown) =>
      signGateRecord(kind, seq, { ...(p as object), manifestHash: 'm' }, gate.privateKey, gate.publicKey);
    const ledger = Ledger.open(file);
    ledger.appendMany(
      [{ kind: 'transition', payload: { from: 'RUNNING', to: 'BLOCKED', reasons: [] } }],
      sign,
    );
    const opts = { evidenceRoot: hashes[2], manifestHash: 'm', gatePub: gate.publicKey };
    expect(verifyLedger(file, opts)).toMatchObject({ ok: true, gate: { records: 1, verifiedSeqs: [4] } });
    // Checked against another key, or bound to another run's manifest, the same record does not verify.
    const other = generateKeyPairSync('ed25519').publicKey;
    expect(verifyLedger(file, { ...opts, gatePub: other }).error?.reason).toMatch(
      /does not verify against gate.pub/,
    );
    expect(verifyLedger(file, { ...opts, manifestHash: 'n' }).error?.reason).toMatch(
      /another run's manifest/,
    );
    // An unsigned gate record is a forgery, key or no key.
    ledger.append('transition', { from: 'BLOCKED', to: 'COMMITTABLE', reasons: [] });
    expect(verifyLedger(file, { evidenceRoot: hashes[2] })).toMatchObject({
      ok: false,
      error: { seq: 5, reason: expect.stringMatching(/not signed by a gate/) },
    });
    ledger.close();
    const { file: f2, hashes: h2 } = fresh(3);
    const l2 = Ledger.open(f2);
    // A signed record replayed at another position does not verify.
    const stolen = sign(9, 'transition', { from: 'RUNNING', to: 'COMMITTABLE', reasons: [] });
    l2.append('transition', stolen as RecordPayload<'transition'>);
    l2.close();
    expect(verifyLedger(f2, { ...opts, evidenceRoot: h2[2] }).error?.reason).toMatch(/does not verify/);
    const { file: f3, hashes: h3 } = fresh(3);
    const l3 = Ledger.open(f3);
    l3.appendMany([{ kind: 'transition', payload: { to: 'BLOCKED', reasons: [] } }], sign);
    l3.append('finding', findingPayload('late'));
    l3.close();
    expect(verifyLedger(f3, { evidenceRoot: h3[2] })).toMatchObject({ ok: false, error: { seq: 5 } });
  });

  it('lists recorded exchange ids for --resume', () => {
    const { file } = fresh(3);
    const ledger = Ledger.open(file);
    ledger.append('judge', judgePayload('x0'));
    expect([...ledger.exchangeIds()].sort()).toEqual(['x0', 'x1', 'x2']);
    ledger.close();
  });

  it('probate ledger verify exits 0 when intact and non-zero naming the broken record', () => {
    const { runDir } = writeRun(mkdtempSync(join(tmpdir(), 'lv-')), { policyHash: 'c'.repeat(64) });
    const ok = execFileSync('node', ['bin/probate.js', 'ledger', 'verify', runDir], { encoding: 'utf8' });
    expect(ok).toMatch(/ledger intact: \d+ records/);
    tamper(join(runDir, 'ledger.sqlite'), `UPDATE records SET payload = '{"id":"forged"}' WHERE seq = 4`);
    const bad = spawnSync('node', ['bin/probate.js', 'ledger', 'verify', runDir], { encoding: 'utf8' });
    expect(bad.status).toBe(20);
    expect(bad.stdout).toMatch(/BROKEN at record 4/);
  });
});
