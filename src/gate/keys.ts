import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { UserError } from '../util/errors.ts';
import { sha256Hex } from '../util/hash.ts';

export interface PemKeyPair {
  privatePem: string;
  publicPem: string;
}

export function generateEd25519(): PemKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** keyid = sha256 (hex) of the public key's DER SubjectPublicKeyInfo. */
export function keyIdOf(pub: KeyObject): string {
  return sha256Hex(pub.export({ type: 'spki', format: 'der' }));
}

/**
 * Refuses a file or directory that others can read or write (mode & 077): a signing key must be 0600 and
 * the gate directory 0700. The error names the `chmod` that fixes it.
 */
export function requirePrivateMode(path: string, what: 'key' | 'dir'): void {
  const mode = statSync(path).mode & 0o777;
  if ((mode & 0o077) === 0) return;
  const want = what === 'key' ? '600' : '700';
  throw new UserError(
    `${path}: mode ${mode.toString(8).padStart(4, '0')} lets other users ${what === 'key' ? 'read the signing key' : 'into the gate directory'}; run: chmod ${want} ${path}`,
  );
}

/** Reads an Ed25519 private key (PEM), refusing one others can read. Errors name the file, never its content. */
export function loadPrivateKey(file: string): KeyObject {
  if (!existsSync(file)) throw new UserError(`${file}: no such key file`);
  requirePrivateMode(file, 'key');
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(file));
  } catch {
    throw new UserError(`${file}: not a PEM private key`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new UserError(`${file}: expected an Ed25519 private key`);
  return key;
}

export function publicKeyFromPem(pem: string, where: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new UserError(`${where}: not a PEM public key`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new UserError(`${where}: expected an Ed25519 public key`);
  // A private PEM given where a public key is expected yields its public half; never keep the private part.
  return createPublicKey(key.export({ type: 'spki', format: 'pem' }));
}

export function loadPublicKey(file: string): KeyObject {
  if (!existsSync(file)) throw new UserError(`${file}: no such key file`);
  return publicKeyFromPem(readFileSync(file, 'utf8'), file);
}

export function publicPem(pub: KeyObject): string {
  return pub.export({ type: 'spki', format: 'pem' }).toString();
}
