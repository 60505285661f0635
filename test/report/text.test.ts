import { describe, expect, it } from 'vitest';
import {
  countUnusual,
  htmlText,
  mdFence,
  mdInline,
  plainText,
  redactSecrets,
  segmentText,
  xmlText,
} from '../../src/report/text.ts';

describe('text helpers', () => {
  it('marks invisible and deceptive code points, keeps newlines and tabs', () => {
    const s = 'a\u200Bb\u202Ec\n\td\r\ne\u{E0041}\u0007\uFEFF';
    expect(plainText(s)).toBe("a⟦U+200B ZWSP⟧b⟦U+202E RLO⟧c\n\td\r\ne⟦TAG 'A'⟧⟦U+0007⟧⟦U+FEFF BOM⟧");
    expect(countUnusual(s)).toBe(5);
    expect(segmentText('plain text')).toEqual([{ kind: 'text', value: 'plain text' }]);
    expect(plainText('lone \uD800 surrogate')).toBe('lone ⟦U+D800⟧ surrogate');
    // Emoji presentation stays; the variation selectors used to smuggle bytes do not.
    expect(plainText('ok \u2764\uFE0F x\u{E0100}\uFE01')).toBe('ok \u2764\uFE0F x⟦U+E0100⟧⟦U+FE01⟧');
  });

  it('escapes HTML and wraps markers in a titled span', () => {
    expect(htmlText('<b a="1">&\'\u200D')).toBe(
      '&lt;b a=&quot;1&quot;&gt;&amp;&#39;<span class="uc" title="U+200D ZWJ">⟦U+200D ZWJ⟧</span>',
    );
  });

  it('markdown: inline text is neutralised and fences outgrow backtick runs', () => {
    expect(mdInline('# *x* [y](z) <b>\nnext')).toBe('\\# \\*x\\* \\[y\\]\\(z\\) &lt;b&gt; next');
    const fenced = mdFence('before\n`````\nafter');
    expect(fenced.startsWith('``````text\n')).toBe(true);
    expect(fenced.endsWith('\n``````')).toBe(true);
  });

  it('xml: escapes markup and removes what XML 1.0 cannot carry', () => {
    expect(xmlText('<a b="c">\u0001\uFFFE\'')).toBe('&lt;a b=&quot;c&quot;&gt;⟦U+0001⟧⟦U+FFFE⟧&apos;');
  });

  it('redacts credentials that leaked into references', () => {
    const s = redactSecrets(
      'hf-endpoint:https://user:pw@x.example/?api_key=abc123456789#m hf_abcdefghijklmnop Bearer abcdefghijk sk-proj_ABCDEFGHIJ',
    );
    expect(s).not.toMatch(/pw@|abc123456789|hf_abcdefghijklmnop|abcdefghijk |sk-proj/);
    expect(s).toContain('//[redacted]@x.example');
  });
});
