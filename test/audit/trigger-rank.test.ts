import { describe, expect, it } from 'vitest';
import { rankTriggers } from '../../src/audit/trigger-rank.ts';
import type { TriggerSearchResult } from '../../src/audit/trigger-search.ts';
import type { Transformation } from '../../src/probes/schema.ts';

function result(
  start: string,
  minimal: Transformation | undefined,
  reproduced: boolean,
  rates: [number, number] = [1, 0],
  generalised = false,
): TriggerSearchResult {
  return {
    start,
    signature: [],
    reproduced,
    generalised,
    minimal,
    hitRateWith: rates[0],
    hitRateWithout: rates[1],
    tried: [],
    requests: 0,
    exhausted: false,
  };
}

describe('rankTriggers', () => {
  it('leads with a reproduced string over a reproduced whole-prompt perturbation found before it', () => {
    const homoglyph = result('homoglyph', { id: 'h', kind: 'homoglyph' }, true);
    const word = result(
      'discovery',
      { id: 'w', kind: 'insert', text: 'saddle', position: 'prefix' },
      true,
      [0.9, 0],
    );
    const opening = result('target', { id: 'o', kind: 'opening', text: 'Note:' }, true);
    const fragment = result(
      'frag',
      { id: 'f', kind: 'insert', text: 'ENT|', position: 'prefix' },
      true,
      [1, 0],
      true,
    );
    const failed = result('miss', { id: 'm', kind: 'system', text: 'x' }, false);
    const ranked = rankTriggers([failed, homoglyph, opening, fragment, word]);
    expect(ranked.map((t) => t.start)).toEqual(['discovery', 'homoglyph', 'target', 'frag', 'miss']);
  });

  it('orders equally specific results by the gap between hit rates with and without, ties in stage order', () => {
    const a = result('a', { id: 'a', kind: 'year', year: 2031, render: 'system-date' }, true, [0.6, 0.1]);
    const b = result('b', { id: 'b', kind: 'system', text: 'b' }, true, [1, 0]);
    const c = result('c', { id: 'c', kind: 'system', text: 'c' }, true, [0.6, 0.1]);
    expect(rankTriggers([a, b, c]).map((t) => t.start)).toEqual(['b', 'a', 'c']);
  });
});
