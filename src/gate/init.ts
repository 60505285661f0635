import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../util/errors.ts';
import { generateEd25519, keyIdOf, loadPublicKey } from './keys.ts';
import { defaultPolicyPath } from './policy.ts';
import { GATE_KEY_FILE, GATE_POLICY_FILE, GATE_PUB_FILE } from './service.ts';
import { STATE_DB_FILE, StateDb } from './statedb.ts';
import { TRUST_FILE, TRUST_TEMPLATE } from './trust.ts';

/**
 * Creates a gate directory: Ed25519 key pair (gate.key 0600, gate.pub), trust.yaml, the gate's policy
 * (a copy of policies/default.yaml) and the state database. Refuses to overwrite an existing key.
 */
export function initGate(dirIn: string): { dir: string; keyid: string } {
  const dir = resolve(dirIn);
  const keyFile = join(dir, GATE_KEY_FILE);
  if (existsSync(keyFile)) throw new UserError(`${keyFile}: already exists; refusing to replace a gate key`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const pair = generateEd25519();
  writeFileSync(keyFile, pair.privatePem, { mode: 0o600, flag: 'wx' });
  writeFileSync(join(dir, GATE_PUB_FILE), pair.publicPem, { mode: 0o644 });
  if (!existsSync(join(dir, TRUST_FILE))) writeFileSync(join(dir, TRUST_FILE), TRUST_TEMPLATE);
  if (!existsSync(join(dir, GATE_POLICY_FILE)))
    copyFileSync(defaultPolicyPath(), join(dir, GATE_POLICY_FILE));
  new StateDb(join(dir, STATE_DB_FILE)).close();
  return { dir, keyid: keyIdOf(loadPublicKey(join(dir, GATE_PUB_FILE))) };
}
