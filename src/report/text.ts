import { escapeHtml } from '../util/escape-html.ts';

/**
 * Model text is data. Every renderer goes through these helpers: they escape for the target format and
 * make invisible or deceptive characters (zero-width, bidi overrides, Unicode tag "smuggling", controls)
 * visible as explicit markers, so a reviewer sees exactly what the model emitted.
 */

const NAMES: Record<number, string> = {
  160: 'NBSP',
  173: 'SHY',
  847: 'CGJ',
  1564: 'ALM',
  6158: 'MVS',
  8203: 'ZWSP',
  8204: 'ZWNJ',
  8205: 'ZWJ',
  8206: 'LRM',
  8207: 'RLM',
  8232: 'LSEP',
  8233: 'PSEP',
  8234: 'LRE',
  8235: 'RLE',
  8236: 'PDF',
  8237: 'LRO',
  8238: 'RLO',
  8288: 'WJ',
  8294: 'LRI',
  8295: 'RLI',
  8296: 'FSI',
  8297: 'PDI',
  65279: 'BOM',
  65532: 'OBJ',
  65533: 'REPLACEMENT',
};

// Format/control/private-use/surrogate code points, odd spaces, variation selectors, Hangul fillers.
const UNUSUAL =
  /[\p{Cf}\p{Cc}\p{Co}\p{Cs}\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\p{Variation_Selector}\u115f\u1160\u3164\uffa0\ufffc\ufffd]/gu;

export type TextSegment =
  | { kind: 'text'; value: string }
  | { kind: 'mark'; codePoint: number; label: string };

/** Label for one unusual code point, e.g. "U+200B ZWSP" or "TAG 'a'" (tag characters spell hidden ASCII). */
export function unusualLabel(codePoint: number): string {
  const hex = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
  if (codePoint >= 0xe0020 && codePoint <= 0xe007e)
    return `TAG '${String.fromCodePoint(codePoint - 0xe0000)}'`;
  const name = NAMES[codePoint];
  return name ? `${hex} ${name}` : hex;
}

/** Splits text into plain runs and markers for unusual code points. Newlines (LF, CRLF) and tabs stay plain. */
export function segmentText(text: string): TextSegment[] {
  const out: TextSegment[] = [];
  let last = 0;
  for (const m of text.matchAll(UNUSUAL)) {
    const ch = m[0];
    const at = m.index ?? 0;
    // Keep line breaks, tabs and the emoji/text presentation selectors (benign and common) as plain text.
    if (
      ch === '\n' ||
      ch === '\t' ||
      ch === '\ufe0f' ||
      ch === '\ufe0e' ||
      (ch === '\r' && text[at + 1] === '\n')
    )
      continue;
    if (at > last) out.push({ kind: 'text', value: text.slice(last, at) });
    const codePoint = ch.codePointAt(0) ?? 0;
    out.push({ kind: 'mark', codePoint, label: unusualLabel(codePoint) });
    last = at + ch.length;
  }
  if (last < text.length) out.push({ kind: 'text', value: text.slice(last) });
  return out;
}

/** Number of unusual code points (a reviewer-facing count next to each reply). */
export function countUnusual(text: string): number {
  return segmentText(text).filter((s) => s.kind === 'mark').length;
}

export { escapeHtml };

/** Escaped HTML with unusual characters shown as highlighted markers (title = what it is). */
export function htmlText(text: string): string {
  return segmentText(text)
    .map((s) =>
      s.kind === 'text'
        ? escapeHtml(s.value)
        : `<span class="uc" title="${escapeHtml(s.label)}">⟦${escapeHtml(s.label)}⟧</span>`,
    )
    .join('');
}

/** Plain text with unusual characters replaced by ⟦markers⟧ (for Markdown code blocks, XML, SARIF). */
export function plainText(text: string): string {
  return segmentText(text)
    .map((s) => (s.kind === 'text' ? s.value : `⟦${s.label}⟧`))
    .join('');
}

/** Inline Markdown: one line, Markdown and HTML metacharacters neutralised. */
export function mdInline(text: string): string {
  return plainText(text)
    .replace(/\r?\n/g, ' ')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([\\`*_{}[\]()#+!|~])/g, '\\$1');
}

/** A fenced Markdown code block that its content cannot close (fence longer than any backtick run). */
export function mdFence(text: string, info = 'text'): string {
  const body = plainText(text);
  const longest = Math.max(0, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${body}\n${fence}`;
}

/** XML 1.0 text/attribute content: escaped, with characters XML cannot carry made visible. */
export function xmlText(text: string): string {
  return plainText(text)
    .replace(/[\uFFFE\uFFFF]/g, (c) => `⟦U+${c.charCodeAt(0).toString(16).toUpperCase()}⟧`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
    .replace(/\r/g, '&#13;');
}

/** Shortens a hash for display; the full value stays in a title/appendix. */
export function shortHash(hash: string, length = 12): string {
  return hash.slice(0, length);
}

/** Credentials must never reach a report, even if an upstream stage leaked one into a reference. */
export function redactSecrets(text: string): string {
  return text
    .replace(/\b(hf_[A-Za-z0-9]{8,}|sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{8,})\b/g, '[redacted]')
    .replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, '$1[redacted]')
    .replace(/([?&](?:api_?key|token|access_token|key)=)[^&#\s]+/gi, '$1[redacted]')
    .replace(/(\/\/)[^/@\s:]+:[^/@\s]+@/g, '$1[redacted]@');
}
