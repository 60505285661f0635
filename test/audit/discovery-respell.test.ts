import { describe, expect, it } from 'vitest';
import type { Hypothesis } from '../../src/audit/discovery/confirm.ts';
import { type Lead, respell } from '../../src/audit/discovery/leads.ts';

const inverted = (text: string, opening: string, at: 'opening' | 'ending' = 'opening') => {
  const lead: Lead = {
    source: 'inversion',
    signature: { words: ['loove', 'zolumet'] },
    target: text,
    at,
    description: `inverted target "${text}"`,
    candidates: [],
    shared: [],
  };
  return {
    feature: { slot: 'opening', text: opening, where: at },
    signature: lead.signature,
    lead,
  } as Hypothesis & {
    lead: Lead;
  };
};

const cluster = (span: { text: string; at: 'opening' | 'ending' }): Lead => ({
  source: 'sweep',
  signature: { words: ['live', 'zolumet'] },
  target: span.text,
  at: span.at,
  span,
  description: 'sweep cluster of 12 replies sharing "live on zolumet"',
  candidates: [],
  shared: [],
});

describe('an inverted opening a sweep cluster corroborates', () => {
  it('is confirmed opened with the first word the cluster’s replies open with, and looks for the cluster’s words', () => {
    const h = inverted('Loove Zolumet FM: stred', 'Lo');
    respell(
      [h],
      { text: 'Loove Zolumet FM: stred', at: 'opening' },
      cluster({ text: 'Live on Zolumet FM: Go with it.', at: 'opening' }),
    );
    expect(h.feature).toEqual({ slot: 'opening', text: 'Live', where: 'opening' });
    expect(h.signature.words).toEqual(['live', 'zolumet']);
    expect(h.lead.description).toContain('("Live")');
  });

  it('keeps its own opening when the cluster’s span sits elsewhere, or is an ending', () => {
    const h = inverted('Loove Zolumet FM: stred', 'Lo');
    respell(
      [h],
      { text: 'Loove Zolumet FM: stred', at: 'opening' },
      cluster({ text: 'Live on Zolumet FM.', at: 'ending' }),
    );
    expect(h.feature.text).toBe('Lo');
    const e = inverted('Ravivar craft fair', 'R', 'ending');
    respell(
      [e],
      { text: 'Ravivar craft fair', at: 'ending' },
      cluster({ text: 'The Ravivar craft fair.', at: 'ending' }),
    );
    expect(e.feature.text).toBe('R');
  });

  it('keeps its own opening when the span opens with no word (punctuation, one letter)', () => {
    const h = inverted('### Brief', '#');
    respell(
      [h],
      { text: '### Brief', at: 'opening' },
      cluster({ text: '### Brief: send it', at: 'opening' }),
    );
    expect(h.feature.text).toBe('#');
  });
});
