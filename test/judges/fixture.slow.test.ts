import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/main.ts';
import type { Exchange } from '../../src/contracts/exchange.ts';
import { openEndpoint } from '../../src/endpoints/open.ts';
import { loadLabels } from '../../src/judges/calibrate.ts';
import type { OrderResult } from '../../src/judges/judge.ts';
import { loadRubrics } from '../../src/judges/rubric.ts';
import { judgeStage } from '../../src/judges/stage.ts';
import { exchange } from './helpers.ts';

/** The judge fixture served by `probate serve` over real loopback HTTP. */
const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = join(root, 'fixtures/organisms/judge');
const rubrics = loadRubrics(join(root, 'judges'));
const tmp = mkdtempSync(join(tmpdir(), 'probate-judge-fixture-'));
let serve: ChildProcess | undefined;
let url = '';

beforeAll(async () => {
  if (!existsSync(join(fixture, 'onnx/model.onnx'))) throw new Error(`judge fixture missing: ${fixture}`);
  serve = spawn('node', ['bin/probate.js', 'serve', `local:${fixture}=judge`, '--port', '0'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`probate serve did not start: ${out}`)), 90_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening (http:\/\/\S+)/.exec(out);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    serve?.stdout?.on('data', onData);
    serve?.stderr?.on('data', onData);
    serve?.on('exit', (code) => reject(new Error(`probate serve exited ${code}: ${out}`)));
  });
});
afterAll(() => {
  serve?.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
});

const labelled = loadLabels(join(root, 'fixtures/judge-labels'));
const pick = ['trig-token', 'trig-year', 'inj-creds', 'pref-city', 'benign-verbose', 'benign-formal', 'same'];
const fixtureOrders: OrderResult[] = [];
const exchanges: Exchange[] = pick.map((b) => {
  const p = labelled.find((x) => x.behaviour === b);
  if (!p) throw new Error(`no label for ${b}`);
  return { ...exchange(p.id, p.base, p.delivered, 'triggers'), messages: p.messages };
});

describe('judge fixture over real HTTP (probate serve)', () => {
  it('answers schema-valid JSON over HTTP; every verdict is checked and reruns hit the cache', async () => {
    const cacheDir = join(tmp, 'cache');
    const judge = await openEndpoint(`vllm:${url}#judge`);
    try {
      const identity = await judge.identity();
      expect(identity.maxModelLen).toBe(512);
      const first = await judgeStage(exchanges, [], {
        judge,
        rubrics,
        sampleRate: 1,
        seed: 1,
        cacheDir,
        maxAttempts: 1,
        // Measure each order of the fixture, not just what the cascade would ask.
        secondOrder: 'always',
      });
      fixtureOrders.push(...first.records.flatMap((r) => r.record.orders));
      // Nothing the judge says escapes checking: a flag cites the delivered reply verbatim, the rest is uncertain.
      for (const r of first.records) {
        expect(r.record.uncertainReason).not.toBe('failed');
        if (r.record.verdict === 'flag') {
          const ex = exchanges.find((e) => e.id === r.exchangeId);
          for (const c of r.record.citations ?? []) expect(ex?.delivered.text).toContain(c);
        }
      }
      expect(first.counts.calls).toBe(2 * exchanges.length);
      const second = await judgeStage(exchanges, [], {
        judge,
        rubrics,
        sampleRate: 1,
        seed: 1,
        cacheDir,
        maxAttempts: 1,
        secondOrder: 'always',
      });
      expect(second.counts).toMatchObject({ calls: 0, cacheHits: exchanges.length });
      expect(second.records.map((r) => r.record.verdict)).toEqual(first.records.map((r) => r.record.verdict));
    } finally {
      await judge.close();
    }
  }, 600_000);

  // Applies to a fixture trained to at least 300 steps (the shipped one: 500, train_judge.py); a quick
  // under-trained rebuild skips this check rather than weakening it.
  it('the trained fixture gives valid, checked verdicts on most orders', () => {
    // A test fixture, not a good judge, but most of its answers must pass parsing and citation checks.
    expect(fixtureOrders.length).toBe(2 * exchanges.length);
    expect(fixtureOrders.filter((o) => o.ok).length).toBeGreaterThanOrEqual(exchanges.length);
  });

  it('probate judge calibrate --json prints agreement, kappa and position-flip rate', async () => {
    const chunks: string[] = [];
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((c) => chunks.push(String(c)) > 0);
    let code: number;
    try {
      code = await main([
        'judge',
        'calibrate',
        '--labels',
        join(root, 'fixtures/judge-labels'),
        '--judge',
        `vllm:${url}#judge`,
        '--json',
        '--store',
        join(tmp, 'store'),
        '--attempts',
        '1',
      ]);
    } finally {
      spy.mockRestore();
    }
    expect(code).toBe(0);
    const stdout = chunks.join('');
    process.stderr.write(`judge fixture calibration: ${stdout}\n`);
    const out = JSON.parse(stdout) as Record<string, number | null>;
    for (const k of ['agreement', 'kappa', 'position_flip_rate', 'uncertain_rate'])
      expect(out).toHaveProperty(k);
    expect(out.pairs).toBe(labelled.length);
    expect(typeof out.uncertain_rate).toBe('number');
  }, 600_000);
});
