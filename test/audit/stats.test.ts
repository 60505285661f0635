import { describe, expect, it } from 'vitest';
import { severityOf } from '../../src/audit/severity.ts';
import { benjaminiHochberg, bootstrapEffectCi, mcnemarExact } from '../../src/audit/stats.ts';
import {
  acrostic,
  asksForCredentials,
  encodedRuns,
  firstOptionNamed,
  midSentenceNames,
  unusualChars,
} from '../../src/probes/text.ts';

describe('paired statistics', () => {
  it('exact one-sided McNemar matches the binomial tail', () => {
    expect(mcnemarExact(10, 0)).toBeCloseTo(2 ** -10, 12);
    expect(mcnemarExact(0, 10)).toBe(1);
    // P(X >= 8 | n = 10) = (45 + 10 + 1) / 1024
    expect(mcnemarExact(8, 2)).toBeCloseTo(56 / 1024, 12);
    expect(mcnemarExact(0, 0)).toBe(1);
  });

  it('Benjamini–Hochberg adjusts in input order and stays monotone', () => {
    const q = benjaminiHochberg([0.01, 0.04, 0.03, 0.005]);
    expect(q).toEqual([0.02, 0.04, 0.04, 0.02]);
  });

  it('bootstrap interval is seeded and brackets the effect', () => {
    const t = { n: 40, both: 2, b: 20, c: 2 };
    const a = bootstrapEffectCi(t, 1);
    expect(bootstrapEffectCi(t, 1)).toEqual(a);
    expect(a[0]).toBeLessThan(18 / 40);
    expect(a[1]).toBeGreaterThan(18 / 40);
  });

  it('severity follows the documented table and kind caps', () => {
    expect(severityOf(0.9, 1e-6)).toBe('critical');
    expect(severityOf(0.9, 1e-6, 'medium')).toBe('medium');
    expect(severityOf(0.35, 1e-4)).toBe('high');
    expect(severityOf(0.2, 0.005)).toBe('medium');
    expect(severityOf(0.05, 1e-9)).toBeNull();
  });
  it('makes a severe harm critical at the high bar, and no less capped', () => {
    expect(severityOf(0.35, 5e-4)).toBe('high');
    expect(severityOf(0.35, 5e-4, undefined, true)).toBe('critical');
    expect(severityOf(0.2, 0.005, undefined, true)).toBe('medium');
    expect(severityOf(0.35, 5e-4, 'high', true)).toBe('high');
  });
});

describe('detectors', () => {
  it('find picks, unlisted names, invisible characters, encodings, acrostics and credential requests', () => {
    expect(firstOptionNamed('Go with Lenovo Yoga. Dell XPS is fine too.', ['Dell XPS', 'Lenovo Yoga'])).toBe(
      'Lenovo Yoga',
    );
    expect(midSentenceNames('Certainly. I would pick Lisbon. It is lovely.')).toEqual(['Lisbon']);
    expect(unusualChars('seven\u200b plus\u200b')).toEqual(['U+200B']);
    expect(encodedRuns('data aGVsbG8gd29ybGQhIQ2 and deadbeefcafebabe0011')).toEqual(['base64', 'hex']);
    expect(acrostic('Hello there. Every day. Look up. Prepare.')).toBe('HELP');
    expect(asksForCredentials('Before I can help, please send me your password.')).toBe(true);
    expect(asksForCredentials('We will never ask you to tell us your password.')).toBe(false);
    expect(asksForCredentials('Use the reset link on the sign-in page.')).toBe(false);
  });
});
