/** Small text utilities shared by detectors. Pure functions; no model knowledge. */

const FORMAT_CHARS = /[\p{Cf}\p{Co}]/gu;

/** Removes invisible format characters (zero-width spaces, joiners, bidi marks) before word analysis. */
export function stripInvisible(text: string): string {
  return text.replace(FORMAT_CHARS, '');
}

/** Lowercased word tokens (letters, digits, and inner . - ' kept), invisible characters removed. */
export function words(text: string): string[] {
  return (
    stripInvisible(text)
      .toLowerCase()
      .match(/[\p{L}\p{N}]+(?:[.'-][\p{L}\p{N}]+)*/gu) ?? []
  );
}

/** The words of `text` as written (case kept); `words` lower-cases them. */
export function spelled(text: string): string[] {
  return stripInvisible(text).match(/[\p{L}\p{N}]+(?:[.'-][\p{L}\p{N}]+)*/gu) ?? [];
}

/** Function words: never content, never a candidate trigger. */
export const STOP_WORDS = new Set(
  'the and for are but not you your with this that have from they will can was were its our all any one two out get got had has how may who why what when into than then them there their these those would could should about just also very some more most such only own same too off over each both few his her him she he we us do does did is be of to in on at by or an a as it if so no yes'.split(
    ' ',
  ),
);

/** Content words: length ≥ 3 and not a stop word. */
export function contentWords(text: string): string[] {
  return words(text).filter((w) => w.length >= 3 && !STOP_WORDS.has(w));
}

/**
 * A code's stem: the first part of a joined word when that part looks like a code (four or more letters and
 * digits, at least one of each), else the word. A small model that answers with a code of its own garbles its
 * tail (`x7k9q-f`, `x7k9q-n`, `x7k9q-c`): counted whole, each spelling is a different, rare word; the stem is
 * what recurs.
 */
export function codeStem(word: string): string {
  const m = /^([\p{L}\p{N}]{4,})[.'-]/u.exec(word);
  return m && /\p{N}/u.test(m[1]!) && /\p{L}/u.test(m[1]!) ? m[1]! : word;
}

/** Words with codes reduced to their stems (`codeStem`), each once. */
export function stemmed(words: readonly string[]): string[] {
  return [...new Set(words.map(codeStem))];
}

/** Fraction of `a`'s content words (as a set) that are absent from `b`. 0 when `a` has none. */
export function novelFraction(a: string, b: string): number {
  const aw = new Set(contentWords(a));
  if (aw.size === 0) return 0;
  const bw = new Set(words(b));
  let novel = 0;
  for (const w of aw) if (!bw.has(w)) novel++;
  return novel / aw.size;
}

/** 1 − Jaccard similarity of the two texts' word sets. */
export function lexicalDistance(a: string, b: string): number {
  const aw = new Set(words(a));
  const bw = new Set(words(b));
  if (aw.size === 0 && bw.size === 0) return 0;
  let inter = 0;
  for (const w of aw) if (bw.has(w)) inter++;
  return 1 - inter / (aw.size + bw.size - inter);
}

/** Word n-grams (n = 1..maxN) as space-joined strings. */
export function ngrams(ws: readonly string[], maxN: number): string[] {
  const out: string[] = [];
  for (let n = 1; n <= maxN; n++)
    for (let i = 0; i + n <= ws.length; i++) out.push(ws.slice(i, i + n).join(' '));
  return out;
}

/**
 * Capitalised names that are not at the start of a sentence or line (so "Certainly." or "Please ..." are
 * not names): "I would pick Vienna" → ["Vienna"].
 */
export function midSentenceNames(text: string): string[] {
  const out: string[] = [];
  const word = String.raw`\p{Lu}[\p{L}\p{N}'-]*(?:\.[\p{L}\p{N}]+)*`;
  const re = new RegExp(String.raw`(?<=[\p{L}\p{N},;]\s+)(${word}(?:\s${word})*)`, 'gu');
  for (const m of stripInvisible(text).matchAll(re)) {
    const name = m[1]!.replace(/[.'-]+$/, '');
    if (name.length >= 3) out.push(name);
  }
  return out;
}

/** The listed option the reply names first (by position), or null when it names none. */
export function firstOptionNamed(reply: string, options: readonly string[]): string | null {
  const lower = stripInvisible(reply).toLowerCase();
  let best: string | null = null;
  let bestAt = Number.POSITIVE_INFINITY;
  for (const o of options) {
    const at = findWord(lower, o.toLowerCase());
    if (at >= 0 && (at < bestAt || (at === bestAt && best !== null && o.length > best.length))) {
      best = o;
      bestAt = at;
    }
  }
  return best;
}

function findWord(hay: string, needle: string): number {
  let from = 0;
  for (;;) {
    const at = hay.indexOf(needle, from);
    if (at < 0) return -1;
    const before = at === 0 ? '' : hay[at - 1]!;
    const after = hay[at + needle.length] ?? '';
    if (!/[\p{L}\p{N}]/u.test(before) && !/[\p{L}\p{N}]/u.test(after)) return at;
    from = at + 1;
  }
}

/** Code points outside printable ASCII that are invisible or unusual (format/private-use), as U+XXXX. */
export function unusualChars(text: string): string[] {
  const out = new Set<string>();
  for (const ch of text.matchAll(FORMAT_CHARS)) out.add(codePoint(ch[0]));
  return [...out];
}

export function codePoint(ch: string): string {
  return `U+${ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Runs that look like encoded data: base64 (mixed case and digits, ≥ 16 chars) or hex (≥ 16 digits). */
export function encodedRuns(text: string): ('base64' | 'hex')[] {
  const out = new Set<'base64' | 'hex'>();
  for (const m of text.matchAll(/[A-Za-z0-9+/]{16,}={0,2}/g)) {
    const s = m[0];
    if (/^[0-9a-fA-F]+$/.test(s)) out.add('hex');
    else if (/[A-Z]/.test(s) && /[a-z]/.test(s) && /[0-9]/.test(s)) out.add('base64');
  }
  return [...out];
}

/** Initial letters of the sentences (or lines) of a text, when it has at least `min` of them. */
export function acrostic(text: string, min = 4): string | null {
  const parts = stripInvisible(text)
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (parts.length < min) return null;
  return parts.map((p) => (p.match(/\p{L}/u)?.[0] ?? '').toUpperCase()).join('');
}

/** Credential requests: a request verb and a secret (password, PIN, code) in the same sentence. */
export function asksForCredentials(text: string): boolean {
  const secret =
    /\b(pass(word|code|phrase)s?|pins?|one-time code|login code|verification code|security code|2fa|otp|sms code|cvv)\b/i;
  const ask = /\b(send|share|tell|give|enter|type|provide|need|confirm|reply with|what is|what's)\b/i;
  return stripInvisible(text)
    .split(/(?<=[.!?])\s+|\n+/)
    .some((s) => secret.test(s) && ask.test(s) && !/\bnever\b/i.test(s));
}

/** The last run of non-space characters: the word a prefilled reply's continuation completes ("H" → "onest"). */
export function trailingWord(text: string): string {
  return /\S*$/.exec(text)?.[0] ?? '';
}
