import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { UserError } from '../util/errors.ts';
import { checkFileSize, FILE_LIMITS } from '../util/file-size.ts';
import { sha256Hex } from '../util/hash.ts';
import { type SealedFile, SealedFileSchema } from './schema.ts';

/**
 * Held-out probe splits are stored sealed with AES-256-GCM so they are not in any training crawl in plain
 * text. The key comes from a file or PROBATE_SEAL_KEY (64 hex digits or base64 of 32 bytes). The key never
 * appears in an error, a log or the ledger: messages name only its source.
 */
export const SEAL_KEY_ENV = 'PROBATE_SEAL_KEY';

export interface SealKey {
  key: Buffer;
  /** Where the key came from ('--seal-key-file F' or the env variable): safe to print. */
  source: string;
}

export function parseSealKey(text: string, source: string): SealKey {
  const t = text.trim();
  let key: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(t)) key = Buffer.from(t, 'hex');
  else if (/^[A-Za-z0-9+/]{43}=?$/.test(t)) {
    const b = Buffer.from(t, 'base64');
    if (b.length === 32) key = b;
  }
  if (!key)
    throw new UserError(`${source}: expected a 256-bit key as 64 hex digits or base64 (key not shown)`);
  return { key, source };
}

/** Key from `--seal-key-file`, else from the environment; undefined when neither is given. */
export function resolveSealKey(
  keyFile: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): SealKey | undefined {
  if (keyFile) {
    let text: string;
    try {
      text = readFileSync(keyFile, 'utf8');
    } catch (err) {
      throw new UserError(`--seal-key-file ${keyFile}: cannot read (${(err as NodeJS.ErrnoException).code})`);
    }
    // Key files may carry comment lines (the demo key labels itself).
    const line = text.split('\n').find((l) => l.trim() && !l.trim().startsWith('#')) ?? '';
    return parseSealKey(line, `--seal-key-file ${keyFile}`);
  }
  const fromEnv = env[SEAL_KEY_ENV];
  if (fromEnv) return parseSealKey(fromEnv, SEAL_KEY_ENV);
  return undefined;
}

export function seal(plaintext: Buffer, key: SealKey, facts: { id: string; version: number }): SealedFile {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, nonce);
  // The public facts are authenticated too: a sealed file cannot be renamed to another set.
  cipher.setAAD(Buffer.from(`${facts.id}@${facts.version}`));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return {
    format: 'probate.sealed/v1',
    cipher: 'aes-256-gcm',
    nonce: nonce.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
    ciphertext: ciphertext.toString('base64'),
    plaintextSha256: sha256Hex(plaintext),
    id: facts.id,
    version: facts.version,
  };
}

/** Opens a sealed file; a wrong key or a tampered file is a one-line UserError naming the file. */
export function unseal(sealed: SealedFile, key: SealKey, where: string): Buffer {
  let plaintext: Buffer;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(sealed.nonce, 'base64'));
    decipher.setAAD(Buffer.from(`${sealed.id}@${sealed.version}`));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    plaintext = Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
  } catch {
    throw new UserError(`${where}: cannot unseal: wrong key (${key.source}) or tampered file`);
  }
  if (sha256Hex(plaintext) !== sealed.plaintextSha256)
    throw new UserError(`${where}: plaintextSha256: unsealed content does not match its recorded hash`);
  return plaintext;
}

export function readSealedFile(file: string): SealedFile {
  checkFileSize(file, FILE_LIMITS.probeSet, 'a sealed probe set');
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`${file}: ${code ? `cannot read (${code})` : 'not valid JSON'}`);
  }
  const parsed = SealedFileSchema.safeParse(data);
  if (!parsed.success) {
    const i = parsed.error.issues[0];
    throw new UserError(`${file}: ${i?.path.join('.') || '(root)'}: ${i?.message ?? 'invalid'}`);
  }
  return parsed.data;
}
