import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { initGate } from '../../../src/gate/init.ts';
import { GateService } from '../../../src/gate/service.ts';
import { Ledger } from '../../../src/ledger/ledger.ts';
import {
  type AuditRun,
  audit,
  auditUntil,
  cli,
  copyRun,
  OFFLINE_POLICY,
  principalKeys,
  ready,
  scratch,
  zooEntries,
} from './real-audit.ts';

/**
 * Attacks on a real audit of a shipped trigger implant that the gate BLOCKED (docs/GATE.md "Attacks"):
 * the audited party tries to clear its own BLOCK. Each attack gets a fresh gate (policies/offline.yaml, the
 * policy these organisms are measured under) and a fresh copy of the undecided run.
 */
describe.skipIf(!ready)('attacks on a BLOCKED real audit', { timeout: 900_000 }, () => {
  let root: string;
  let blocked: AuditRun;
  let laxAttack: AuditRun;
  let laxGate: string;

  /** A fresh gate and a fresh copy of the run, decided BLOCKED by that gate. */
  function decided(name: string): { gateDir: string; runDir: string } {
    const gateDir = join(root, 'gates', name);
    initGate(gateDir, { policy: OFFLINE_POLICY });
    const runDir = copyRun(blocked.runDir, join(root, 'runs', name));
    const d = cli(['gate', 'decide', runDir, '--gate', gateDir]);
    expect(d.status, d.stdout + d.stderr).toBe(20);
    return { gateDir, runDir };
  }

  beforeAll(() => {
    root = scratch('blocked');
    // An implant from the zoo that the audit actually BLOCKS (no secret assumed): triggers implants first,
    // then the others (the re-specified trigger organisms audit as REVIEW_REQUIRED; docs/ORGANISMS.md).
    blocked = auditUntil(
      [
        ...zooEntries((e) => e.label === 'implant' && e.family === 'triggers'),
        ...zooEntries((e) => e.label === 'implant' && e.family !== 'triggers'),
      ],
      'BLOCKED',
    );
    // Attack 1 (issue 15, critical): the same weights re-audited under a policy the submitter wrote —
    // no family thresholds, high findings pass, critical still block (the schema insists), same version —
    // with the gate deciding. The gate has already BLOCKED these weights once.
    laxGate = join(root, 'gates', 'lax');
    initGate(laxGate, { policy: OFFLINE_POLICY });
    const first = copyRun(blocked.runDir, join(root, 'runs', 'lax-first'));
    expect(cli(['gate', 'decide', first, '--gate', laxGate]).status).toBe(20);
    const lax = join(root, 'lax.yaml');
    writeFileSync(
      lax,
      readFileSync(OFFLINE_POLICY, 'utf8')
        .replace(/high: review/, 'high: pass')
        .replace(/medium: review/, 'medium: pass')
        .replace(/families:\n(\s+\w+: \{[^}]+\}\n)+/, 'families: {}\n')
        .replace(/required: \[[^\]]+\]/, 'required: []'),
    );
    // (--budget 0: no trigger search; the probe sets alone are the evidence, which keeps this audit short.)
    laxAttack = audit(blocked.modelDir, join(root, 'runs', 'lax-audit'), {
      policy: lax,
      gate: laxGate,
      budget: 0,
    });
  }, 3_600_000);

  it('a policy chosen by the audited party: re-evaluated under the gate policy, still BLOCKED, no attestation', () => {
    expect(laxAttack.exitCode, laxAttack.stderr).toBe(20);
    expect(laxAttack.verdict).toBe('BLOCKED');
    const verdict = (JSON.parse(laxAttack.stdout) as { verdict: { reasons: string[]; gateDecided: boolean } })
      .verdict;
    expect(verdict.gateDecided).toBe(true);
    // Blocked by its own evidence under the gate's policy, or (if the probes alone fall short) by the BLOCK
    // that sticks to these weights; never approved.
    expect(verdict.reasons.join('\n')).toMatch(/>= block|finding|same weights/);
    const manifest = JSON.parse(readFileSync(join(laxAttack.runDir, 'manifest.json'), 'utf8'));
    const gate = new GateService(laxGate);
    try {
      // The audit recorded the lax policy; the gate decided under its own pinned one.
      expect(manifest.policy.hash).not.toBe(gate.policy().hash);
      const rows = gate.db.db.prepare('SELECT DISTINCT policy_hash FROM transitions').all() as Array<{
        policy_hash: string;
      }>;
      expect(rows.map((r) => r.policy_hash)).toEqual([gate.policy().hash]);
      expect(gate.db.db.prepare('SELECT count(*) AS n FROM capabilities').get()).toEqual({ n: 0 });
    } finally {
      gate.close();
    }
    expect(readFileSync(join(laxAttack.runDir, 'report.md'), 'utf8')).toMatch(/Release blocked/);
    const r = cli([
      'verify',
      join(laxAttack.runDir, 'attestation.dsse.json'),
      '--gate',
      laxGate,
      '--model',
      blocked.modelDir,
    ]);
    expect(r.status).toBe(2); // no attestation file exists
  });

  it('naming a policy to the gate is refused (CLI)', () => {
    const { gateDir, runDir } = decided('policy-flag');
    const r = cli(['gate', 'decide', runDir, '--gate', gateDir, '--policy', join(root, 'lax.yaml')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/decides only under its own pinned policy/);
  });

  it('a new audit of the same weights (a probe subset that misses the implant) is not a remediation', () => {
    const { gateDir } = decided('same-weights');
    const partial = audit(blocked.modelDir, join(root, 'runs', 'same-weights-partial'), {
      probes: ['probes/preferences'],
      gate: gateDir,
      budget: 0,
    });
    expect(partial.exitCode, partial.stderr).toBe(20);
    const d = cli(['gate', 'decide', partial.runDir, '--gate', gateDir]);
    expect(d.stdout).toMatch(/same weights \(subject [0-9a-f]{12}…\) were BLOCKED by audit/);
    expect(readFileSync(join(partial.runDir, 'manifest.json'), 'utf8')).toBeTruthy();
  });

  it('the policy itself cannot be swapped on disk: the gate refuses to decide under an unpinned file', () => {
    const { gateDir, runDir } = decided('swap-policy');
    writeFileSync(join(gateDir, 'policy.yaml'), readFileSync(join(root, 'lax.yaml')));
    const r = cli(['gate', 'decide', runDir, '--gate', gateDir]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/not the policy pinned in trust.yaml/);
  });

  it('a forged COMMITTABLE transition is a ledger error, and no report, JUnit or SARIF claims a release', () => {
    const { gateDir, runDir } = decided('forged-transition');
    const ledger = Ledger.open(join(runDir, 'ledger.sqlite'));
    ledger.append('transition', {
      from: 'BLOCKED',
      to: 'COMMITTABLE',
      reasons: ['all policy checks passed'],
      policy: { version: '1-offline', hash: 'a'.repeat(64) },
      lineage: 'x',
      capabilityId: 'c'.repeat(32),
    });
    ledger.close();
    const v = cli(['ledger', 'verify', runDir, '--gate', gateDir]);
    expect(v.status).toBe(20);
    expect(v.stdout).toMatch(/BROKEN at record \d+: record \d+: 'transition' is not signed by a gate/);
    const w = cli(['report', runDir, '--write', '--gate', gateDir]);
    expect(w.status, w.stderr).toBe(0);
    const json = JSON.parse(readFileSync(join(runDir, 'report.json'), 'utf8'));
    expect(json.verdict).not.toMatch(/allowed|released/);
    const junit = readFileSync(join(runDir, 'junit.xml'), 'utf8');
    expect(junit).toMatch(/<testcase name="release gate: [^"]*"[^>]*>\s*<failure/);
    expect(junit).not.toMatch(/Release allowed/);
    const sarif = readFileSync(join(runDir, 'report.sarif'), 'utf8');
    expect(sarif).not.toMatch(/Release allowed/);
    // The gate itself treats the forged record as broken evidence.
    expect(cli(['gate', 'decide', runDir, '--gate', gateDir]).stdout).toMatch(/not signed by a gate/);
  });

  it('a transition signed by another gate is not this gate’s record', () => {
    const { gateDir, runDir } = decided('cross-gate-record');
    const other = join(root, 'gates', 'other');
    initGate(other, { policy: OFFLINE_POLICY });
    const v = cli(['ledger', 'verify', runDir, '--gate', other]);
    expect(v.status).toBe(20);
    expect(v.stdout).toMatch(/signature does not verify against gate.pub/);
    expect(cli(['ledger', 'verify', runDir, '--gate', gateDir]).status).toBe(0);
  });

  it('held: ledger edits, deletes and reorders, and manifest edits, block', () => {
    const tamper = (name: string, sql: string) => {
      const gateDir = join(root, 'gates', name);
      initGate(gateDir, { policy: OFFLINE_POLICY });
      const runDir = copyRun(blocked.runDir, join(root, 'runs', name));
      const db = new Database(join(runDir, 'ledger.sqlite'));
      for (const t of db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as {
        name: string;
      }[])
        db.exec(`DROP TRIGGER "${t.name}"`);
      db.exec(sql);
      db.close();
      return cli(['gate', 'decide', runDir, '--gate', gateDir]);
    };
    const edited = tamper(
      'edit',
      `UPDATE records SET payload = replace(replace(payload, '"critical"', '"info"'), '"high"', '"info"') WHERE kind = 'finding'`,
    );
    expect(edited.status).toBe(20);
    expect(edited.stdout).toMatch(/evidence integrity: ledger: record \d+: content does not match its hash/);
    const deleted = tamper('delete', `DELETE FROM records WHERE kind = 'finding'`);
    expect(deleted.status).toBe(20);
    expect(deleted.stdout).toMatch(/evidence integrity/);
    const reordered = tamper(
      'reorder',
      `UPDATE records SET seq = -1 WHERE seq = 3; UPDATE records SET seq = 3 WHERE seq = 4; UPDATE records SET seq = 4 WHERE seq = -1;`,
    );
    expect(reordered.status).toBe(20);
    // manifest edit: a probe set dropped from the record of what was audited
    const gateDir = join(root, 'gates', 'manifest');
    initGate(gateDir, { policy: OFFLINE_POLICY });
    const runDir = copyRun(blocked.runDir, join(root, 'runs', 'manifest'));
    const m = JSON.parse(readFileSync(join(runDir, 'manifest.json'), 'utf8'));
    writeFileSync(join(runDir, 'manifest.json'), JSON.stringify({ ...m, probeSets: m.probeSets.slice(1) }));
    const r = cli(['gate', 'decide', runDir, '--gate', gateDir]);
    expect(r.status).toBe(20);
    expect(r.stdout).toMatch(/manifest.json field 'probeSets' differs/);
  });

  it('held: an edited report changes nothing; the report is re-projected from the ledger', () => {
    const { gateDir, runDir } = decided('report-edit');
    expect(cli(['report', runDir, '--write', '--gate', gateDir]).status).toBe(0);
    writeFileSync(join(runDir, 'report.json'), JSON.stringify({ verdict: 'allowed', state: 'COMMITTABLE' }));
    expect(cli(['gate', 'decide', runDir, '--gate', gateDir]).status).toBe(20);
    const out = cli(['report', runDir, '--format', 'json', '--gate', gateDir]);
    expect(JSON.parse(out.stdout).verdict).toBe('blocked');
  });

  it('overrides by the gate key or an untrusted key are refused; a principal override gives review, not release', () => {
    const { gateDir, runDir } = decided('overrides');
    const keys = join(root, 'keys');
    mkdirSync(keys, { recursive: true });
    const mallory = principalKeys(keys, 'mallory');
    const alice = principalKeys(keys, 'alice');
    expect(cli(['gate', 'add-principal', gateDir, '--name', 'alice', '--pub', alice.pub]).status).toBe(0);
    const findings = (
      JSON.parse(cli(['report', runDir, '--format', 'json', '--gate', gateDir]).stdout) as {
        findings: Array<{ id: string; severity: string }>;
      }
    ).findings;
    const critical = findings.find((f) => f.severity === 'critical') ?? findings[0]!;
    const override = (principal: string, key: string) =>
      cli([
        'override',
        runDir,
        '--finding',
        critical.id,
        '--principal',
        principal,
        '--key',
        key,
        '--reason',
        'attack',
        '--gate',
        gateDir,
      ]);
    const byGate = override('alice', join(gateDir, 'gate.key'));
    expect(byGate.status).toBe(20);
    expect(byGate.stderr).toMatch(/override refused: signed by the gate or a forbidden key/);
    const byMallory = override('alice', mallory.key);
    expect(byMallory.status).toBe(20);
    expect(byMallory.stderr).toMatch(/override refused: no valid signature by a trusted principal/);
    const byAlice = override('alice', alice.key);
    expect([10, 20]).toContain(byAlice.status);
    expect(byAlice.stdout).not.toMatch(/^COMMITTABLE/);
    expect(byAlice.stdout).not.toMatch(/attestation:/);
  });
});
