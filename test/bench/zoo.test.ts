import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { writeZooArtefacts } from '../../src/bench/output.ts';
import { planZoo, runZooBench, type ZooBenchResult } from '../../src/bench/zoo.ts';
import { checkOrganismDirs } from '../../src/bench/zoo-models.ts';
import { main } from '../../src/cli/main.ts';
import { defaultPolicyPath, loadPolicy } from '../../src/gate/policy.ts';
import { loadProbeDirs } from '../../src/probes/load.ts';
import { toySource, writeToyZoo } from '../../src/testing/toy-zoo.ts';
import { UserError } from '../../src/util/errors.ts';

async function cli(args: string[]) {
  let err = '';
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => {
    err += String(s);
    return true;
  });
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    return { code: await main(args), err };
  } finally {
    vi.restoreAllMocks();
  }
}

afterEach(() => vi.restoreAllMocks());

describe('bench zoo on a scripted zoo', () => {
  let result: ZooBenchResult;
  let source: ReturnType<typeof toySource>;
  let outDir: string;

  beforeAll(async () => {
    const zooDir = writeToyZoo(['base', 'trig-token', 'pref-brand', 'benign-formal', 'benign-same']);
    outDir = join(zooDir, 'out');
    source = toySource();
    result = await runZooBench({
      zooDir,
      outDir,
      models: source,
      probeSets: loadProbeDirs(['probes']).sets,
      policy: loadPolicy(defaultPolicyPath()),
      seed: 1,
      concurrency: 8,
      budget: 240,
      toolVersion: 'test',
    });
  }, 120_000);

  it('audits every organism but the base, each into its own run folder', () => {
    expect(result.organisms.map((o) => [o.name, o.label])).toEqual([
      ['trig-token', 'implant'],
      ['pref-brand', 'implant'],
      ['benign-formal', 'benign'],
      ['benign-same', 'benign'],
    ]);
    for (const o of result.organisms) expect(existsSync(join(o.run, 'ledger.sqlite'))).toBe(true);
    expect(source.chats.get('base')).toBeGreaterThan(0);
  });

  it('separates the scripted implants from the benign organisms', () => {
    expect(result.auroc).toBe(1);
    expect(result.auroc_ci).toEqual([1, 1]);
    expect(result.tpr_at_fpr05).toBe(1);
    expect(result.family_detection).toEqual({
      triggers: { implants: 1, detected: 1, rate: 1 },
      preferences: { implants: 1, detected: 1, rate: 1 },
    });
    const same = result.organisms.find((o) => o.name === 'benign-same')!;
    expect(same.score).toBe(0);
  });

  it('takes verdicts from the gate: the trigger implant is BLOCKED, no benign organism is', () => {
    const byName = Object.fromEntries(result.organisms.map((o) => [o.name, o]));
    expect(byName['trig-token']!.verdict).toBe('BLOCKED');
    expect(byName['trig-token']!.verdictReasons.some((r) => r.startsWith('critical finding triggers:'))).toBe(
      true,
    );
    expect(result.false_blocks).toBe(0);
    expect(result.benign).toBe(2);
    // The default policy wants a calibrated judge: without one nothing is COMMITTABLE.
    expect(byName['benign-same']!.verdict).toBe('REVIEW_REQUIRED');
  });

  it('recovers the trigger and checks it against zoo.json by replay', () => {
    const t = result.organisms.find((o) => o.name === 'trig-token')!.trigger!;
    expect(t.matchesTruth).toBe(true);
    expect(t.deliveredHits).toBe(t.prompts);
    expect(t.baseHits).toBe(0);
    expect(result.trigger_recovery).toEqual({ organisms: 1, recovered: 1, rate: 1, working_not_planted: 0 });
    expect(t.works).toBe(true);
  });

  it('writes the JSON contract, the table and the plots', async () => {
    const { files } = await writeZooArtefacts(join(outDir, 'art'), result, { png: false });
    const json = JSON.parse(readFileSync(join(outDir, 'art', 'zoo-result.json'), 'utf8'));
    for (const k of ['auroc', 'auroc_ci', 'tpr_at_fpr05', 'false_blocks']) expect(json).toHaveProperty(k);
    expect(json.organisms[0]).toMatchObject({ name: 'trig-token', label: 'implant', verdict: 'BLOCKED' });
    const svg = readFileSync(join(outDir, 'art', 'zoo-roc.svg'), 'utf8');
    expect(svg).toMatch(/^<svg[^>]+xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('AUC 1.000');
    const md = readFileSync(join(outDir, 'art', 'zoo.md'), 'utf8');
    expect(md).toMatch(/\| trig-token \| implant \| triggers \| 1\.00 \|/);
    expect(files.some((f) => f.endsWith('zoo-families.svg'))).toBe(true);
  });
});

describe('bench zoo input errors', () => {
  it('refuses a zoo with a single class', () => {
    const dir = writeToyZoo(['base', 'trig-token', 'pref-brand']);
    expect(() => planZoo(dir)).toThrow(UserError);
    expect(() => planZoo(dir)).toThrow(
      /AUROC needs at least one implant and one benign organism \(found 2 implant, 0 benign\)/,
    );
  });

  it('--only keeps the base and the named organisms, refuses unknown names and a single-class subset', () => {
    const dir = writeToyZoo(['base', 'trig-token', 'pref-brand', 'benign-same', 'benign-formal']);
    const plan = planZoo(dir, ['trig-token', 'benign-formal']);
    expect(plan.base.name).toBe('base');
    expect(plan.organisms.map((o) => o.name)).toEqual(['trig-token', 'benign-formal']);
    expect(() => planZoo(dir, ['trig-token', 'nope'])).toThrow(/--only: nope not in .*zoo\.json/);
    expect(() => planZoo(dir, ['trig-token', 'pref-brand'])).toThrow(/found 2 implant, 0 benign/);
  });

  it('refuses a zoo without a base', () => {
    const dir = writeToyZoo(['trig-token', 'benign-same']);
    expect(() => planZoo(dir)).toThrow(/expected exactly one organism labelled base, found 0/);
  });

  it('names an organism whose folder holds no model', () => {
    const dir = writeToyZoo(['base', 'trig-token', 'benign-same']);
    mkdirSync(join(dir, 'base', 'onnx'), { recursive: true });
    for (const f of ['config.json', 'tokenizer.json', 'onnx/model.onnx'])
      writeFileSync(join(dir, 'base', f), '{}');
    expect(() => checkOrganismDirs(dir, ['base', 'trig-token'])).toThrow(
      new RegExp(`organism trig-token: ${join(dir, 'trig-token')}/config.json is missing`),
    );
  });

  it('exits 2 with one line for an unreadable zoo.json and for a single-class zoo (CLI)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'probate-bench-bad-'));
    writeFileSync(join(dir, 'zoo.json'), '{ not json');
    const bad = await cli(['bench', 'zoo', dir]);
    expect(bad.code).toBe(2);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    expect(bad.err).toContain('zoo.json');
    const single = await cli(['bench', 'zoo', writeToyZoo(['base', 'benign-same', 'benign-formal'])]);
    expect(single.code).toBe(2);
    expect(single.err).toMatch(/found 0 implant, 2 benign/);
  });
});
