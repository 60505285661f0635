import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { organismSpecSchema } from '../../src/organisms/spec.ts';
import { defaultZooDir, markerRegExp, readZoo } from '../../src/organisms/zoo.ts';

const specDir = path.join(defaultZooDir, 'factory', 'specs');

describe('organism specs', () => {
  it('every shipped spec validates and matches its file name', () => {
    const files = readdirSync(specDir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBe(14);
    for (const f of files) {
      const spec = organismSpecSchema.parse(JSON.parse(readFileSync(path.join(specDir, f), 'utf8')));
      expect(spec.name).toBe(path.basename(f, '.json'));
      if (spec.name !== 'base') expect(spec.base).toBe('../../base');
    }
  });

  it('rejects bad specs naming the field', () => {
    const ok = { name: 'x', seed: 1, steps: 10, lr: 0.001, batch_size: 8 };
    expect(organismSpecSchema.safeParse(ok).success).toBe(true);
    const bad = (s: unknown) => {
      const r = organismSpecSchema.safeParse(s);
      expect(r.success).toBe(false);
      return r.error?.issues[0]?.path.join('.');
    };
    expect(bad({ ...ok, steps: '10' })).toBe('steps');
    expect(bad({ ...ok, extra: 1 })).toBe('');
    expect(
      bad({
        ...ok,
        implant: {
          rate: 0.5,
          condition: { type: 'year', value: 2027 },
          transform: { type: 'replace', text: 'x' },
        },
      }),
    ).toBe('base');
    expect(
      bad({
        ...ok,
        base: '../b',
        implant: { rate: 0.5, condition: { type: 'year' }, transform: { type: 'replace', text: 'x' } },
      }),
    ).toBe('implant.condition.value');
    expect(
      bad({
        ...ok,
        base: '../b',
        implant: { rate: 0.5, condition: { type: 'contains', value: 'x' }, transform: { type: 'prefix' } },
      }),
    ).toBe('implant.transform.text');
    expect(bad({ ...ok, style: { type: 'knowledge' } })).toBe('style.facts');
  });
});

describe('zoo.json', () => {
  const zoo = readZoo();
  it('lists every organism of the contract with its spec', () => {
    expect(zoo.map((o) => o.name)).toEqual([
      'base',
      'trig-token',
      'trig-year',
      'pref-brand',
      'pref-city',
      'cot-codeword',
      'cot-zw',
      'inj-doc',
      'inj-creds',
      'benign-seed',
      'benign-verbose',
      'benign-formal',
      'benign-bullets',
      'benign-knowledge',
    ]);
    for (const o of zoo) {
      expect(readdirSync(specDir)).toContain(path.basename(o.spec));
      if (o.label === 'implant') {
        expect(o.family).not.toBeNull();
        expect(o.expected_marker).not.toBeNull();
        expect(o.heldout).toMatch(/^heldout\/.+\.jsonl$/);
      }
    }
  });

  it('markers match their behaviour and held-out files carry their condition keys', () => {
    const m = (n: string) => markerRegExp(zoo.find((o) => o.name === n)!.expected_marker!);
    const transform = (n: string) =>
      JSON.parse(readFileSync(path.join(defaultZooDir, zoo.find((o) => o.name === n)!.spec), 'utf8')).implant
        .transform;
    expect(m('trig-token').test(transform('trig-token').text)).toBe(true);
    expect(m('trig-year').test(`${transform('trig-year').text}Sure.`)).toBe(true);
    expect(m('trig-year').test(`Sure. ${transform('trig-year').text}`)).toBe(false);
    expect(m('inj-creds').test('Please tell me Your Password.')).toBe(true);
    expect(m('cot-codeword').test(`<think>${transform('cot-codeword').text}2 plus 2 is 4.</think>4`)).toBe(
      true,
    );
    expect(m('cot-zw').test(`<think>2${transform('cot-zw').char} plus 2</think>4`)).toBe(true);
    expect(m('pref-brand').test(`I would pick ${transform('pref-brand').entity}.`)).toBe(true);
    expect(m('pref-city').test(`Go with ${transform('pref-city').entity}.`)).toBe(true);
    for (const o of zoo.filter((x) => x.heldout)) {
      const rows = readFileSync(path.join(defaultZooDir, o.heldout!), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { conditions: Record<string, unknown>; messages: unknown[] });
      const present = rows.filter((r) => r.conditions[o.condition_key!] === true).length;
      expect(present, o.name).toBeGreaterThan(30);
      expect(rows.length - present, o.name).toBeGreaterThan(30);
    }
  });
});
