import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Ledger } from '../../src/ledger/ledger.ts';
import { verifyLedger } from '../../src/ledger/verify.ts';

/**
 * A real audit of a shipped organism killed with SIGKILL while its exchanges stream into the ledger (group
 * commit: what was queued is lost), then `--resume`d: the ledger verifies after the kill, keeps every exchange
 * it had committed, holds no exchange twice, and ends in the verdict, findings and exchanges of the same audit
 * run without a kill.
 */
const BASE = 'local:fixtures/organisms/base';
const DELIVERED = 'local:fixtures/organisms/inj-doc';

interface AuditJson {
  exchanges: number;
  overall: number;
  findings: { id: string }[];
  verdict: { state: string };
}

function audit(out: string, extra: string[] = []): Promise<AuditJson> {
  const args = ['bin/probate.js', 'audit', '--base', BASE, '--delivered', DELIVERED, '--json', '--out', out];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...args, ...extra], { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      // Exit 20 (BLOCKED) is the verdict, not a failure of the command.
      if (err && err.code !== 20) return reject(new Error(`audit failed: ${stderr}`));
      resolve(JSON.parse(stdout) as AuditJson);
    });
  });
}

/** Starts the audit and SIGKILLs it once the ledger holds at least `after` committed exchanges. */
function auditKilledAfter(out: string, after: number): Promise<string | null> {
  const child = spawn(
    process.execPath,
    ['bin/probate.js', 'audit', '--base', BASE, '--delivered', DELIVERED, '--json', '--out', out],
    { stdio: 'ignore' },
  );
  const file = join(out, 'ledger.sqlite');
  return new Promise((resolve, reject) => {
    const poll = setInterval(() => {
      if (!existsSync(file)) return;
      let n = 0;
      try {
        const l = Ledger.open(file, { readonly: true });
        n = l.count('exchange');
        l.close();
      } catch {
        return; // not yet created
      }
      if (n >= after) child.kill('SIGKILL');
    }, 100);
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearInterval(poll);
      resolve(signal);
    });
  });
}

const ids = (file: string) => {
  const l = Ledger.open(file, { readonly: true });
  const all = [...l.records<{ id: string }>(['exchange'])].map((r) => r.payload.id);
  const ended = l.count('run.end');
  l.close();
  return { all, ended };
};

describe('a real audit killed mid-run and resumed', () => {
  it('keeps what it committed, repeats nothing, and ends as the uninterrupted audit does', async () => {
    const killed = mkdtempSync(join(tmpdir(), 'probate-kill-'));
    expect(await auditKilledAfter(killed, 150)).toBe('SIGKILL');
    const file = join(killed, 'ledger.sqlite');
    expect(verifyLedger(file).ok).toBe(true);
    const before = ids(file);
    expect(before.all.length).toBeGreaterThanOrEqual(150);
    expect(before.ended).toBe(0);

    const [resumed, whole] = await Promise.all([
      audit(killed, ['--resume']),
      audit(mkdtempSync(join(tmpdir(), 'probate-whole-'))),
    ]);
    expect(verifyLedger(file).ok).toBe(true);
    const after = ids(file);
    expect(new Set(after.all).size).toBe(after.all.length);
    for (const id of before.all) expect(after.all).toContain(id);
    expect(after.ended).toBe(1);

    expect(resumed.verdict.state).toBe('BLOCKED');
    expect(resumed.verdict.state).toBe(whole.verdict.state);
    expect(resumed.exchanges).toBe(whole.exchanges);
    expect(resumed.overall).toBe(whole.overall);
    expect(resumed.findings.map((f) => f.id).sort()).toEqual(whole.findings.map((f) => f.id).sort());
  });
});
