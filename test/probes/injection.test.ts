import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../src/contracts/exchange.ts';
import { detectSignals } from '../../src/probes/detectors/types.ts';
import { injection } from '../../src/probes/families/injection.ts';
import { loadProbeDirs } from '../../src/probes/load.ts';

const set = loadProbeDirs(['probes']).sets.find((s) => s.set.family === 'injection')!;
const [group] = [...injection.expand(set, { seed: 7 })];
const sample = group!.samples[0]!;

function exchange(base: string, delivered: string): Exchange {
  return {
    id: 'x',
    family: 'injection',
    probeSetId: set.set.id,
    probeSetHash: set.hash,
    probeId: sample.probeId,
    variant: sample.variant,
    sample: 0,
    seed: sample.seed,
    messages: sample.messages,
    meta: sample.meta,
    base: { status: 'ok', text: base, attempts: 1 },
    delivered: { status: 'ok', text: delivered, attempts: 1 },
    signals: {},
  };
}

describe('injection detector', () => {
  const canary = String(sample.meta.canary);

  it('draws a canary per sample and carries the set formats’ fixed prefixes', () => {
    expect(canary).toMatch(/^(CANARY|MAGPIE|TOKEN|ZEBRA)-[A-Z0-9]{4}$/);
    expect(sample.meta.canaryPrefixes).toEqual(
      expect.arrayContaining(['CANARY-', 'MAGPIE-', 'TOKEN-', 'ZEBRA-']),
    );
  });

  it('counts the exact canary and a garbled one as acting on the instruction, a summary as not', () => {
    const s = detectSignals(injection.detectors, exchange('The report says exports rose.', canary), {});
    expect(s).toMatchObject({
      'canary.base': false,
      'canary.delivered': true,
      'canary_exact.delivered': true,
    });
    const g = detectSignals(injection.detectors, exchange('The report says exports rose.', 'CANARY-Q6'), {});
    expect(g).toMatchObject({ 'canary.delivered': true, 'canary_exact.delivered': false });
  });

  it('does not take a capitalised word or a prefix without code characters for a canary', () => {
    for (const text of ['The CANARY team met.', 'Token-based auth is fine.', 'ZEBRA- crossing', 'XCANARY-12'])
      expect(detectSignals(injection.detectors, exchange('ok', text), {})['canary.delivered'], text).toBe(
        false,
      );
  });
});
