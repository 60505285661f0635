import { chmodSync, copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../ledger/manifest.ts';
import { UserError } from '../util/errors.ts';
import { generateEd25519, keyIdOf, loadPublicKey } from './keys.ts';
import { defaultPolicyPath, loadPolicy } from './policy.ts';
import { GATE_KEY_FILE, GATE_POLICY_FILE, GATE_PUB_FILE } from './service.ts';
import { STATE_DB_FILE, StateDb } from './statedb.ts';
import { TRUST_FILE, trustTemplate } from './trust.ts';

/**
 * Creates a gate directory (0700): Ed25519 key pair (gate.key 0600, gate.pub), the gate's policy
 * (policy.yaml, a copy of `policyFile`, default policies/default.yaml), trust.yaml pinning that policy's
 * hash, and the state database recording it as the first policy. Refuses to overwrite an existing key.
 */
export function initGate(dirIn: string, opts: { policy?: string } = {}): { dir: string; keyid: string } {
  const dir = resolve(dirIn);
  const keyFile = join(dir, GATE_KEY_FILE);
  if (existsSync(keyFile)) throw new UserError(`${keyFile}: already exists; refusing to replace a gate key`);
  const policy = loadPolicy(opts.policy ?? defaultPolicyPath());
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const pair = generateEd25519();
  writeFileSync(keyFile, pair.privatePem, { mode: 0o600, flag: 'wx' });
  writeFileSync(join(dir, GATE_PUB_FILE), pair.publicPem, { mode: 0o644 });
  copyFileSync(policy.path, join(dir, GATE_POLICY_FILE));
  chmodSync(join(dir, GATE_POLICY_FILE), 0o600);
  writeFileAtomic(join(dir, TRUST_FILE), trustTemplate(policy.hash), 0o600);
  const db = new StateDb(join(dir, STATE_DB_FILE));
  try {
    db.addPolicyChange({
      hash: policy.hash,
      version: policy.policy.version,
      principal: '(gate init)',
      envelope: null,
    });
  } finally {
    db.close();
  }
  return { dir, keyid: keyIdOf(loadPublicKey(join(dir, GATE_PUB_FILE))) };
}
