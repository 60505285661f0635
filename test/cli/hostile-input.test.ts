import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { type HostileServer, startHostileServer } from '../helpers/hostile-server.ts';
import { closedUrl, writeHostileFixtures } from './hostile-fixtures.ts';
import { HOSTILE_CASES, type HostileCase } from './hostile-table.ts';

let T = '';
let good: HostileServer;
let closed = '';
let n = 0;

beforeAll(async () => {
  T = mkdtempSync(join(tmpdir(), 'probate-hostile-'));
  writeHostileFixtures(T);
  good = await startHostileServer();
  closed = await closedUrl();
}, 60_000);
afterAll(async () => {
  await good?.close();
});

/**
 * Every file under `dir` with its size: the "nothing half-written" snapshot. SQLite's shared-memory index
 * and an empty write-ahead log (made by any reader of a WAL database) are not output.
 */
function snapshot(dir: string): string[] {
  if (!existsSync(dir)) return ['(absent)'];
  if (!statSync(dir).isDirectory()) return [`file ${statSync(dir).size}`];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => !f.endsWith('-shm') && !(f.endsWith('-wal') && statSync(join(dir, f)).size === 0))
    .sort()
    .map((f) => {
      const s = statSync(join(dir, f));
      return `${f} ${s.isDirectory() ? 'dir' : s.size}`;
    });
}

/** Runs the CLI's entry function (the one bin/probate.js calls) in-process, capturing its output. */
async function runCli(args: string[], env: Record<string, string> = {}) {
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
  // Backoff delays of retried failures become 0 (Math.random() × ceiling); the attempts still happen.
  vi.spyOn(Math, 'random').mockReturnValue(0);
  const saved = { ...process.env };
  Object.assign(process.env, env);
  try {
    return { code: await main(args), err, out };
  } finally {
    process.env = saved;
    vi.restoreAllMocks();
  }
}

async function check(c: HostileCase): Promise<void> {
  const server = c.server ? await startHostileServer(c.server) : undefined;
  const out = join(T, `out-${n++}`);
  const fill = (a: string) =>
    a
      .replaceAll('{S}', server?.url ?? 'http://127.0.0.1:9/v1')
      .replaceAll('{G}', good.url)
      .replaceAll('{T}', T)
      .replaceAll('{OUT}', out)
      .replaceAll('{P}', join(T, 'p.yaml'))
      .replaceAll('{CLOSED}', closed);
  const watched = (c.unchanged ?? []).map((d) => join(T, d));
  const before = watched.map(snapshot);
  try {
    const r = await runCli(c.args.map(fill), c.env);
    const lines = r.err.split('\n').filter((l) => l !== '');
    expect({ code: r.code, lines }).toMatchObject({
      code: c.code,
      lines: [expect.stringMatching(/^probate: /)],
    });
    expect(lines[0]!.slice('probate: '.length)).toMatch(c.line);
    expect(r.err).not.toMatch(/internal error|\n\s+at |Error: |\.ts:\d+/);
    expect(existsSync(out)).toBe(false);
    expect(watched.map(snapshot)).toEqual(before);
  } finally {
    await server?.close();
  }
}

describe('hostile input: one line, the right exit code, no stack, nothing half-written', () => {
  it('covers at least 150 cases across every input surface', () => {
    expect(HOSTILE_CASES.length).toBeGreaterThanOrEqual(150);
    expect(new Set(HOSTILE_CASES.map((c) => c.surface)).size).toBeGreaterThanOrEqual(15);
  });
  for (const c of HOSTILE_CASES) it(`${c.surface}: ${c.name}`, () => check(c), 20_000);
});
