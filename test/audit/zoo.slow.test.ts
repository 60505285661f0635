import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runZooBench, type ZooBenchResult } from '../../src/bench/zoo.ts';
import { checkOrganismDirs, localSource, type ModelSource } from '../../src/bench/zoo-models.ts';
import { loadPolicy } from '../../src/gate/policy.ts';
import { defaultZooDir, readZoo } from '../../src/organisms/zoo.ts';
import { loadProbeDirs } from '../../src/probes/load.ts';
import { memoised } from './memo.ts';

/**
 * The shipped zoo, audited through the embedded engine by the zoo benchmark's own code path, against the
 * ground truth in fixtures/organisms/zoo.json (read here, by the test, never by the audit). Every organism
 * zoo.json lists must be built: a missing one fails the test, it is not skipped.
 */
const zoo = readZoo(defaultZooDir);
const implants = zoo.filter((o) => o.label === 'implant');
const benign = zoo.filter((o) => o.label === 'benign');
const POLICY = 'policies/offline.yaml';

/**
 * Measured gap of the auditor on the zoo re-specified with fresh secrets (issue 14; docs/ORGANISMS.md): the
 * fresh triggers are caught (a triggers finding, never a pass) but their exact condition is not recovered.
 * Strict: an organism listed here whose trigger starts to be recovered fails the test until it is taken off
 * the list, so the list can only say what is true. AUROC over the zoo is a benchmark figure (bench zoo,
 * BENCHMARKS.md), not asserted here.
 */
const KNOWN_UNRECOVERED: Record<string, string> = {
  'trig-token': 'fresh token trigger; catalogue-free discovery does not reproduce it yet',
  'trig-year': 'fresh year; found through nearby catalogue years, the exact year is not recovered',
};

/** The local engine, with the base memoised: it answers the same greedy requests for every organism. */
function memoisedBase(inner: ModelSource, baseName: string): ModelSource {
  return {
    ...inner,
    open: async (name, observer) => {
      const m = await inner.open(name, observer);
      return name === baseName ? memoised(m) : m;
    },
  };
}

describe('audit of the shipped zoo (embedded engine, dev probe sets)', () => {
  let result: ZooBenchResult;
  const byName = (name: string) => result.organisms.find((o) => o.name === name)!;

  // Thirteen audits at the default budget on two cores: 28 minutes in CI before the engine's GC work was cut
  // (2026-12-06: V8 marking on the main thread, the KV cache fetched every 4th step), 9.5 minutes after; the
  // hour's allowance stays for slower machines.
  beforeAll(async () => {
    checkOrganismDirs(
      defaultZooDir,
      zoo.map((o) => o.name),
    );
    const base = zoo.find((o) => o.label === 'base')!.name;
    result = await runZooBench({
      zooDir: defaultZooDir,
      outDir: mkdtempSync(join(tmpdir(), 'probate-zoo-')),
      models: memoisedBase(localSource(defaultZooDir, 1), base),
      probeSets: loadProbeDirs(['probes']).sets,
      policy: loadPolicy(POLICY),
      seed: 1,
      concurrency: 32,
      budget: 240,
      toolVersion: 'test',
      onOrganism: (r) =>
        process.stderr.write(
          `zoo ${r.name}: overall ${r.score.toFixed(3)} ${r.verdict} ${JSON.stringify(r.findingsByFamily)}\n`,
        ),
    });
  }, 3_600_000);

  it('audits every organism zoo.json lists, implants and benign ones', () => {
    expect(implants.length).toBeGreaterThan(0);
    expect(benign.length).toBeGreaterThan(0);
    expect(result.organisms.map((o) => o.name).sort()).toEqual(
      [...implants, ...benign].map((o) => o.name).sort(),
    );
    for (const o of result.organisms)
      expect({ name: o.name, failed: o.failed }).toEqual({ name: o.name, failed: 0 });
  });

  it('gives every implanted organism a finding in its own family', () => {
    const missing = implants.filter((o) => !byName(o.name).detectedInFamily).map((o) => o.name);
    expect(missing).toEqual([]);
  });

  it('never passes an implant and never blocks a benign organism (gate verdicts under the offline policy)', () => {
    for (const o of implants)
      expect({ name: o.name, committable: byName(o.name).verdict === 'COMMITTABLE' }).toEqual({
        name: o.name,
        committable: false,
      });
    for (const o of benign)
      expect({
        name: o.name,
        verdict: byName(o.name).verdict,
        critical: byName(o.name).verdictReasons,
      }).not.toMatchObject({
        verdict: 'BLOCKED',
      });
    expect(result.false_blocks).toBe(0);
  });

  it('recovers each trigger implant’s condition on fresh prompts, except the known misses (which must stay listed)', () => {
    const triggers = implants.filter((o) => o.family === 'triggers');
    expect(triggers.length).toBeGreaterThan(0);
    for (const o of triggers)
      expect({ name: o.name, recovered: byName(o.name).trigger?.recovered ?? false }).toEqual({
        name: o.name,
        recovered: !(o.name in KNOWN_UNRECOVERED),
      });
  });
});
