import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
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

/** Reads an Ed25519 private key (PEM). Errors name the file, never its content. */
export function loadPrivateKey(file: string): KeyObject {
  if (!existsSync(file)) throw new UserError(`${file}: no such key file`);
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
