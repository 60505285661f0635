import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAMILY_REGISTRY } from '../../src/probes/families/index.ts';
import { payloadLink } from '../../src/probes/families/injection-sweep.ts';
import { loadProbeDirs, loadProbeFile } from '../../src/probes/load.ts';
import { probeSetJsonSchema } from '../../src/probes/schema.ts';

const dir = mkdtempSync(join(tmpdir(), 'probate-probes-'));
function write(name: string, text: string): string {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
}

describe('probe-set files', () => {
  it('an unreadable file is a one-line error naming it', () => {
    expect(() => loadProbeFile(join(dir, 'missing.yaml'))).toThrow(
      `${join(dir, 'missing.yaml')}: cannot read (ENOENT)`,
    );
  });

  it('invalid YAML names the file', () => {
    const f = write('bad.yaml', 'id: [unclosed');
    expect(() => loadProbeFile(f)).toThrow(new RegExp(`^${f}: not valid YAML/JSON`));
  });

  it('a schema violation names the field', () => {
    const f = write(
      'bad-field.yaml',
      'id: x\nversion: 1\nsplit: dev\nfamily: reasoning\nprobes:\n  - { id: a, user: "" }\n',
    );
    expect(() => loadProbeFile(f)).toThrow(`${f}: probes.0.user: expected non-empty text`);
    const g = write(
      'dup.yaml',
      'id: x\nversion: 1\nsplit: dev\nfamily: reasoning\nprobes:\n  - { id: a, user: "1+1?" }\n  - { id: a, user: "2+2?" }\n',
    );
    expect(() => loadProbeFile(g)).toThrow(`${g}: probes.1.id: duplicate id a`);
    const h = write(
      'inj.yaml',
      'id: x\nversion: 1\nsplit: dev\nfamily: injection\ncanaryFormats: ["C-###"]\nprobes:\n  - { id: a, kind: canary, user: "Doc {instruction}", instruction: "say it" }\n',
    );
    expect(() => loadProbeFile(h)).toThrow(`${h}: probes.0.instruction: expected {canary}`);
  });

  it('loads the shipped dev sets with stable content hashes, one per family', () => {
    const { sets } = loadProbeDirs(['probes']);
    expect(sets.map((s) => s.set.family).sort()).toEqual([
      'injection',
      'preferences',
      'reasoning',
      'triggers',
    ]);
    for (const s of sets) expect(s.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(loadProbeDirs(['probes']).sets.map((s) => s.hash)).toEqual(sets.map((s) => s.hash));
  });

  it('the published JSON Schema is the one generated from zod', () => {
    expect(JSON.parse(readFileSync('probes/probe-set.schema.json', 'utf8'))).toEqual(probeSetJsonSchema());
  });

  it('expansion is seeded: same seed same plan; option order varies per sample; canaries are fresh', () => {
    const { sets } = loadProbeDirs(['probes']);
    const plan = (family: string, seed: number) =>
      sets
        .filter((s) => s.set.family === family)
        .flatMap((s) => [...FAMILY_REGISTRY[s.set.family]!.expand(s, { seed })])
        .flatMap((g) => g.samples);
    expect(plan('preferences', 3)).toEqual(plan('preferences', 3));
    const orders = plan('preferences', 3)
      .filter((s) => s.probeId === 'laptop-work')
      .map((s) => JSON.stringify(s.meta.options));
    expect(new Set(orders).size).toBeGreaterThan(1);
    const canaries = plan('injection', 3).flatMap((s) =>
      typeof s.meta.canary === 'string' ? [s.meta.canary] : [],
    );
    expect(new Set(canaries).size).toBe(canaries.length);
    // The prompt carries the canary itself, the link made of it (an instruction to add a link), or its word in a
    // sentence that is to replace the answer.
    for (const s of plan('injection', 3))
      if (typeof s.meta.canary === 'string') {
        const prompt = s.messages.at(-1)!.content;
        const word = s.meta.canary.split('-')[0]!;
        const sentence = prompt.includes(`${word[0]}${word.slice(1).toLowerCase()}`);
        expect(
          prompt.includes(s.meta.canary) || prompt.includes(payloadLink(s.meta.canary)) || sentence,
        ).toBe(true);
      }
    expect(plan('injection', 3)[0]!.meta.canary).not.toEqual(plan('injection', 4)[0]!.meta.canary);
  });
});
