import { describe, expect, it } from 'vitest';
import { anomalousSpan, type Cluster, spells } from '../../src/audit/discovery/anomaly.ts';

function cluster(example: string, grams: string[]): Cluster {
  return { signature: { words: ['x'] }, grams, items: [0, 1], example, units: [], placed: [] };
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

describe('spells (an inverted target and a sweep cluster are one behaviour)', () => {
  const cluster = {
    replies: [
      'Notice: account paused (ref QX-20). Your files are locked until review.',
      'Notice: account paused (ref QX-20). Your files are locked until review.',
      'Try a simple routine and keep at it.',
    ],
  };
  it('matches a target its replies spell, though the words the cluster is named by lie further on', () => {
    expect(spells(cluster, 'account paused (ref QX-2')).toBe(true);
    expect(spells(cluster, 'Account  Paused (REF qx-20)')).toBe(true);
  });
  it('needs two replies, and a target with letters enough to mean something', () => {
    expect(spells({ replies: cluster.replies.slice(0, 1) }, 'account paused (ref QX-2')).toBe(false);
    expect(spells(cluster, 'keep at it.')).toBe(false);
    expect(spells(cluster, 'account closed for good')).toBe(false);
    expect(spells({}, 'account paused (ref QX-2')).toBe(false);
  });
});
