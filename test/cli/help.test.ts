import { afterEach, describe, expect, it, vi } from 'vitest';
import { exampledCommands } from '../../src/cli/examples.ts';
import { main } from '../../src/cli/main.ts';
import { commands } from '../../src/cli/registry.ts';

/** Runs the CLI in-process and captures what it prints. */
async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => {
    out += `${a.join(' ')}\n`;
  });
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => {
    err += `${a.join(' ')}\n`;
  });
  const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    err += String(chunk);
    return true;
  });
  try {
    const code = await main(args);
    return { code, out, err };
  } finally {
    log.mockRestore();
    error.mockRestore();
    write.mockRestore();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('probate CLI', () => {
  it('lists every registered command in --help', async () => {
    const { code, out } = await run(['--help']);
    expect(code).toBe(0);
    for (const c of commands) {
      const name = String(c.command).split(' ')[0]!;
      expect(out).toContain(`probate ${name}`);
    }
  });

  it.each(exampledCommands)('shows an example in `%s --help`', async (path) => {
    const { code, out } = await run([...path.split(' '), '--help']);
    expect(code).toBe(0);
    expect(out).toMatch(/Examples:\n\s+probate /);
  });

  it('gives every top-level command an example', () => {
    const names = commands.map((c) => String(c.command).split(' ')[0]!);
    expect(names.filter((n) => !exampledCommands.includes(n))).toEqual([]);
  });

  it('prints the version', async () => {
    const { code, out } = await run(['--version']);
    expect(code).toBe(0);
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('rejects an unknown command and an unknown option with one line and exit 2', async () => {
    for (const args of [['bogus'], ['ledger', 'verify', 'x', '--nope']]) {
      const { code, err } = await run(args);
      expect(code).toBe(2);
      const lines = err.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^probate: Unknown argument/);
    }
  });
});
