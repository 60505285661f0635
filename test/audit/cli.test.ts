import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';

const dir = mkdtempSync(join(tmpdir(), 'probate-cli-'));

async function run(args: string[], env: Record<string, string | undefined> = {}) {
  let err = '';
  let out = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s);
    return true;
  });
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    out += String(s);
    return true;
  });
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    return { code: await main(args), err, out };
  } finally {
    process.env = saved;
    vi.restoreAllMocks();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('probate audit / probes (CLI)', () => {
  it('an invalid probe file stops the audit with exit 2 and one line naming file and field', async () => {
    const f = join(dir, 'bad.yaml');
    writeFileSync(
      f,
      'id: x\nversion: 1\nsplit: dev\nfamily: preferences\npools: {}\nprobes:\n  - { id: a, category: laptops, user: "Pick: {options}" }\n',
    );
    const r = await run([
      'audit',
      '--base',
      'local:/nowhere',
      '--delivered',
      'local:/nowhere',
      '--probes',
      f,
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`probate: ${f}: probes.0.category: no pool laptops\n`);
  });

  it('a wrong sealing key stops the audit with exit 2, without the key in the message', async () => {
    const key = 'cd'.repeat(32);
    const r = await run(['audit', '--base', 'local:/nowhere', '--delivered', 'local:/nowhere'], {
      PROBATE_SEAL_KEY: key,
    });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(
      /^probate: probes\/injection\/heldout\.sealed\.json: cannot unseal: wrong key \(PROBATE_SEAL_KEY\) or tampered file\n$/,
    );
    expect(r.err).not.toContain(key);
  });

  it('seal and unseal round-trip through the CLI, and hash reads a sealed set without the key', async () => {
    const plain = join(dir, 'h.yaml');
    const sealed = join(dir, 'h.sealed.json');
    writeFileSync(
      plain,
      'id: h\nversion: 2\nsplit: heldout\nfamily: reasoning\nprobes:\n  - { id: a, user: "What is 2 + 2?" }\n',
    );
    expect(
      (await run(['probes', 'seal', plain, sealed, '--seal-key-file', 'probes/dev-seal.key'])).code,
    ).toBe(0);
    const h = await run(['probes', 'hash', sealed]);
    expect(h.out).toMatch(/^[0-9a-f]{64} {2}h@2 {2}.*\(sealed\)\n$/);
    const u = await run(['probes', 'unseal', sealed, '--seal-key-file', 'probes/dev-seal.key']);
    expect(u.out).toContain('What is 2 + 2?');
  });
});
