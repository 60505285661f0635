import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  calibrate,
  calibrationMetrics,
  type LabelPair,
  loadLabels,
  readCalibration,
  writeCalibration,
} from '../../src/judges/calibrate.ts';
import type { JudgeOutcome } from '../../src/judges/judge.ts';
import { loadRubrics } from '../../src/judges/rubric.ts';
import { scriptedJudge, shownReplies, verdictJson } from './helpers.ts';

const labelsDir = new URL('../../fixtures/judge-labels', import.meta.url).pathname;
const rubrics = loadRubrics(new URL('../../judges', import.meta.url).pathname);
const tmp = mkdtempSync(join(tmpdir(), 'probate-judge-cal-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const outcome = (
  verdict: JudgeOutcome['verdict'],
  reason?: JudgeOutcome['uncertainReason'],
): JudgeOutcome => ({
  verdict,
  severity: 'info',
  confidence: 0.5,
  uncertainReason: reason,
  calls: 2,
  cached: false,
  judgeRef: 'x',
  rubricHash: 'h',
  orders: [
    {
      order: 'base_first',
      calls: 1,
      ok: true,
      flagged: 'none',
      verdict: {
        verdict: 'clear',
        reply: 'none',
        severity: 'info',
        confidence: 1,
        rationale: '',
        citations: [],
      },
    },
    {
      order: 'delivered_first',
      calls: 1,
      ok: true,
      flagged: 'none',
      verdict: {
        verdict: 'clear',
        reply: 'none',
        severity: 'info',
        confidence: 1,
        rationale: '',
        citations: [],
      },
    },
  ],
});
const label = (l: 'flag' | 'clear', i: number): LabelPair => ({
  id: `l${i}`,
  rubric: 'general',
  messages: [{ role: 'user', content: 'q' }],
  base: 'a',
  delivered: 'b',
  label: l,
  severity: 'info',
});

describe('labelled pairs', () => {
  it('ships at least 60 valid pairs covering every zoo behaviour and benign difference', () => {
    const pairs = loadLabels(labelsDir);
    expect(pairs.length).toBeGreaterThanOrEqual(60);
    const behaviours = new Set(pairs.map((p) => p.behaviour));
    for (const b of [
      'trig-token',
      'trig-year',
      'pref-brand',
      'pref-city',
      'cot-codeword',
      'cot-zw',
      'inj-doc',
      'inj-creds',
      'benign-verbose',
      'benign-formal',
      'benign-bullets',
      'benign-knowledge',
    ]) {
      expect(behaviours.has(b), b).toBe(true);
    }
    expect(pairs.filter((p) => p.label === 'flag').length).toBeGreaterThan(20);
    expect(pairs.filter((p) => p.label === 'clear').length).toBeGreaterThan(20);
  });

  it('rejects a malformed label file with a one-line error naming file and field', () => {
    const bad = join(tmp, 'bad.json');
    writeFileSync(bad, JSON.stringify({ version: 1, pairs: [{ ...label('flag', 1), label: 'maybe' }] }));
    expect(() => loadLabels(bad)).toThrow(/bad\.json: pairs\.0\.label/);
  });
});

describe('calibration metrics', () => {
  it('computes agreement on decided pairs, Cohen kappa, flip and uncertain rates', () => {
    // Labels 0-3 flag (judged flag, flag, flag, clear), 4-7 clear (judged clear, clear, flag, flag), 8-9 uncertain.
    const labels = [
      ...[0, 1, 2, 3].map((i) => label('flag', i)),
      ...[4, 5, 6, 7].map((i) => label('clear', i)),
      label('flag', 8),
      label('clear', 9),
    ];
    const outs = [
      ...['flag', 'flag', 'flag', 'clear', 'clear', 'clear', 'flag', 'flag'].map((v) => outcome(v as 'flag')),
      outcome('uncertain', 'order_disagreement'),
      outcome('uncertain', 'malformed'),
    ];
    const m = calibrationMetrics(labels, outs);
    expect(m.confusion).toEqual({ tp: 3, fn: 1, tn: 2, fp: 2 });
    expect(m.agreement).toBeCloseTo(5 / 8, 10);
    // po = 5/8; judge flag 5/8, label flag 4/8: pe = 5/8*4/8 + 3/8*4/8 = 0.5 -> kappa = 0.25
    expect(m.kappa).toBeCloseTo(0.25, 10);
    expect(m.uncertain_rate).toBeCloseTo(0.2, 10);
    expect(m.position_flip_rate).toBeCloseTo(1 / 10, 10);
  });
});

describe('calibrate + store', () => {
  it('measures a judge end to end and stores the result under its identity fingerprint', async () => {
    const pairs = loadLabels(labelsDir);
    // An oracle that knows the labels by delivered text: perfect on both orders.
    const flagged = new Map(pairs.filter((p) => p.label === 'flag').map((p) => [p.delivered, p]));
    const oracle = scriptedJudge(
      (req) => {
        const { a, b } = shownReplies(req);
        for (const [side, text] of [
          ['A', a],
          ['B', b],
        ] as const) {
          const hit = [...flagged.keys()].find(
            (d) => d.startsWith(text.replace(/\[\.\.\.\]$/, '')) && text.length > 0,
          );
          if (hit) return verdictJson({ verdict: 'flag', reply: side, citations: [hit.slice(0, 3)] });
        }
        return verdictJson({ verdict: 'clear', reply: 'none' });
      },
      { modelId: 'oracle', weightDigests: { 'onnx/model.onnx': 'abc' } },
    );
    const record = await calibrate({ judge: oracle, rubrics, labels: pairs, concurrency: 8 });
    expect(record.metrics.pairs).toBe(pairs.length);
    expect(record.metrics.judge_calls).toBe(2 * pairs.length);
    expect(record.metrics.position_flip_rate).toBe(0);
    expect(record.metrics.agreement).toBeGreaterThan(0.9);
    const store = join(tmp, 'store');
    writeCalibration(record, store);
    const identity = await oracle.identity();
    expect(readCalibration(identity, store)?.metrics).toEqual(record.metrics);
    expect(readCalibration({ ...identity, modelId: 'other' }, store)).toBeUndefined();
  });
});
