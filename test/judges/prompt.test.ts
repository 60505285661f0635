import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadLabels } from '../../src/judges/calibrate.ts';
import {
  budgetFor,
  CLIP_MARK,
  clipHead,
  clipMiddle,
  judgeMessages,
  replyText,
  verdictTokenBudget,
} from '../../src/judges/prompt.ts';
import { loadRubrics, rubricById, rubricFor } from '../../src/judges/rubric.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const rubrics = loadRubrics(`${root}judges`);
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('clipping', () => {
  it('keeps short text and clips long text to the byte limit with a marker', () => {
    expect(clipHead('short', 80)).toBe('short');
    const long = 'word '.repeat(40);
    const clipped = clipHead(long, 80);
    expect(bytes(clipped)).toBeLessThanOrEqual(80);
    expect(clipped.endsWith(CLIP_MARK)).toBe(true);
    expect(long.startsWith(clipped.slice(0, -CLIP_MARK.length))).toBe(true);
  });

  it('never splits a multi-byte character and keeps head and tail of a probe', () => {
    const zw = 'one\u200b two\u200b three\u200b '.repeat(10);
    const clipped = clipHead(zw, 41);
    expect(bytes(clipped)).toBeLessThanOrEqual(41);
    expect(clipped).not.toContain('\ufffd');
    const mid = clipMiddle(`START ${'x'.repeat(300)} END`, 40);
    expect(mid.startsWith('START')).toBe(true);
    expect(mid.endsWith('END')).toBe(true);
    expect(mid).toContain(CLIP_MARK);
  });
});

describe('judge prompt', () => {
  it('shows Reply A/B without saying which model is which, compact for small judges', () => {
    const rubric = rubricFor(rubrics, 'triggers');
    const msgs = judgeMessages(rubric, [{ role: 'user', content: 'Hi?' }], 'one', 'two', budgetFor(512));
    expect(msgs[0]?.content).toBe(rubric.prompt);
    expect(msgs[1]?.content).toBe('Probe: Hi?\nReply A: one\nReply B: two');
    const full = judgeMessages(rubric, [{ role: 'user', content: 'Hi?' }], 'one', 'two', budgetFor(32768));
    expect(full[0]?.content).toContain('Does NOT count');
    for (const m of [...msgs, ...full]) expect(m.content.toLowerCase()).not.toMatch(/\b(base|delivered)\b/);
  });

  it('leaves room for the verdict inside a 512-position judge for every labelled pair', () => {
    const budget = budgetFor(512);
    for (const p of loadLabels(`${root}fixtures/judge-labels`)) {
      const msgs = judgeMessages(rubricById(rubrics, p.rubric), p.messages, p.base, p.delivered, budget);
      const promptBound = 2 + msgs.reduce((n, m) => n + bytes(m.content) + 2, 0);
      const maxTokens = verdictTokenBudget(msgs, budget);
      expect(promptBound + maxTokens).toBeLessThanOrEqual(512);
      expect(maxTokens).toBeGreaterThanOrEqual(120);
    }
    expect(verdictTokenBudget([{ role: 'user', content: 'x' }], budgetFor(undefined))).toBe(400);
  });

  it('renders reasoning inline so covert reasoning is visible', () => {
    expect(replyText({ text: 'The answer is 4.', reasoning: '2 plus 2' })).toBe(
      '<think>2 plus 2</think>The answer is 4.',
    );
    expect(replyText({ text: 'plain' })).toBe('plain');
  });

  it('matches the fixture corpus renderer (judge_corpus.py) byte for byte', () => {
    const pairs = loadLabels(`${root}fixtures/judge-labels`);
    const script = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(`${root}fixtures/organisms/factory`)})`,
      'from judge_corpus import user_turn',
      'pairs = json.load(sys.stdin)',
      'print(json.dumps([user_turn(p["messages"], p["base"], p["delivered"]) for p in pairs]))',
    ].join('\n');
    const out = execFileSync('python3', ['-c', script], { input: JSON.stringify(pairs), encoding: 'utf8' });
    const py = JSON.parse(out) as string[];
    const ts = pairs.map(
      (p) =>
        judgeMessages(rubricById(rubrics, p.rubric), p.messages, p.base, p.delivered, budgetFor(512))[1]
          ?.content,
    );
    expect(ts).toEqual(py);
  });
});

describe('rubrics', () => {
  it('loads one rubric per family plus general, each content-hashed', () => {
    expect([...rubrics.byId.keys()].sort()).toEqual([
      'general',
      'injection',
      'preferences',
      'reasoning',
      'triggers',
    ]);
    for (const r of rubrics.byId.values()) {
      expect(r.hash).toMatch(/^[0-9a-f]{64}$/);
      expect(r.not_counted.length).toBeGreaterThan(0);
      expect(bytes(r.prompt)).toBeLessThanOrEqual(90);
    }
    expect(rubricFor(rubrics, 'unknown-family').id).toBe('general');
  });
});
