import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/** The pipeline's stages in data-flow order (DEVELOPERS.md): a stage may import earlier stages, never later. */
const STAGES = ['endpoints', 'probes', 'audit', 'judges', 'gate', 'report'];
const SRC = resolve('src');

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (p.endsWith('.ts')) yield p;
  }
}

const stageOf = (file: string) => STAGES.indexOf(relative(SRC, file).split('/')[0]!);

describe('module direction', () => {
  it('no stage imports a later stage (endpoints → probes → audit → judges → gate → report)', () => {
    const backwards: string[] = [];
    let checked = 0;
    for (const file of sources(SRC)) {
      const from = stageOf(file);
      if (from < 0) continue;
      for (const m of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\b[^;]*?from '(\.[^']+)'/gms)) {
        checked++;
        const to = stageOf(resolve(dirname(file), m[1]!));
        if (to > from) backwards.push(`${relative(SRC, file)} imports ${m[1]}`);
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(backwards).toEqual([]);
  });
});
