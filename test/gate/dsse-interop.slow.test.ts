import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { initGate } from '../../src/gate/init.ts';
import { loadPolicy } from '../../src/gate/policy.ts';
import { GateService } from '../../src/gate/service.ts';
import { writeRun } from './fixtures.ts';

const PY = '/usr/bin/python3';
const script = new URL('./verify-dsse.py', import.meta.url).pathname;

// The slow suite requires python's securesystemslib (.ci/run installs it): missing, this fails, it is not skipped.
describe('DSSE envelope verifies in an independent implementation (python securesystemslib)', () => {
  it('has python with securesystemslib and cryptography', () => {
    const probe = spawnSync(PY, ['-c', 'import securesystemslib.signer, cryptography'], { encoding: 'utf8' });
    expect({ status: probe.status, stderr: probe.stderr?.trim() }).toEqual({ status: 0, stderr: '' });
  });

  it('accepts the gate attestation and rejects a tampered one', () => {
    const root = mkdtempSync(join(tmpdir(), 'dsse-'));
    const gateDir = join(root, 'gate');
    initGate(gateDir);
    const gate = new GateService(gateDir);
    const { runDir } = writeRun(join(root, 'a'), {
      policyHash: loadPolicy(join(gateDir, 'policy.yaml')).hash,
    });
    const r = gate.decide(runDir);
    gate.close();
    expect(r.state).toBe('COMMITTABLE');
    const pub = join(gateDir, 'gate.pub');
    const ok = spawnSync(PY, [script, r.attestationPath!, pub], { encoding: 'utf8' });
    expect(ok.stdout.trim()).toBe(
      'https://in-toto.io/Statement/v1 https://probate.dev/audit/v1 application/vnd.in-toto+json',
    );
    expect(ok.status).toBe(0);

    const env = JSON.parse(readFileSync(r.attestationPath!, 'utf8'));
    const statement = JSON.parse(Buffer.from(env.payload, 'base64').toString());
    statement.predicate.verdict.reasons = ['edited'];
    env.payload = Buffer.from(JSON.stringify(statement)).toString('base64');
    const tampered = join(root, 'tampered.json');
    writeFileSync(tampered, JSON.stringify(env));
    const bad = spawnSync(PY, [script, tampered, pub], { encoding: 'utf8' });
    expect(bad.status).toBe(1);
    expect(bad.stdout).toMatch(/^invalid/);
  });
});
