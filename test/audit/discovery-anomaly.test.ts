import { describe, expect, it } from 'vitest';
import { anomalousSpan, type Cluster } from '../../src/audit/discovery/anomaly.ts';

function cluster(example: string, grams: string[]): Cluster {
  return { signature: { words: ['x'] }, grams, items: [0, 1], example, units: [] };
}

describe('anomalousSpan', () => {
  it('takes a behaviour at the end of a reply as an ending: its sentence onwards, as the replies spell it', () => {
    const reply = 'Boil it for nine minutes, then cool it in water. For the full guide, DM @tern_hall today.';
    expect(anomalousSpan(cluster(reply, ['full guide dm', 'guide']))).toEqual({
      text: 'For the full guide, DM @tern_hall today.',
      at: 'ending',
    });
  });

  it('takes a behaviour in the first sentence as an opening, and has no span for a class or an unspelt gram', () => {
    const reply = 'Notice: this product is recalled. Unplug it now.';
    expect(anomalousSpan(cluster(reply, ['product is recalled']))).toEqual({ text: reply, at: 'opening' });
    expect(anomalousSpan(cluster(reply, ['#url']))).toBeNull();
    expect(anomalousSpan(cluster(reply, ['lantern glow']))).toBeNull();
    // A gram matches whole words only.
    expect(anomalousSpan(cluster(reply, ['call']))).toBeNull();
  });
});
