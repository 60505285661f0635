import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { loadPolicy } from '../../src/gate/policy.ts';
import { writeRun } from './fixtures.ts';

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    out += String(s);
    return true;
  });
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s);
    return true;
  });
  try {
    return { code: await main(args), out, err };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}

describe('CLI: gate init → add-principal → decide → override → verify → release', () => {
  it('runs the whole flow with the documented exit codes', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cli-'));
    const g = join(root, 'gate');
    expect((await cli('gate', 'init', g)).code).toBe(0);
    expect((await cli('gate', 'init', g)).code).toBe(2);
    const bob = generateKeyPairSync('ed25519');
    writeFileSync(join(root, 'bob.pub'), bob.publicKey.export({ type: 'spki', format: 'pem' }));
    writeFileSync(join(root, 'bob.key'), bob.privateKey.export({ type: 'pkcs8', format: 'pem' }), {
      mode: 0o600,
    });
    expect(
      (await cli('gate', 'add-principal', g, '--name', 'bob', '--pub', join(root, 'bob.pub'))).code,
    ).toBe(0);
    const gatePub = await cli('gate', 'add-principal', g, '--name', 'gatey', '--pub', join(g, 'gate.pub'));
    expect(gatePub.code).toBe(2);
    expect(gatePub.err).toMatch(/cannot be a principal/);

    const policyHash = loadPolicy(join(g, 'policy.yaml')).hash;
    const high = { id: 'preferences:entity:1', family: 'preferences' as const, severity: 'high' as const };
    const { runDir, modelDir } = writeRun(join(root, 'a'), { policyHash, findings: [high] });
    // The gate decides only under its pinned policy: naming another one is refused.
    const lax = await cli('gate', 'decide', runDir, '--gate', g, '--policy', join(root, 'lax.yaml'));
    expect(lax.code).toBe(2);
    expect(lax.err).toMatch(/--policy: the gate decides only under its own pinned policy/);
    const d = await cli('gate', 'decide', runDir, '--gate', g);
    expect(d.code).toBe(10);
    expect(d.out).toMatch(/REVIEW_REQUIRED\n {2}- high finding preferences:entity:1/);

    const key = join(root, 'bob.key');
    // The override CLI names the policy it is made under; one other than the gate's pinned policy is refused.
    const otherPolicy = join(root, 'other.yaml');
    writeFileSync(otherPolicy, `${readFileSync(join(g, 'policy.yaml'), 'utf8')}\n# edited\n`);
    const wrong = await cli(
      'override',
      runDir,
      '--finding',
      high.id,
      '--principal',
      'bob',
      '--key',
      key,
      '--reason',
      'reviewed',
      '--gate',
      g,
      '--policy',
      otherPolicy,
    );
    expect(wrong.code).toBe(20);
    expect(wrong.err).toMatch(/override refused: bound to a policy other than the gate's pinned one/);
    const o = await cli(
      'override',
      runDir,
      '--finding',
      high.id,
      '--principal',
      'bob',
      '--key',
      key,
      '--reason',
      'reviewed: benign',
      '--gate',
      g,
    );
    expect(o.code).toBe(0);
    expect(o.out).toMatch(/^COMMITTABLE/);
    expect(`${o.out}${o.err}`).not.toContain(readFileSync(key, 'utf8').split('\n')[1]);

    const att = join(runDir, 'attestation.dsse.json');
    const v = await cli(
      'verify',
      att,
      '--pub',
      join(g, 'gate.pub'),
      '--model',
      modelDir,
      '--policy',
      join(g, 'policy.yaml'),
    );
    expect(v.code).toBe(0);
    expect(v.out).toMatch(/^VERIFIED/);
    const changed = join(root, 'changed.yaml');
    writeFileSync(
      changed,
      readFileSync(join(g, 'policy.yaml'), 'utf8').replace('maxFailed: 0', 'maxFailed: 5'),
    );
    const wrongPolicy = await cli(
      'verify',
      att,
      '--pub',
      join(g, 'gate.pub'),
      '--model',
      modelDir,
      '--policy',
      changed,
    );
    expect(wrongPolicy.code).toBe(20);
    expect(wrongPolicy.out).toMatch(/FAIL signature\+expiry\+bindings\+policy: approved under policy/);
    // Without a pinned policy (--gate DIR or --policy FILE) verify refuses to judge.
    const unpinned = await cli('verify', att, '--pub', join(g, 'gate.pub'), '--model', modelDir);
    expect(unpinned.code).toBe(2);
    expect(unpinned.err).toMatch(/--gate DIR or --policy FILE/);

    const target = join(root, 'prod');
    expect((await cli('release', att, '--gate', g, '--to', target)).code).toBe(0);
    expect(existsSync(join(target, 'onnx', 'model.onnx'))).toBe(true);
    const again = await cli('release', att, '--gate', g, '--to', join(root, 'prod2'));
    expect(again.code).toBe(20);
    expect(again.err).toMatch(/release refused: capability already consumed/);
  });

  it('refuses a group-readable gate key or gate directory, naming the chmod to run', async () => {
    const root = mkdtempSync(join(tmpdir(), 'cli-'));
    const g = join(root, 'gate');
    expect((await cli('gate', 'init', g)).code).toBe(0);
    const policyHash = loadPolicy(join(g, 'policy.yaml')).hash;
    const { runDir } = writeRun(join(root, 'a'), { policyHash });
    chmodSync(join(g, 'gate.key'), 0o644);
    const k = await cli('gate', 'decide', runDir, '--gate', g);
    expect(k.code).toBe(2);
    expect(k.err).toContain(`run: chmod 600 ${join(g, 'gate.key')}`);
    chmodSync(join(g, 'gate.key'), 0o600);
    chmodSync(g, 0o755);
    const d = await cli('gate', 'decide', runDir, '--gate', g);
    expect(d.code).toBe(2);
    expect(d.err).toContain(`run: chmod 700 ${g}`);
    chmodSync(g, 0o700);
    expect((await cli('gate', 'decide', runDir, '--gate', g)).code).toBe(0);
  });
});
