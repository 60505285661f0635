import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditPathRequests } from '../../src/bench/audit-path.ts';
import { autocannonRun } from '../../src/bench/load.ts';
import { evalDuration, promptfooRun } from '../../src/bench/promptfoo.ts';
import { runThroughput, type ThroughputResult } from '../../src/bench/throughput.ts';
import { loadProbeDirs } from '../../src/probes/load.ts';
import { type FakeVllm, startFakeVllm } from '../../src/testing/fake-vllm.ts';
import { UserError } from '../../src/util/errors.ts';

describe('promptfoo summary parsing', () => {
  it('reads "Duration:" in h/m/s and gives null without one', () => {
    expect(evalDuration('Duration: 7s (concurrency: 4)')).toBe(7);
    expect(evalDuration('x\nDuration: 1m 5s (concurrency: 16)\n')).toBe(65);
    expect(evalDuration('Duration: 1h 0m 2s')).toBe(3602);
    expect(evalDuration('no summary')).toBeNull();
  });

  it('says promptfoo is not installed, skipped, when it is absent', async () => {
    const saved = process.env.PROBATE_PEERS_DIR;
    process.env.PROBATE_PEERS_DIR = mkdtempSync(join(tmpdir(), 'probate-no-peers-'));
    try {
      const spec = {
        root: 'http://127.0.0.1:9',
        model: 'm',
        concurrency: 1,
        requests: 1,
        maxTokens: 8,
        prompts: ['hi'],
      };
      expect(await promptfooRun(spec, 1)).toMatch(/^promptfoo not installed, skipped/);
    } finally {
      if (saved === undefined) delete process.env.PROBATE_PEERS_DIR;
      else process.env.PROBATE_PEERS_DIR = saved;
    }
  });
});

describe('bench throughput against a zero-latency vLLM-shaped server', () => {
  let fake: FakeVllm;
  let result: ThroughputResult;

  beforeAll(async () => {
    fake = await startFakeVllm({ reasoningField: 'reasoning' });
    result = await runThroughput({
      endpoint: `vllm:${fake.url}#delivered`,
      concurrency: 4,
      requests: 30,
      runs: 2,
      warm: 2,
      sets: loadProbeDirs(['probes']).sets,
      seed: 1,
      noPromptfoo: true,
      autocannonSeconds: 1,
    });
  }, 120_000);

  afterAll(async () => {
    await fake?.close();
  });

  it('measures every contender on every run and never exceeds the concurrency', () => {
    for (const name of [
      'probate_client',
      'probate_audit_path',
      'streamed_raw',
      'autocannon',
      'autocannon_audit_requests',
    ])
      for (const run of result.raw[name]!) {
        expect(typeof run).toBe('object');
        if (typeof run === 'string') continue;
        expect(run.errors).toBe(0);
        expect(run.requests_per_s).toBeGreaterThan(0);
      }
    // Each contender's unrecorded passes are kept, as many as asked for, apart from the recorded runs.
    expect(result.warm).toBe(2);
    for (const rates of Object.values(result.warm_requests_per_s)) expect(rates).toHaveLength(2);
    expect(Object.keys(result.warm_requests_per_s).sort()).toEqual([
      'autocannon',
      'autocannon_audit_requests',
      'probate_audit_path',
      'probate_client',
      'streamed_raw',
    ]);
    expect(fake.stats.peakInFlight).toBeLessThanOrEqual(4);
    // The audit path scores replies: its requests include /tokenize and prompt_logprobs completions.
    expect(fake.requests.some((r) => r.path === '/tokenize')).toBe(true);
    expect(fake.requests.some((r) => r.path === '/v1/completions' && 'prompt_logprobs' in r.body)).toBe(true);
  });

  it("replays the audit path's own requests through autocannon and compares the audit path with it", async () => {
    const before = fake.requests.length;
    const run = await autocannonRun(
      {
        root: fake.url.replace(/\/v1$/, ''),
        model: 'delivered',
        concurrency: 2,
        requests: 1,
        maxTokens: 8,
        prompts: ['hi'],
        autocannonSeconds: 1,
      },
      await auditPathRequests({
        exchanges: 3,
        sets: loadProbeDirs(['probes']).sets,
        seed: 1,
        concurrency: 2,
      }),
    );
    expect(typeof run).toBe('object');
    const sent = fake.requests.slice(before);
    // Every kind of request the audit path sends, not autocannon's one chat request.
    expect(sent.some((r) => r.path === '/tokenize')).toBe(true);
    expect(sent.some((r) => r.path === '/v1/completions' && 'prompt_logprobs' in r.body)).toBe(true);
    // Chats ask for no per-token logprobs: the audit scores replies by teacher forcing instead.
    const chats = sent.filter((r) => r.path === '/v1/chat/completions');
    expect(chats.length).toBeGreaterThan(0);
    expect(chats.every((r) => !('logprobs' in r.body) && !('top_logprobs' in r.body))).toBe(true);
    const r = result.ratios.audit_vs_autocannon_same_requests;
    expect(r.goal).toBe(0.8);
    expect(r.spread!.min).toBeGreaterThan(0);
    expect(r.met).toBe(r.spread!.median >= 0.8);
  });

  it('takes ratios within a run and reports min ≤ median ≤ max against the goals', () => {
    const r = result.ratios.client_vs_autocannon;
    expect(r.goal).toBe(0.9);
    expect(r.spread!.min).toBeLessThanOrEqual(r.spread!.median);
    expect(r.spread!.median).toBeLessThanOrEqual(r.spread!.max);
    expect(r.met).toBe(r.spread!.median >= 0.9);
    expect(result.ratios.probate_vs_promptfoo).toMatchObject({
      spread: null,
      met: null,
      note: 'promptfoo skipped (--no-promptfoo)',
    });
    expect(result.ttft_ms!.p50).toBeGreaterThan(0);
  });

  it('refuses an endpoint autocannon cannot reach with a one-line user error', async () => {
    await expect(
      runThroughput({
        endpoint: 'local:fixtures/organisms/base',
        concurrency: 1,
        requests: 1,
        runs: 1,
        sets: [],
        seed: 1,
      }),
    ).rejects.toThrow(UserError);
  });
});
