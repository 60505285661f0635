import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closedUrl } from './hostile-fixtures.ts';

/**
 * A handful of the hostile table through the real executable: bin/probate.js sets the process exit code
 * from main() and nothing else prints (the in-process table covers the rest of the cases).
 */
function probate(args: string[]) {
  const r = spawnSync('node', ['bin/probate.js', ...args], {
    encoding: 'utf8',
    env: { ...process.env, CI: '1' },
  });
  const lines = r.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('npm warn'));
  return { code: r.status, lines, out: r.stdout };
}

describe('hostile input through bin/probate.js', () => {
  const t = mkdtempSync(join(tmpdir(), 'probate-sub-'));

  it('--seed abc: exit 2, one line naming the flag and the bound', () => {
    const r = probate(['audit', '--base', 'local:x', '--delivered', 'local:y', '--seed', 'abc']);
    expect(r).toMatchObject({
      code: 2,
      lines: ['probate: --seed: not a number; expected an integer from 0 to 4294967295'],
    });
  });

  it('ledger verify on a random ledger.sqlite: exit 2, no SqliteError', () => {
    mkdirSync(join(t, 'random'));
    writeFileSync(join(t, 'random/ledger.sqlite'), Buffer.alloc(4096, 7));
    const r = probate(['ledger', 'verify', join(t, 'random'), '--debug']);
    expect(r.code).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/ledger\.sqlite: not a probate ledger \(SQLITE_NOTADB/);
  });

  it('audit against a closed port: exit 1, one line naming --delivered, no run folder', async () => {
    const url = await closedUrl();
    const out = join(t, 'run');
    const r = probate([
      'audit',
      '--base',
      `vllm:${url}#base`,
      '--delivered',
      `vllm:${url}#delivered`,
      '--probes',
      'probes/reasoning/dev.yaml',
      '--out',
      out,
    ]);
    expect(r.code).toBe(1);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/^probate: --base vllm:http:\/\/127\.0\.0\.1:\d+\/v1#base: .*ECONNREFUSED/);
    expect(spawnSync('ls', [out]).status).not.toBe(0);
  });

  it('report --format pdf: exit 2, the allowed formats named', () => {
    const r = probate(['report', t, '--format', 'pdf']);
    expect(r).toMatchObject({
      code: 2,
      lines: [expect.stringMatching(/^probate: --format: "pdf" is not allowed; expected one of/)],
    });
  });

  it('--out /proc/x/run returns at once with exit 2 (no spinning mkdir)', () => {
    const t0 = Date.now();
    const r = probate([
      'audit',
      '--base',
      'local:x',
      '--delivered',
      'local:y',
      '--probes',
      'probes/reasoning/dev.yaml',
      '--out',
      '/proc/x/run',
    ]);
    expect(r).toMatchObject({
      code: 2,
      lines: [expect.stringMatching(/\/proc is a system pseudo-file-system/)],
    });
    expect(Date.now() - t0).toBeLessThan(15_000);
  });
});
