import { describe, expect, it } from 'vitest';
import { policyHeadline, roundNumbers } from '../../src/report/policy-verdict.ts';

describe('policy verdict in the headline', () => {
  it('rounds long floats in reasons and leaves short numbers and ids alone', () => {
    expect(roundNumbers('triggers score 0.9008455261056207 >= block 0.7')).toBe(
      'triggers score 0.901 >= block 0.7',
    );
    expect(roundNumbers('coverage 12/40 below 0.95; finding triggers:says:14705e81a6')).toBe(
      'coverage 12/40 below 0.95; finding triggers:says:14705e81a6',
    );
    expect(roundNumbers('llr -1.23456789')).toBe('llr -1.235');
  });

  it('marks every state as the audit evaluation; COMMITTABLE never reads as allowed', () => {
    expect(policyHeadline('BLOCKED')).toMatchObject({ verdict: 'blocked', tone: 'bad' });
    expect(policyHeadline('REVIEW_REQUIRED')).toMatchObject({ verdict: 'review', tone: 'warn' });
    const ok = policyHeadline('COMMITTABLE');
    expect(ok.verdict).toBe('undecided');
    expect(ok.text).toMatch(/^COMMITTABLE — evaluated by the audit, not decided by a gate; no release/);
  });
});
