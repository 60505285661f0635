import type { KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { writeFileAtomic } from '../ledger/manifest.ts';
import { UserError } from '../util/errors.ts';
import { readValidated } from '../util/zodfile.ts';
import { keyIdOf, loadPublicKey, publicKeyFromPem, publicPem } from './keys.ts';

export const TRUST_FILE = 'trust.yaml';

const NamedKey = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9._@-]+$/, 'expected a name of letters, digits, . _ @ -'),
  pub: z.string().includes('PUBLIC KEY', { message: 'expected a PEM public key' }),
});

/** trust.yaml: who may sign overrides, and whose keys may never do so (auditor, judge, gate). */
export const TrustSchema = z.strictObject({
  version: z.literal(1),
  principals: z
    .array(NamedKey)
    .nullable()
    .transform((v) => v ?? []),
  forbidden: z
    .array(NamedKey)
    .nullable()
    .transform((v) => v ?? []),
});

export interface TrustedKey {
  name: string;
  key: KeyObject;
  keyid: string;
}

export interface Trust {
  principals: TrustedKey[];
  /** keyids that can never be principals: the gate's own key plus trust.yaml `forbidden`. */
  forbidden: Set<string>;
}

export const TRUST_TEMPLATE = `# probate gate trust file.
# principals: people who may sign overrides. They must be outside the auditor's trust domain: the gate's
# own key and any key under 'forbidden' (auditor, judge, CI keys) are refused even if listed here.
# Add one with:  probate gate add-principal GATE_DIR --name alice --pub alice.pub
version: 1
principals: []
# forbidden: keys that may never sign overrides (e.g. the auditor's or judge's). Same shape as principals.
forbidden: []
`;

export function loadTrust(gateDir: string, gatePub: KeyObject): Trust {
  const file = join(gateDir, TRUST_FILE);
  const raw = readValidated(file, TrustSchema);
  const toKey = (k: z.infer<typeof NamedKey>, i: number, list: string): TrustedKey => {
    const key = publicKeyFromPem(k.pub, `${file}: ${list}.${i}.pub`);
    return { name: k.name, key, keyid: keyIdOf(key) };
  };
  const forbidden = new Set([
    keyIdOf(gatePub),
    ...raw.forbidden.map((k, i) => toKey(k, i, 'forbidden').keyid),
  ]);
  return { principals: raw.principals.map((k, i) => toKey(k, i, 'principals')), forbidden };
}

/** Adds a principal to trust.yaml, keeping its comments. Refuses the gate's key and forbidden keys. */
export function addPrincipal(gateDir: string, gatePub: KeyObject, name: string, pubFile: string): TrustedKey {
  const file = join(gateDir, TRUST_FILE);
  if (!existsSync(file)) throw new UserError(`${file}: missing (run probate gate init first)`);
  if (!NamedKey.shape.name.safeParse(name).success)
    throw new UserError(`--name: '${name}' must be letters, digits, . _ @ -`);
  const trust = loadTrust(gateDir, gatePub);
  const key = loadPublicKey(pubFile);
  const keyid = keyIdOf(key);
  if (trust.forbidden.has(keyid))
    throw new UserError(
      `${pubFile}: this key is the gate's own or listed as forbidden; it cannot be a principal`,
    );
  if (trust.principals.some((p) => p.name === name))
    throw new UserError(`${file}: principals: '${name}' already exists`);
  if (trust.principals.some((p) => p.keyid === keyid))
    throw new UserError(`${pubFile}: this key already belongs to a principal`);
  const doc = YAML.parseDocument(readFileSync(file, 'utf8'));
  const list = doc.get('principals');
  const entry = doc.createNode({ name, pub: publicPem(key) });
  if (YAML.isSeq(list)) {
    list.flow = false;
    list.add(entry);
  } else doc.set('principals', doc.createNode([{ name, pub: publicPem(key) }]));
  writeFileAtomic(file, doc.toString());
  return { name, key, keyid };
}
