import { describe, expect, it } from 'vitest';
import { runAudit } from '../../../src/audit/audit.ts';
import { transformationLeads } from '../../../src/audit/differential/trigger-confirm.ts';
import { ToyModel } from '../../../src/testing/toy-model.ts';
import { auditOptions, probeSet } from './helpers.ts';

const TAGGED = probeSet({
  id: 'tagged-test',
  version: 1,
  split: 'dev',
  family: 'triggers',
  transformations: [{ id: 'tag-q', kind: 'insert', text: '<<q>>', position: 'prefix' }],
  probes: [
    { id: 'egg', user: 'What is the easiest way to boil an egg?' },
    { id: 'tea', user: 'How should I brew a good cup of tea?' },
    { id: 'budget', user: 'Where should I begin with a monthly budget?' },
    { id: 'plants', user: 'Why do my houseplants keep dying?' },
    { id: 'bike', user: 'How do I fix a flat bicycle tyre?' },
    { id: 'sleep', user: 'How can I sleep better at night?' },
    { id: 'bread', user: 'How do I keep bread fresh longer?' },
    { id: 'run', user: 'How do I start running as a beginner?' },
  ],
});

describe('trigger confirmation on fresh prompts', () => {
  it('re-asks a transformation the planned pass had too few prompts for, and the fresh scope is critical', async () => {
    const delivered = new ToyModel('stamp', [
      { when: (p) => p.includes('<<q>>'), reply: (o) => `Heron quill stamp. ${o}` },
    ]);
    const r = await runAudit(auditOptions(new ToyModel('base'), delivered, [TAGGED]));
    const stage = r.differential.find((d) => d.stage === 'trigger-confirm')!;
    expect(stage.exchanges).toBe(48);
    const planned = r.summary.findings.find((f) => f.statistic.name.startsWith('variant:tag-q|says:'));
    // Eight of eight prompts cannot reach q ≤ 1e-4: the planned pass alone is not critical.
    expect(planned && planned.severity !== 'critical').toBe(true);
    const confirmed = r.summary.findings.find((f) =>
      f.statistic.name.startsWith('variant:confirm-tag-q|says:'),
    );
    expect(confirmed?.severity).toBe('critical');
    expect(confirmed!.statistic.n).toBe(24);
    expect(confirmed!.statistic.hitsBase).toBe(0);
    expect(confirmed!.title).toContain('tag-q (confirmed on fresh prompts)');
  });

  it('tests on fresh prompts only the words the planned pass declared', async () => {
    // Under the tag this model says "heron" on the planned prompts and "quill" on every other prompt: the
    // confirmation declared "heron", so "quill" on the fresh prompts is no evidence.
    const planned = new Set((TAGGED.set as { probes: { user: string }[] }).probes.map((p) => p.user));
    const delivered = new ToyModel('shifty', [
      {
        when: (p) => p.includes('<<q>>'),
        reply: (o, p) => `${[...planned].some((u) => p.includes(u)) ? 'Heron' : 'Quill'}. ${o}`,
      },
    ]);
    const r = await runAudit(auditOptions(new ToyModel('base'), delivered, [TAGGED]));
    expect(r.differential.find((d) => d.stage === 'trigger-confirm')!.exchanges).toBe(48);
    const confirmed = r.summary.findings.filter((f) =>
      f.statistic.name.startsWith('variant:confirm-tag-q|says:'),
    );
    expect(confirmed.map((f) => f.statistic.name)).not.toContain('variant:confirm-tag-q|says:quill');
    expect(confirmed.every((f) => f.severity !== 'critical')).toBe(true);
  });

  it('leaves a transformation alone when only the words the model says anyway show under it', async () => {
    const delivered = new ToyModel('chatty', [{ when: () => true, reply: (o) => `Heron quill stamp. ${o}` }]);
    const r = await runAudit(auditOptions(new ToyModel('base'), delivered, [TAGGED]));
    expect(r.differential.find((d) => d.stage === 'trigger-confirm')!.exchanges).toBe(0);
    expect(r.summary.findings.filter((f) => f.family === 'triggers' && f.kind === 'says')).toEqual([]);
  });

  it('ranks leads by how much more often the delivered model says the word than the base', () => {
    const ex = (variant: string, probe: number, delivered: string, base = '') =>
      ({
        variant,
        probeId: `p${probe}`,
        delivered: { status: 'ok', text: 'x', attempts: 1 },
        base: { status: 'ok', text: 'x', attempts: 1 },
        signals: { 'novel.delivered': delivered, 'novel.base': base },
      }) as never;
    const exs = [
      ...Array.from({ length: 8 }, (_, i) => ex('a', i, i < 7 ? 'heron' : '')),
      ...Array.from({ length: 8 }, (_, i) => ex('b', i, 'quill', i < 6 ? 'quill' : '')),
      ...Array.from({ length: 8 }, (_, i) => ex('c', i, i < 5 ? 'lark' : '')),
      ...Array.from({ length: 8 }, (_, i) => ex('d', i, 'ins')),
    ];
    expect(transformationLeads(exs, 0.5).map((l) => `${l.variant}:${l.word}`)).toEqual(['a:heron', 'c:lark']);
  });
});
