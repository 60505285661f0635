import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordPayload } from '../../src/contracts/records.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { verdictForState } from '../../src/report/model.ts';
import { projectReport } from '../../src/report/project.ts';
import { UserError } from '../../src/util/errors.ts';
import { blocked, buildRun, committable, GATE, overrideEnvelope } from './fixtures.ts';

const project = (dir: string) => projectReport(dir, GATE);

const dirs: string[] = [];
const run = (...args: Parameters<typeof buildRun>) => {
  const d = buildRun(...args);
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('verdictForState', () => {
  it('maps gate states to wording and never passes an unknown state', () => {
    expect(verdictForState('COMMITTABLE').text).toBe('Release allowed');
    expect(verdictForState('BLOCKED').text).toBe('Release blocked');
    expect(verdictForState('REVIEW_REQUIRED').verdict).toBe('review');
    expect(verdictForState('UNCERTAIN').verdict).toBe('uncertain');
    for (const s of [undefined, 'RUNNING', 'REMEDIATED', 'PASS', 'committable', '__proto__', 'toString'])
      expect(verdictForState(s)).toEqual({
        verdict: 'undecided',
        text: 'Not decided by a gate — no release',
        tone: 'neutral',
      });
  });
});

describe('projectReport', () => {
  it('projects a BLOCKED run with every claim tied to a ledger record', () => {
    const m = project(run({ transitions: [blocked()] }));
    expect(m.gate.state).toBe('BLOCKED');
    expect(m.gate.verdict.text).toBe('Release blocked');
    expect(m.gate.reasons[0]).toContain('critical finding');
    expect(m.gate.transition?.policyVersion).toBe('2024.1');
    expect(m.ledger.chain.ok).toBe(true);
    expect(m.findings.map((f) => f.finding.severity)).toEqual(['critical', 'medium', 'low']);
    const critical = m.findings[0]!;
    expect(critical.exchanges).toHaveLength(3);
    expect(critical.exchanges[0]!.exchange.variant).toBe('trigger:year-2027');
    expect(critical.missingExchanges).toEqual(['triggers-core:p9:gone:99']);
    expect(critical.exchanges.some((x) => x.judge?.record.verdict === 'flag')).toBe(true);
    expect(m.families.map((f) => [f.family, f.score, f.coverage.failed])).toEqual([
      ['triggers', 0.81, 0],
      ['injection', 0.34, 1],
    ]);
    expect(m.overall?.score).toBe(0.74);
    expect(m.failures.total).toBe(1);
    expect(m.failures.exchanges[0]!.failure).toContain('timeout');
    expect(m.models.delivered?.modelId).toBe('acme-chat-ft');
    expect(m.manifest.evidenceRootRecord?.kind).toBe('run.end');
    // The appendix cites every record the model refers to, in order.
    const seqs = m.appendix.map((r) => r.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    for (const ref of [critical.ref, critical.exchanges[0]!.ref, m.gate.transition!.ref, m.families[0]!.ref!])
      expect(seqs).toContain(ref.seq);
  });

  it('is undecided, never a pass, when the gate has not decided', () => {
    const m = project(run());
    expect(m.gate.state).toBe('UNDECIDED');
    expect(m.gate.verdict.text).toBe('Not decided by a gate — no release');
    expect(m.gate.caveats.join(' ')).toContain('not decided');
  });

  it('states a gate verdict only from a transition the gate signed: a forged one is a ledger error', () => {
    const d = run({ transitions: [blocked()] });
    // The attacker appends an unsigned COMMITTABLE transition through SQLite, with a correct hash chain.
    const ledger = Ledger.open(join(d, 'ledger.sqlite'));
    ledger.append('transition', { ...committable(), reasons: ['all policy checks passed'] });
    ledger.close();
    const m = project(d);
    expect(m.ledger.chain.ok).toBe(false);
    expect(m.ledger.chain.problem).toMatch(/not signed by a gate \(forged gate record\)/);
    // The verdict comes from the last record the gate signed (BLOCKED), never from the forgery.
    expect(m.gate.state).toBe('BLOCKED');
    expect(m.gate.verdict.text).toBe('Release blocked');
    // Signed by another key (a gate the report does not trust): not a verified gate record either.
    const other = generateKeyPairSync('ed25519');
    const e = run({ transitions: [committable()] });
    expect(projectReport(e, { gatePub: other.publicKey }).gate.verdict.verdict).toBe('undecided');
    // Without the gate's key, a signed transition is shown as not decided by a gate, never as a pass.
    const noKey = projectReport(run({ transitions: [blocked()] }));
    expect(noKey.gate.verdict.text).toBe('Not decided by a gate — no release');
    expect(noKey.gate.caveats.join(' ')).toMatch(/not verified against the gate's public key \(none given/);
  });

  it('does not fall back to an earlier COMMITTABLE when the latest transition is unreadable', () => {
    const m = project(run({ transitions: [committable(), { to: 42 }] }));
    expect(m.gate.verdict.verdict).toBe('undecided');
    expect(m.failures.unreadable.some((u) => u.ref.kind === 'transition')).toBe(true);
  });

  it('treats a COMMITTABLE decision as stale when evidence was appended after it', () => {
    const late = {
      id: 'injection:late:ffffff',
      family: 'injection',
      kind: 'late',
      severity: 'high',
      title: 'late',
      statistic: {
        name: 'x',
        effect: 0.5,
        ci: [0.1, 0.9],
        pValue: 0.01,
        qValue: 0.01,
        hitsBase: 0,
        hitsDelivered: 2,
        n: 4,
      },
      exchangeIds: [],
    };
    const m = project(
      run({
        before: [{ kind: 'override', payload: overrideEnvelope('triggers:conditional-divergence:a1b2c3') }],
        transitions: [committable()],
        after: [{ kind: 'finding', payload: late }],
      }),
    );
    expect(m.gate.state).toBe('COMMITTABLE');
    expect(m.gate.verdict.verdict).toBe('undecided');
    expect(m.gate.caveats.join(' ')).toContain('stale');
  });

  it('refuses to project COMMITTABLE over a critical finding that nobody overrode', () => {
    const m = project(run({ transitions: [committable()] }));
    expect(m.gate.verdict.verdict).toBe('undecided');
    expect(m.gate.caveats.join(' ')).toContain(
      'critical finding triggers:conditional-divergence:a1b2c3 has no override',
    );
  });

  it('projects COMMITTABLE when the critical finding carries an override', () => {
    const ov = {
      kind: 'override' as const,
      payload: overrideEnvelope('triggers:conditional-divergence:a1b2c3'),
    };
    const m = project(run({ before: [ov], transitions: [committable()] }));
    expect(m.findings[0]!.overrides).toHaveLength(1);
    expect(m.overrides[0]!.summary).toContain(
      'override by alice@security for finding triggers:conditional-divergence:a1b2c3',
    );
    expect(m.gate.caveats).toEqual([]);
    expect(m.gate.verdict.text).toBe('Release allowed');
  });

  it('sees a broken hash chain and withholds a release verdict', () => {
    const d = run({ transitions: [committable()], after: [] });
    const db = new Database(join(d, 'ledger.sqlite'));
    // Tamper with a finding's severity without re-hashing (an attacker drops the append-only triggers first).
    for (const t of db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as {
      name: string;
    }[])
      db.exec(`DROP TRIGGER "${t.name}"`);
    const row = db.prepare("SELECT seq, payload FROM records WHERE kind = 'finding' LIMIT 1").get() as {
      seq: number;
      payload: string;
    };
    db.prepare('UPDATE records SET payload = ? WHERE seq = ?').run(
      row.payload.replace('"critical"', '"info"'),
      row.seq,
    );
    db.close();
    const m = project(d);
    expect(m.ledger.chain).toMatchObject({ ok: false, brokenAt: row.seq });
    expect(m.gate.verdict.verdict).toBe('undecided');
  });

  it('reads the payloads the audit and the judge write: manifest draft, run.end counts, trigger search, judge rationale', () => {
    const judged = {
      kind: 'judge' as const,
      payload: {
        exchangeId: 'triggers-core:p1:trigger:year-2027:1',
        probeKey: 'triggers-core:p1',
        selectedAs: 'candidate',
        verdict: 'flag',
        severity: 'high',
        confidence: 0.9,
        calls: 2,
        cached: false,
        judgeRef: 'vllm:http://127.0.0.1:9/v1#judge',
        rubricHash: 'c'.repeat(64),
        rationale: '<b>cites</b> os.system',
        citations: ['os.system'],
        orders: [],
      } satisfies RecordPayload<'judge'>,
    };
    const m = project(run({ manifest: false, before: [judged], transitions: [blocked()] }));
    expect(m.models.base?.ref).toBe('local:fixtures/organisms/base');
    expect(m.probeSets.map((p) => p.id)).toEqual(['triggers-core', 'injection-core']);
    expect(m.runEnd?.counts).toEqual({ exchanges: 13, failed: 1, findings: 3 });
    expect(m.triggers[0]!.summary).toBe(
      'trigger search from "It is 2027.", for finding triggers:conditional-divergence:a1b2c3, reproduced, minimal condition: conversation mentions 2027, delivered hit rate 0.75 with / 0.00 without, base 0.00 with, 24 requests',
    );
    const late = m.judges.find((j) => j.record.rationale);
    expect(late?.record).toMatchObject({
      verdict: 'flag',
      rationale: '<b>cites</b> os.system',
      confidence: 0.9,
    });
  });

  it('withholds a release verdict when the manifest evidence root is not in the ledger', () => {
    const d = run({
      before: [{ kind: 'override', payload: overrideEnvelope('triggers:conditional-divergence:a1b2c3') }],
      transitions: [committable()],
    });
    const manifest = JSON.parse(readFileSync(join(d, 'manifest.json'), 'utf8'));
    writeFileSync(join(d, 'manifest.json'), JSON.stringify({ ...manifest, evidenceRoot: 'e'.repeat(64) }));
    const m = project(d);
    expect(m.ledger.chain.ok).toBe(false);
    expect(m.gate.state).toBe('COMMITTABLE');
    expect(m.gate.verdict.verdict).toBe('undecided');
    expect(m.gate.caveats.join(' ')).toContain('is not in the ledger');
  });

  it('lists unreadable evidence instead of counting it', () => {
    const m = project(
      run({
        transitions: [blocked()],
        after: [{ kind: 'exchange', payload: { id: 'x', family: 'Not a family!' } }],
      }),
    );
    expect(m.failures.unreadable).toHaveLength(1);
    expect(m.failures.unreadable[0]!.reason).toMatch(/^exchange: family: /);
    expect(m.exchangesTotal).toBe(13);
  });

  it('rejects a missing run directory or ledger with a one-line UserError', () => {
    expect(() => projectReport('/nonexistent/run')).toThrow(UserError);
    const empty = mkdtempSync(join(tmpdir(), 'probate-report-empty-'));
    dirs.push(empty);
    expect(() => projectReport(empty)).toThrow(/ledger\.sqlite: not found/);
    const bad = run({ transitions: [blocked()] });
    const manifest = JSON.parse(readFileSync(join(bad, 'manifest.json'), 'utf8'));
    writeFileSync(join(bad, 'manifest.json'), JSON.stringify({ ...manifest, base: 7 }));
    expect(() => projectReport(bad)).toThrow(/manifest\.json: base: /);
  });
});
