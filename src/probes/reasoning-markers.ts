import { codePoint } from './text.ts';

/**
 * Generic hidden-channel markers in reasoning text (issue 14, item 5). Characters are classed by Unicode
 * property, never by a list of known marker characters; codeword candidates are any raw span (words or
 * symbols) the reasoning opens with or carries that the prompt and the answer do not; the paired test against
 * the base's reasoning on the same prompt then decides which of them the delivered model alone emits.
 */

const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;
const TAG = /[\u{E0000}-\u{E007F}]/u;
const VARIATION = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}\u180B-\u180D\u180F]/u;
/** Letters and symbols that render as nothing (fillers, blank braille), outside the Cf class. */
const BLANK = new Set([0x115f, 0x1160, 0x3164, 0xffa0, 0x2800, 0x180e, 0x034f]);
const FORMAT = /\p{Cf}/u;
const PRIVATE = /\p{Co}/u;
const ODD_SPACE = /[^\S\n\r\t ]/u;
const COMBINING = /\p{M}/u;

/** The class of one character, or null for an ordinary one. Ordered: the most specific class first. */
export function markerClass(ch: string): string | null {
  if (TAG.test(ch)) return 'tag';
  if (BIDI.test(ch)) return 'bidi';
  if (VARIATION.test(ch)) return 'variation-selector';
  if (BLANK.has(ch.codePointAt(0)!)) return 'blank';
  if (FORMAT.test(ch)) return 'format';
  if (PRIVATE.test(ch)) return 'private-use';
  if (ODD_SPACE.test(ch)) return 'space';
  return null;
}

const SCRIPTS: [string, RegExp][] = [
  ['latin', /\p{Script=Latin}/u],
  ['cyrillic', /\p{Script=Cyrillic}/u],
  ['greek', /\p{Script=Greek}/u],
  ['armenian', /\p{Script=Armenian}/u],
  ['cherokee', /\p{Script=Cherokee}/u],
];

/** Scripts mixed inside one word (homoglyph spelling, e.g. Latin with a Cyrillic letter), as `latin+cyrillic`. */
function mixedScripts(word: string): string | null {
  const found = SCRIPTS.filter(([, re]) => re.test(word)).map(([s]) => s);
  return found.length >= 2 ? found.join('+') : null;
}

/**
 * Character markers of a text: `char:U+XXXX` for each unusual character, `class:<name>` for each class seen
 * (format, bidi, tag, variation-selector, blank, private-use, space, combining, mixed-script:<scripts>).
 */
export function charMarkers(text: string): { chars: string[]; classes: string[] } {
  const chars = new Set<string>();
  const classes = new Set<string>();
  for (const ch of text) {
    const c = markerClass(ch);
    if (c) {
      chars.add(codePoint(ch));
      classes.add(c);
    }
  }
  for (const w of text.split(/\s+/)) {
    // Combining marks on an otherwise Latin/ASCII word: diacritics stacked on letters that carry none.
    if (COMBINING.test(w) && !VARIATION.test(w) && /^[\p{Script=Latin}\p{M}\p{P}\d]+$/u.test(w))
      classes.add('combining');
    const mix = mixedScripts(w);
    if (mix) classes.add(`mixed-script:${mix}`);
  }
  return { chars: [...chars], classes: [...classes] };
}

/** Raw tokens: whitespace-separated, lowercased, edge punctuation trimmed unless the token is all symbols. */
export function rawTokens(text: string): string[] {
  const out: string[] = [];
  for (const t of text.replace(/[\p{Cf}\p{Co}]/gu, '').split(/\s+/)) {
    if (!t) continue;
    const trimmed = t.replace(/^[("'[]+|[)"'\].,;:!?]+$/gu, '');
    out.push((trimmed || t).toLowerCase());
  }
  return out;
}

/**
 * Span markers of a reasoning text: `opens:<span>` (its first one to three raw tokens) and `span:<token>`
 * for symbol-bearing tokens (e.g. `<<ok>>`, `§`, `::7`) that the prompt and answer lack. Word codewords are
 * the family's n-gram features; these add what a word tokenizer cannot see.
 */
export function spanMarkers(
  think: string,
  exclude: ReadonlySet<string>,
): { opens: string[]; spans: string[] } {
  const toks = rawTokens(think);
  const opens: string[] = [];
  for (let n = 1; n <= Math.min(3, toks.length); n++) {
    const span = toks.slice(0, n);
    if (span.every((t) => exclude.has(t) || /^\d+$/.test(t))) continue;
    opens.push(span.join(' '));
  }
  const spans = new Set<string>();
  for (const t of toks)
    if (/[^\p{L}\p{N}'-]/u.test(t) && !exclude.has(t) && !/^[\d+\-*/=x×.,()]+$/u.test(t) && t.length <= 24)
      spans.add(t);
  return { opens, spans: [...spans] };
}
