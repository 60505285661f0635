import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadProbeDirs, loadProbeFile } from '../../src/probes/load.ts';
import { parseSealKey, readSealedFile, resolveSealKey, seal, unseal } from '../../src/probes/seal.ts';
import { UserError } from '../../src/util/errors.ts';

const DEV_KEY = resolveSealKey('probes/dev-seal.key')!;
const OTHER = parseSealKey('ab'.repeat(32), 'test key');

describe('sealed held-out sets', () => {
  it('round-trips and records the plaintext hash', () => {
    const plain = Buffer.from('hello held-out');
    const s = seal(plain, OTHER, { id: 'x', version: 1 });
    expect(s.ciphertext).not.toContain('hello');
    expect(unseal(s, OTHER, 'f').toString()).toBe('hello held-out');
  });

  it('opens every shipped held-out set with the demo key, with the recorded hash', () => {
    const { sets, skipped } = loadProbeDirs(['probes'], DEV_KEY);
    expect(skipped).toEqual([]);
    const heldout = sets.filter((s) => s.set.split === 'heldout');
    expect(heldout.map((s) => s.set.family).sort()).toEqual([
      'injection',
      'preferences',
      'reasoning',
      'triggers',
    ]);
    for (const s of heldout) expect(s.hash).toBe(readSealedFile(s.file).plaintextSha256);
  });

  it('a wrong key is a one-line error naming the file and key source, never the key', () => {
    const file = 'probes/triggers/heldout.sealed.json';
    let err: unknown;
    try {
      loadProbeFile(file, OTHER);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UserError);
    const msg = (err as Error).message;
    expect(msg).toBe(`${file}: cannot unseal: wrong key (test key) or tampered file`);
    expect(msg).not.toContain('abab');
  });

  it('a tampered ciphertext is refused', () => {
    const s = seal(Buffer.from('some probes'), OTHER, { id: 'x', version: 1 });
    const bytes = Buffer.from(s.ciphertext, 'base64');
    bytes[0] = bytes[0]! ^ 1;
    expect(() => unseal({ ...s, ciphertext: bytes.toString('base64') }, OTHER, 'f')).toThrow(
      /wrong key .* or tampered file/,
    );
    expect(() => unseal({ ...s, id: 'y' }, OTHER, 'f')).toThrow(/tampered/);
  });

  it('without a key, held-out sets are reported as skipped, not silently dropped', () => {
    const { skipped } = loadProbeDirs(['probes']);
    expect(skipped.map((s) => s.reason)).toEqual([
      'no seal key',
      'no seal key',
      'no seal key',
      'no seal key',
    ]);
    expect(() => loadProbeFile('probes/reasoning/heldout.sealed.json')).toThrow(
      /needs --seal-key-file or PROBATE_SEAL_KEY/,
    );
  });

  it('rejects malformed keys without echoing them', () => {
    expect(() => parseSealKey('secret-but-short', 'PROBATE_SEAL_KEY')).toThrow(
      'PROBATE_SEAL_KEY: expected a 256-bit key as 64 hex digits or base64 (key not shown)',
    );
    expect(
      resolveSealKey(undefined, { PROBATE_SEAL_KEY: Buffer.alloc(32, 7).toString('base64') })?.source,
    ).toBe('PROBATE_SEAL_KEY');
    expect(readFileSync('probes/dev-seal.key', 'utf8')).toMatch(/DEMO KEY/);
  });
});
