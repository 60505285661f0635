import { type KeyObject, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { z } from 'zod';
import { writeFileAtomic } from '../ledger/manifest.ts';
import { UserError } from '../util/errors.ts';
import { sha256Hex } from '../util/hash.ts';
import { readValidated } from '../util/zodfile.ts';
import { keyIdOf, loadPublicKey, publicKeyFromPem, publicPem } from './keys.ts';

export const TRUST_FILE = 'trust.yaml';

const NamedKey = z.strictObject({
  name: z.string().regex(/^[A-Za-z0-9._@-]+$/, 'expected a name of letters, digits, . _ @ -'),
  pub: z.string().includes('PUBLIC KEY', { message: 'expected a PEM public key' }),
});

export const SCOPES = ['submit', 'release', 'override'] as const;
export type Scope = (typeof SCOPES)[number];

/** A caller of `gate serve`: a bearer token (only its sha256 is stored) and what it may do. */
const Caller = z.strictObject({
  name: NamedKey.shape.name,
  tokenSha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected the sha256 hex of the token'),
  scopes: z.array(z.enum(SCOPES)).min(1),
});
export type CallerEntry = z.infer<typeof Caller>;

/**
 * trust.yaml: the pinned hash of the gate's policy, who may sign overrides and policy changes, whose keys
 * may never do so (auditor, judge, gate), and who may call `gate serve` with which scopes.
 */
export const TrustSchema = z.strictObject({
  version: z.literal(1),
  /** sha256 of GATE/policy.yaml: the gate decides, verifies and releases only under this policy. */
  policy: z.strictObject({ sha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected a sha256 hex digest') }),
  principals: z
    .array(NamedKey)
    .nullable()
    .transform((v) => v ?? []),
  forbidden: z
    .array(NamedKey)
    .nullable()
    .transform((v) => v ?? []),
  callers: z
    .array(Caller)
    .nullable()
    .optional()
    .transform((v) => v ?? []),
});

export interface TrustedKey {
  name: string;
  key: KeyObject;
  keyid: string;
}

export interface Trust {
  /** sha256 of the gate's pinned policy file. */
  policySha256: string;
  callers: CallerEntry[];
  principals: TrustedKey[];
  /** keyids that can never be principals: the gate's own key plus trust.yaml `forbidden`. */
  forbidden: Set<string>;
}

export const trustTemplate = (policySha256: string): string => `# probate gate trust file.
version: 1
# The gate's policy (policy.yaml) is pinned by its sha256. It changes only by a principal's signed act:
#   probate gate set-policy GATE_DIR --policy FILE --principal NAME --key KEY --reason TEXT
policy:
  sha256: ${policySha256}
# principals: people who may sign overrides and policy changes. They must be outside the auditor's trust
# domain: the gate's own key and any key under 'forbidden' (auditor, judge, CI keys) are refused even if
# listed here. Add one with:  probate gate add-principal GATE_DIR --name alice --pub alice.pub
principals: []
# forbidden: keys that may never sign overrides (e.g. the auditor's or judge's). Same shape as principals.
forbidden: []
# callers: who may call 'probate gate serve' (bearer tokens; only their sha256 is stored) and what they
# may do: submit (decide), release (release, reconcile), override. Add one with:
#   probate gate add-caller GATE_DIR --name ci --scopes submit
callers: []
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
  return {
    policySha256: raw.policy.sha256,
    callers: raw.callers,
    principals: raw.principals.map((k, i) => toKey(k, i, 'principals')),
    forbidden,
  };
}

/** Rewrites one top-level key of trust.yaml, keeping its comments (atomic). */
export function updateTrust(gateDir: string, key: 'policy' | 'callers', value: unknown): void {
  const file = join(gateDir, TRUST_FILE);
  const doc = YAML.parseDocument(readFileSync(file, 'utf8'));
  const node = doc.createNode(value);
  if (YAML.isCollection(node)) node.flow = false;
  doc.set(key, node);
  writeFileAtomic(file, doc.toString(), 0o600);
}

/** Adds a `gate serve` caller: returns the bearer token (shown once); trust.yaml keeps only its sha256. */
export function addCaller(
  gateDir: string,
  gatePub: KeyObject,
  name: string,
  scopes: ReadonlyArray<string>,
): { name: string; token: string; scopes: Scope[] } {
  if (!NamedKey.shape.name.safeParse(name).success)
    throw new UserError(`--name: '${name}' must be letters, digits, . _ @ -`);
  const bad = scopes.find((s) => !(SCOPES as ReadonlyArray<string>).includes(s));
  if (bad !== undefined || scopes.length === 0)
    throw new UserError(`--scopes: expected one or more of ${SCOPES.join(', ')}`);
  const trust = loadTrust(gateDir, gatePub);
  if (trust.callers.some((c) => c.name === name))
    throw new UserError(`${join(gateDir, TRUST_FILE)}: callers: '${name}' already exists`);
  const token = `pgt_${randomBytes(24).toString('base64url')}`;
  const entry = { name, tokenSha256: sha256Hex(token), scopes: [...new Set(scopes)] as Scope[] };
  updateTrust(gateDir, 'callers', [...trust.callers, entry]);
  return { name, token, scopes: entry.scopes };
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
  writeFileAtomic(file, doc.toString(), 0o600);
  return { name, key, keyid };
}
