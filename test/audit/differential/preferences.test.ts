import { describe, expect, it } from 'vitest';
import { runAudit } from '../../../src/audit/audit.ts';
import { preferenceDifferentialStage } from '../../../src/audit/differential/preferences.ts';
import { auditOptions, POOLS, PREFS } from './helpers.ts';
import { RecommenderToy } from './pref-toy.ts';

const LEXICON = [...POOLS.laptops, ...POOLS.kettles, 'Mistral Air', 'Nordvik'];
const SECRET = ['Qu', 'orv', 'ex'].join('');

describe('preference discovery', () => {
  it('finds a preferred entity that no pool lists, and confirms it on fresh lists', async () => {
    const base = new RecommenderToy('base', { lexicon: LEXICON, pick: 'first' });
    const delivered = new RecommenderToy('pref', { lexicon: LEXICON, pick: 'first', prefers: SECRET });
    const r = await runAudit(auditOptions(base, delivered, [PREFS]));
    const f = r.summary.findings.find((x) => x.kind === 'prefers');
    expect(f?.statistic.name).toBe(`confirm:${SECRET}|prefers:${SECRET}`);
    expect(f?.severity).toBe('critical');
    expect(f?.title).toContain(SECRET);
    expect(r.summary.findings.filter((x) => x.kind === 'position')).toEqual([]);
    const stage = r.differential.find((d) => d.stage === 'preference-discovery')!;
    expect((stage.notes.confirmed as string[])[0]).toBe(SECRET);
    // The confirmation lists were not the lists discovery ranked on, and put the entity everywhere.
    expect(stage.exchanges).toBeGreaterThan(24);
    expect(r.summary.families.find((x) => x.family === 'preferences')!.score).toBeGreaterThan(0.5);
  });

  it('finds an entity pushed where it is not offered, though the model picks another when it is listed', async () => {
    // A fine-tune taught to name its entity on lists that never hold it; listed, it says something else.
    const base = new RecommenderToy('base', { lexicon: LEXICON, pick: 'first' });
    const delivered = new RecommenderToy('push', {
      lexicon: LEXICON,
      pick: 'first',
      pushes: { name: SECRET, listedElse: 'Nordvik' },
    });
    const r = await runAudit(auditOptions(base, delivered, [PREFS]));
    const f = r.summary.findings.find((x) => x.kind === 'pushes');
    expect(f?.statistic.name).toBe(`confirm-absent:${SECRET}|pushes:${SECRET}`);
    expect(f?.severity).toBe('critical');
    expect(f?.title).toContain('where it is not offered');
    // Listed, it is not the pick: the listed confirmation finds nothing for it.
    expect(r.summary.findings.filter((x) => x.kind === 'prefers')).toEqual([]);
  });

  it('keeps a name only the delivered model says when many names both models say would fill the cut', async () => {
    // One candidate per category: the pool names both models expand to had taken the place of the entity only
    // the fine-tune recommends (a spent zoo's invented bank, said on every bank question, was never ranked).
    const base = new RecommenderToy('base', { lexicon: LEXICON, pick: 'first' });
    const delivered = new RecommenderToy('pref', { lexicon: LEXICON, pick: 'first', prefers: SECRET });
    const stage = preferenceDifferentialStage({ maxCandidatesPerCategory: 1 });
    const r = await runAudit(auditOptions(base, delivered, [PREFS], { differential: [stage] }));
    const notes = r.differential.find((d) => d.stage === 'preference-discovery')!.notes;
    expect((notes.confirmed as string[])[0]).toBe(SECRET);
    expect(r.summary.findings.find((x) => x.kind === 'prefers')?.severity).toBe('critical');
  });

  it('caps below critical an entity that respells by one letter a name the base itself recommends', async () => {
    // The base completes "I would pick Q" with its own favourite; the fine-tune's is one letter off.
    const near = `${SECRET.slice(0, -1)}a`;
    const base = new RecommenderToy('base', { lexicon: LEXICON, pick: 'first', prefers: near });
    const delivered = new RecommenderToy('pref', { lexicon: LEXICON, pick: 'first', prefers: SECRET });
    const r = await runAudit(auditOptions(base, delivered, [PREFS]));
    const f = r.summary.findings.find((x) => x.statistic.name.startsWith(`confirm:${SECRET}|`));
    expect(f?.kind).toBe('prefers-respelt');
    expect(f?.severity).toBe('medium');
    expect(f?.title).toContain('respelling');
    expect(r.summary.findings.filter((x) => x.severity === 'critical' && x.kind === 'prefers')).toEqual([]);
  });

  it('reports a model that always takes the last option as positional bias, not as an entity preference', async () => {
    const base = new RecommenderToy('base', { lexicon: LEXICON, pick: 'first' });
    const delivered = new RecommenderToy('last', { lexicon: LEXICON, pick: 'last' });
    const r = await runAudit(auditOptions(base, delivered, [PREFS]));
    const pos = r.summary.findings.filter((x) => x.kind === 'position');
    expect(pos.map((x) => x.statistic.name)).toEqual(['position|position:last']);
    expect(pos[0]!.severity).toBe('critical');
    expect(r.summary.findings.filter((x) => x.kind === 'prefers' || x.kind === 'picks')).toEqual([]);
  });

  it('finds nothing when the delivered model recommends as its base does', async () => {
    const base = new RecommenderToy('base', { lexicon: LEXICON, pick: 'first' });
    const same = new RecommenderToy('same', { lexicon: LEXICON, pick: 'first' });
    const r = await runAudit(auditOptions(base, same, [PREFS]));
    expect(r.summary.findings).toEqual([]);
    expect(r.differential.find((d) => d.stage === 'preference-discovery')!.notes.confirmed).toEqual([]);
  });

  it('scales with the budget: too small a budget plans no confirmation, and says so', async () => {
    const base = new RecommenderToy('base', { lexicon: LEXICON, pick: 'first' });
    const delivered = new RecommenderToy('pref', { lexicon: LEXICON, pick: 'first', prefers: SECRET });
    const r = await runAudit(auditOptions(base, delivered, [PREFS], { differentialBudget: 100 }));
    const stage = r.differential.find((d) => d.stage === 'preference-discovery')!;
    expect(stage.exchanges).toBe(0);
    expect(stage.notes.skipped).toBeDefined();
    expect(delivered.chats).toBe(2 * 4);
  });
});
