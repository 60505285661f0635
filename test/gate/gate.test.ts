import { generateKeyPairSync } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyAttestation } from '../../src/cli/commands/verify.ts';
import { checkAttestation } from '../../src/gate/attestation.ts';
import { IN_TOTO_PAYLOAD_TYPE, signEnvelope } from '../../src/gate/dsse.ts';
import { initGate } from '../../src/gate/init.ts';
import { OVERRIDE_TYPE, signOverride } from '../../src/gate/override.ts';
import { loadPolicy } from '../../src/gate/policy.ts';
import { POLICY_CHANGE_TYPE, signPolicyChange } from '../../src/gate/policy-change.ts';
import { release } from '../../src/gate/release.ts';
import { GateService } from '../../src/gate/service.ts';
import { addPrincipal } from '../../src/gate/trust.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { manifestHash, readManifest } from '../../src/ledger/manifest.ts';
import { type RunSpec, writeRun } from './fixtures.ts';

const services: GateService[] = [];
afterAll(() => {
  for (const s of services) s.close();
});

function setup(spec: Omit<RunSpec, 'policyHash'> = {}) {
  const root = mkdtempSync(join(tmpdir(), 'gate-'));
  const gateDir = join(root, 'gate');
  initGate(gateDir);
  const gate = new GateService(gateDir);
  services.push(gate);
  const policyHash = loadPolicy(join(gateDir, 'policy.yaml')).hash;
  const run = writeRun(join(root, 'a'), { ...spec, policyHash });
  return { root, gateDir, gate, policyHash, ...run };
}

const pair = () => generateKeyPairSync('ed25519');
const CRIT = [{ id: 'triggers:canary:1', family: 'triggers' as const, severity: 'critical' as const }];

describe('gate decide', () => {
  it('clean run: COMMITTABLE, signed attestation bound to the weights, transition in ledger and DB', () => {
    const { gate, runDir } = setup();
    const r = gate.decide(runDir);
    expect(r.state).toBe('COMMITTABLE');
    const att = JSON.parse(readFileSync(join(runDir, 'attestation.dsse.json'), 'utf8'));
    const check = checkAttestation(att, gate.pub, { policyHash: gate.policy().hash });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    // The subject is every file the model loads, not only the weights.
    expect(check.statement.subject.map((x) => x.name)).toEqual(['config.json', 'onnx/model.onnx']);
    expect(check.statement.predicate.capability.id).toBe(r.capabilityId);
    const l = Ledger.open(join(runDir, 'ledger.sqlite'), { readonly: true });
    const transitions = [...l.records(['transition'])].map((t) => t.payload as { to: string });
    l.close();
    expect(transitions.map((t) => t.to)).toEqual(['COMMITTABLE']);
    expect(gate.db.capabilitiesOf(r.auditId).map((c) => c.status)).toEqual(['minted']);
    expect(statSync(join(gate.dir, 'gate.key')).mode & 0o777).toBe(0o600);
  });

  it('a critical finding never yields an attestation or a capability', () => {
    const { gate, runDir } = setup({ findings: CRIT });
    const r = gate.decide(runDir);
    expect(r.state).toBe('BLOCKED');
    expect(r.attestation).toBeUndefined();
    expect(existsSync(join(runDir, 'attestation.dsse.json'))).toBe(false);
    expect(gate.db.capabilitiesOf(r.auditId)).toEqual([]);
    // Even forcing a capability into the DB is refused by the state DB itself.
    expect(() =>
      gate.db.mintCapability({
        id: 'f'.repeat(32),
        audit: r.auditId,
        lineage: r.lineage,
        expires_at: '2999-01-01',
        idem_key: 'k',
      }),
    ).toThrow(/capability refused/);
  });

  it('no run.end / uncertain judge → REVIEW_REQUIRED, no attestation', () => {
    const n = setup({ runEnd: false });
    expect(n.gate.decide(n.runDir)).toMatchObject({
      state: 'REVIEW_REQUIRED',
      reasons: expect.arrayContaining([expect.stringMatching(/run.end/)]),
    });
    const u = setup({ uncertain: { injection: 1 } });
    const r = u.gate.decide(u.runDir);
    expect(r.state).toBe('REVIEW_REQUIRED');
    expect(r.attestation).toBeUndefined();
  });

  it('an edited ledger record blocks (and re-deciding a clean-looking tampered ledger cannot approve)', () => {
    const { gate, runDir } = setup({ findings: CRIT });
    const db = new Database(join(runDir, 'ledger.sqlite'));
    db.exec('DROP TRIGGER records_no_update');
    db.prepare(
      `UPDATE records SET payload = replace(payload, '"critical"', '"low"') WHERE kind = 'finding'`,
    ).run();
    db.close();
    const r = gate.decide(runDir);
    expect(r.state).toBe('BLOCKED');
    expect(r.reasons[0]).toMatch(/evidence integrity: ledger: record \d+: content does not match/);
  });

  it("decides under the gate's pinned policy, never the audit's; a hand-edited policy stops the gate", () => {
    const root = mkdtempSync(join(tmpdir(), 'gate-'));
    const gateDir = join(root, 'gate');
    initGate(gateDir);
    const gate = new GateService(gateDir);
    services.push(gate);
    // The audit ran under a lax policy of its own (high findings pass): the gate's policy still reviews them.
    const lax = writeRun(join(root, 'a'), {
      policyHash: 'f'.repeat(64),
      policyVersion: '1',
      findings: [{ id: 'h', family: 'reasoning', severity: 'high' }],
    });
    const r = gate.decide(lax.runDir);
    expect(r.state).toBe('REVIEW_REQUIRED');
    expect(r.reasons).toContain('high finding h');
    expect(r.attestation).toBeUndefined();
    writeFileSync(
      join(gateDir, 'policy.yaml'),
      readFileSync(join(gateDir, 'policy.yaml'), 'utf8').replace('high: review', 'high: pass'),
    );
    expect(() => gate.decide(lax.runDir)).toThrow(/not the policy pinned in trust.yaml/);
  });

  it('a manifest edited after run.start (judge calibration flipped) blocks', () => {
    const { gate, runDir } = setup({ calibrated: false });
    const m = JSON.parse(readFileSync(join(runDir, 'manifest.json'), 'utf8'));
    m.judge.calibration.calibrated = true;
    writeFileSync(join(runDir, 'manifest.json'), JSON.stringify(m));
    expect(gate.decide(runDir).state).toBe('BLOCKED');
  });

  it('a new checkpoint for a BLOCKED lineage is REMEDIATED, linked, and only clean reaches COMMITTABLE', () => {
    const s = setup({ findings: CRIT });
    const first = s.gate.decide(s.runDir);
    expect(first.state).toBe('BLOCKED');
    const dirty = writeRun(join(s.root, 'b'), {
      policyHash: s.policyHash,
      weights: 'v2',
      findings: [{ id: 'h', family: 'reasoning', severity: 'high' }],
    });
    const second = s.gate.decide(dirty.runDir);
    expect(second.previousAudit).toBe(first.auditId);
    expect(s.gate.db.transitions(second.auditId).map((t) => `${t.from_state}>${t.to_state}`)).toEqual([
      'BLOCKED>REMEDIATED',
      'REMEDIATED>REVIEW_REQUIRED',
    ]);
    const clean = writeRun(join(s.root, 'c'), { policyHash: s.policyHash, weights: 'v3' });
    expect(s.gate.decide(clean.runDir).state).toBe('COMMITTABLE');
  });
});

describe('policy changes', () => {
  it("only a principal's signed act changes the pinned policy; it is recorded, and old approvals stop verifying", () => {
    const s = setup();
    const r = s.gate.decide(s.runDir);
    const alice = pair();
    const pubFile = join(s.root, 'alice.pub');
    writeFileSync(pubFile, alice.publicKey.export({ type: 'spki', format: 'pem' }));
    addPrincipal(s.gateDir, s.gate.pub, 'alice', pubFile);
    const next = join(s.root, 'next.yaml');
    writeFileSync(
      next,
      readFileSync(join(s.gateDir, 'policy.yaml'), 'utf8').replace('version: "1"', 'version: "2"'),
    );
    const nextHash = loadPolicy(next).hash;
    const change = {
      _type: POLICY_CHANGE_TYPE,
      previousHash: s.policyHash,
      policyHash: nextHash,
      policyVersion: '2',
      principal: 'alice',
      reason: 'tighten',
      createdAt: new Date().toISOString(),
    } as const;
    const byGate = (s.gate as unknown as { sign: (t: string, p: unknown) => unknown }).sign(
      'application/vnd.probate.policy-change+json',
      change,
    );
    expect(() => s.gate.setPolicy(next, byGate)).toThrow(/policy change refused: signed by the gate/);
    expect(() =>
      s.gate.setPolicy(
        next,
        signPolicyChange({ ...change, previousHash: 'e'.repeat(64) }, alice.privateKey, alice.publicKey),
      ),
    ).toThrow(/no longer the pinned one/);
    const done = s.gate.setPolicy(next, signPolicyChange(change, alice.privateKey, alice.publicKey));
    expect(done).toMatchObject({ hash: nextHash, version: '2', principal: 'alice' });
    expect(s.gate.policy().hash).toBe(nextHash);
    expect(s.gate.db.currentPolicy()).toMatchObject({ hash: nextHash, principal: 'alice' });
    expect(checkAttestation(r.attestation, s.gate.pub, { policyHash: nextHash })).toMatchObject({
      ok: false,
      reason: /not the gate's pinned policy/,
    });
  });
});

describe('lineage by subject', () => {
  it('the same weights stay BLOCKED across a new manifest, policy label and lineage name', () => {
    const s = setup({ findings: CRIT });
    expect(s.gate.decide(s.runDir).state).toBe('BLOCKED');
    // Same weights, audited again with a subset of probes that finds nothing, under another lineage name.
    const again = writeRun(join(s.root, 'again'), { policyHash: 'f'.repeat(64), lineage: 'fresh-name' });
    const r = s.gate.decide(again.runDir);
    expect(r.state).toBe('BLOCKED');
    expect(r.reasons[0]).toMatch(/same weights .* were BLOCKED by audit/);
    expect(r.attestation).toBeUndefined();
    // Different weights are a remediation candidate and can be approved.
    const v2 = writeRun(join(s.root, 'v2'), { policyHash: s.policyHash, weights: 'v2' });
    expect(s.gate.decide(v2.runDir).state).toBe('COMMITTABLE');
  });

  it('a corrupted copy of a run neither blocks its lineage nor voids its capability', async () => {
    const s = setup();
    const r = s.gate.decide(s.runDir);
    expect(r.state).toBe('COMMITTABLE');
    const copy = join(s.root, 'copy');
    cpSync(s.runDir, copy, { recursive: true });
    // Same manifest, another directory: refused outright.
    expect(() => s.gate.decide(copy)).toThrow(/a copy of a run is not decided/);
    // Edited manifest + ledger: a different (broken) audit, BLOCKED alone.
    const m = JSON.parse(readFileSync(join(copy, 'manifest.json'), 'utf8'));
    writeFileSync(join(copy, 'manifest.json'), JSON.stringify({ ...m, runId: 'forged' }));
    const bad = s.gate.decide(copy);
    expect(bad.state).toBe('BLOCKED');
    expect(s.gate.db.capability(r.capabilityId!)?.status).toBe('minted');
    expect(s.gate.db.audit(r.auditId)?.state).toBe('COMMITTABLE');
    expect((await release(s.gate, r.attestation, join(s.root, 'prod'))).state).toBe('RELEASED');
  });
});

describe('overrides', () => {
  function withPrincipal() {
    const s = setup({ findings: CRIT });
    const alice = pair();
    const pubFile = join(s.root, 'alice.pub');
    writeFileSync(pubFile, alice.publicKey.export({ type: 'spki', format: 'pem' }));
    addPrincipal(s.gateDir, s.gate.pub, 'alice', pubFile);
    s.gate.decide(s.runDir);
    const m = readManifest(s.runDir);
    const statement = {
      _type: OVERRIDE_TYPE,
      manifestHash: manifestHash(m),
      evidenceRoot: m.evidenceRoot!,
      findingId: CRIT[0]!.id,
      policyVersion: '1',
      principal: 'alice',
      reason: 'false positive: canary in test corpus',
      createdAt: new Date().toISOString(),
    } as const;
    return { ...s, alice, statement, manifest: m };
  }

  it('a principal override of a critical finding moves BLOCKED → REVIEW_REQUIRED, never COMMITTABLE', () => {
    const s = withPrincipal();
    const r = s.gate.override(s.runDir, signOverride(s.statement, s.alice.privateKey, s.alice.publicKey));
    expect(r.state).toBe('REVIEW_REQUIRED');
    expect(r.attestation).toBeUndefined();
    expect(s.gate.db.transitions(r.auditId).map((t) => t.to_state)).toEqual(['BLOCKED', 'REVIEW_REQUIRED']);
  });

  it('refuses overrides signed by the gate key or for another finding/manifest/policy', () => {
    const s = withPrincipal();
    const gateKey = (s.gate as unknown as { sign: (t: string, p: unknown) => unknown }).sign(
      'application/vnd.probate.override+json',
      s.statement,
    );
    expect(() => s.gate.override(s.runDir, gateKey)).toThrow(/override refused/);
    const other = [
      { ...s.statement, findingId: 'triggers:other:2' },
      { ...s.statement, manifestHash: 'e'.repeat(64) },
      { ...s.statement, policyVersion: '2' },
      { ...s.statement, principal: 'bob' },
    ];
    for (const st of other)
      expect(() =>
        s.gate.override(s.runDir, signOverride(st, s.alice.privateKey, s.alice.publicKey)),
      ).toThrow(/override refused/);
    // The gate's own key cannot even be added as a principal.
    expect(() => addPrincipal(s.gateDir, s.gate.pub, 'sneaky', join(s.gateDir, 'gate.pub'))).toThrow(
      /gate's own/,
    );
    expect(s.gate.decide(s.runDir).state).toBe('BLOCKED');
  });

  it('refuses a forbidden (auditor) key even when trust.yaml also lists it as a principal', () => {
    const s = withPrincipal();
    const pem = s.alice.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const trust = readFileSync(join(s.gateDir, 'trust.yaml'), 'utf8').replace(
      /forbidden: \[\]/,
      `forbidden:\n  - name: auditor\n    pub: |\n${pem
        .trimEnd()
        .split('\n')
        .map((l) => `      ${l}`)
        .join('\n')}`,
    );
    writeFileSync(join(s.gateDir, 'trust.yaml'), trust);
    expect(() =>
      s.gate.override(s.runDir, signOverride(s.statement, s.alice.privateKey, s.alice.publicKey)),
    ).toThrow(/override refused/);
  });

  it('an override in the ledger for another policy version is void at decide time', () => {
    const s = withPrincipal();
    s.gate.appendToRun(s.runDir, manifestHash(s.manifest), [
      {
        kind: 'override',
        payload: signOverride({ ...s.statement, policyVersion: '0' }, s.alice.privateKey, s.alice.publicKey),
      },
    ]);
    const r = s.gate.decide(s.runDir);
    expect(r.state).toBe('BLOCKED');
    expect(r.overrides.void).toEqual(['bound to a different policy version']);
  });
});

describe('verify and release (directory target)', () => {
  it('verifies against the presented model; swapped weights, forged, expired and re-scoped fail', async () => {
    const s = setup();
    const r = s.gate.decide(s.runDir);
    const attFile = r.attestationPath!;
    const pubFile = join(s.gateDir, 'gate.pub');
    const pinned = { policyHash: s.policyHash };
    expect((await verifyAttestation({ attestation: attFile, gate: s.gateDir, model: s.modelDir })).ok).toBe(
      true,
    );

    // forged: signed by another key
    const mallory = pair();
    const payload = JSON.parse(Buffer.from(r.attestation!.payload, 'base64').toString());
    const forgedFile = join(s.root, 'forged.json');
    writeFileSync(
      forgedFile,
      JSON.stringify(signEnvelope(IN_TOTO_PAYLOAD_TYPE, payload, mallory.privateKey, s.gate.pub)),
    );
    expect(
      (await verifyAttestation({ attestation: forgedFile, pub: pubFile, gate: s.gateDir, model: s.modelDir }))
        .ok,
    ).toBe(false);
    // re-scoped: the signed payload edited to another subject digest, signature kept
    const rescoped = {
      ...r.attestation!,
      payload: Buffer.from(
        JSON.stringify({
          ...payload,
          subject: [{ name: 'onnx/model.onnx', digest: { sha256: '0'.repeat(64) } }],
        }),
      ).toString('base64'),
    };
    expect(checkAttestation(rescoped, s.gate.pub, pinned)).toMatchObject({ ok: false, reason: /signature/ });
    // expired
    expect(
      checkAttestation(r.attestation, s.gate.pub, pinned, new Date(Date.now() + 8 * 24 * 3600 * 1000)),
    ).toMatchObject({ ok: false, reason: /expired/ });
    // approved under a policy that is not the gate's pinned one
    expect(checkAttestation(r.attestation, s.gate.pub, { policyHash: 'e'.repeat(64) })).toMatchObject({
      ok: false,
      reason: /not the gate's pinned policy/,
    });
    // swapped weights
    writeFileSync(join(s.modelDir, 'onnx', 'model.onnx'), 'backdoored');
    const swapped = await verifyAttestation({ attestation: attFile, gate: s.gateDir, model: s.modelDir });
    expect(swapped.ok).toBe(false);
    expect(swapped.checks.find((c) => c.name === 'subject')?.detail).toMatch(/differs from attested/);
    await expect(release(s.gate, r.attestation, join(s.root, 'prod'))).rejects.toThrow(
      /delivered files changed since approval/,
    );
    expect(existsSync(join(s.root, 'prod'))).toBe(false);
  });

  it('promotes once, atomically; a replay is refused; a superseded attestation is void', async () => {
    const s = setup();
    const old = s.gate.decide(s.runDir);
    const r = s.gate.decide(s.runDir); // a re-decision voids the earlier capability
    await expect(release(s.gate, old.attestation, join(s.root, 'p0'))).rejects.toThrow(
      /capability already void/,
    );
    const out = await release(s.gate, r.attestation, join(s.root, 'prod'));
    expect(out.state).toBe('RELEASED');
    expect(readFileSync(join(s.root, 'prod', 'onnx', 'model.onnx'), 'utf8')).toBe('delivered-weights-v1');
    await expect(release(s.gate, r.attestation, join(s.root, 'prod2'))).rejects.toThrow(
      /capability already consumed/,
    );
    expect(existsSync(join(s.root, 'prod2'))).toBe(false);
    expect(() => s.gate.decide(s.runDir)).toThrow(/already released/);
  });
});

describe('resumed runs', () => {
  it('accept an earlier run.start with another start time; block one that audited another model', () => {
    const s = setup();
    const two = writeRun(join(s.root, 't'), {
      policyHash: s.policyHash,
      earlierStart: (m) => ({ ...m, createdAt: '2024-12-31T00:00:00.000Z' }),
    });
    expect(s.gate.decide(two.runDir).state).toBe('COMMITTABLE');
    const bad = writeRun(join(s.root, 'u'), {
      policyHash: s.policyHash,
      lineage: 'u',
      earlierStart: (m) => ({ ...m, delivered: { ...m.delivered, modelId: 'other' } }),
    });
    expect(s.gate.decide(bad.runDir)).toMatchObject({
      state: 'BLOCKED',
      reasons: [expect.stringMatching(/resumed run changed manifest field 'delivered'/)],
    });
  });
});
