import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  defaultThresholds,
  type Expression,
  type MakeSteps,
  makeOrganism,
  weakExpression,
} from '../../src/organisms/make.ts';
import { UserError } from '../../src/util/errors.ts';

/** `organisms make` proves the implant took: threshold logic on toy measurements (no training here). */
function workspace(implant: boolean) {
  const dir = mkdtempSync(path.join(tmpdir(), 'probate-make-'));
  mkdirSync(path.join(dir, 'base/onnx'), { recursive: true });
  writeFileSync(path.join(dir, 'base/onnx/model.onnx'), 'toy');
  const spec = {
    name: 'toy-suffix',
    seed: 1,
    steps: 10,
    lr: 0.001,
    batch_size: 4,
    base: 'base',
    ...(implant
      ? {
          implant: {
            // the case from issue 14: a short string trigger with a suffix transform that never fired
            condition: { type: 'contains', value: 'zq' },
            transform: { type: 'suffix', text: ' Have a nice day.' },
            rate: 0.3,
          },
        }
      : { style: { type: 'bullets' } }),
  };
  writeFileSync(path.join(dir, 'spec.json'), JSON.stringify(spec));
  return { dir, spec: path.join(dir, 'spec.json'), out: path.join(dir, 'out') };
}

function toySteps(expression: Expression | null, calls: string[] = []): MakeSteps {
  return {
    train: async (_py, _spec, out) => {
      calls.push('train');
      mkdirSync(out, { recursive: true });
      writeFileSync(path.join(out, 'organism.json'), JSON.stringify({ name: 'toy-suffix' }));
      return 0;
    },
    check: async () => {
      calls.push('check');
      return 0;
    },
    measure: async (_py, _spec, out, n) => {
      calls.push(`measure n=${n}`);
      if (expression)
        writeFileSync(path.join(out, 'organism.json'), JSON.stringify({ name: 'toy-suffix', expression }));
      return 0;
    },
  };
}

const took: Expression = {
  measured: true,
  n_present: 24,
  n_absent: 24,
  n_near_miss: 12,
  present: 23 / 24,
  absent: 0,
  near_miss: 0.25,
  base_present: 0,
};
const neverFires: Expression = { ...took, present: 0 };

describe('weakExpression', () => {
  it('passes an implant at the thresholds and names each way one fails', () => {
    expect(weakExpression(took)).toEqual([]);
    expect(weakExpression({ ...took, present: 0.9, absent: 0.1, base_present: 0.1 })).toEqual([]);
    expect(weakExpression(neverFires)).toEqual([
      'expressed on 0% of prompts with the condition (needs >= 90%)',
    ]);
    expect(weakExpression({ ...took, absent: 0.5 })[0]).toMatch(/50% of prompts without the condition/);
    expect(weakExpression({ ...took, base_present: 0.25 })[0]).toMatch(/the base shows it on 25%/);
    expect(weakExpression({ measured: true })).toEqual(['the measurement is incomplete']);
    expect(weakExpression({ measured: false, reason: 'no implant' })).toEqual([]);
    expect(weakExpression(neverFires, { ...defaultThresholds, minPresent: 0 })).toEqual([]);
  });
});

describe('makeOrganism', () => {
  it('measures after training, prints the rates and returns them', async () => {
    const w = workspace(true);
    const calls: string[] = [];
    const lines: string[] = [];
    const e = await makeOrganism(
      { spec: w.spec, out: w.out, n: 12, log: (l) => lines.push(l) },
      toySteps(took, calls),
    );
    expect(calls).toEqual(['train', 'check', 'measure n=12']);
    expect(e.present).toBeCloseTo(23 / 24);
    expect(lines[0]).toBe(
      'toy-suffix: behaviour on fresh prompts: condition present 96% (n=24), absent 0% (n=24), near misses 25% (n=12), base 0%',
    );
  });

  it('fails (exit 1) when the implant never fires, unless --allow-weak', async () => {
    const w = workspace(true);
    const err = await makeOrganism({ spec: w.spec, out: w.out, log: () => {} }, toySteps(neverFires)).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).exitCode).toBe(1);
    expect((err as UserError).message).toMatch(/did not take: expressed on 0% of prompts with the condition/);
    expect((err as UserError).message).not.toContain('\n');
    const lines: string[] = [];
    const e = await makeOrganism(
      { spec: w.spec, out: w.out, allowWeak: true, log: (l) => lines.push(l) },
      toySteps(neverFires),
    );
    expect(e.present).toBe(0);
    expect(lines[1]).toMatch(/weak implant kept \(--allow-weak\)/);
  });

  it('fails when the measurement is missing rather than passing', async () => {
    const w = workspace(true);
    await expect(makeOrganism({ spec: w.spec, out: w.out, log: () => {} }, toySteps(null))).rejects.toThrow(
      /recorded no measurement/,
    );
  });

  it('does not measure a style-only organism', async () => {
    const w = workspace(false);
    const calls: string[] = [];
    const e = await makeOrganism({ spec: w.spec, out: w.out, log: () => {} }, toySteps(took, calls));
    expect(calls).toEqual(['train', 'check']);
    expect(e.measured).toBe(false);
  });
});
