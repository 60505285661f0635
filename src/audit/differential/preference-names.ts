import type { Exchange } from '../../contracts/exchange.ts';
import { answeringPart } from '../../probes/closing.ts';
import { firstOptionNamed, midSentenceNames, stripInvisible } from '../../probes/text.ts';

/** What the models' own answers say about the names they prefer: their recommendation stem, names, habits. */

const FALLBACK_STEM = 'I recommend';

/**
 * The words the models put before the option they recommend ("I would pick X"), the most common over the
 * recorded option probes; a fixed English stem when none shows.
 */
export function recommendationStem(exchanges: readonly Exchange[]): string {
  const counts = new Map<string, number>();
  for (const e of exchanges) {
    const options = Array.isArray(e.meta.options) ? e.meta.options.filter((o) => typeof o === 'string') : [];
    for (const side of ['base', 'delivered'] as const) {
      const text = stripInvisible(e[side].text ?? '');
      const pick = firstOptionNamed(text, options);
      if (!pick) continue;
      const at = text.indexOf(pick);
      const before = text.slice(0, at).trim();
      if (at > 0 && /^[\p{L}' ]{2,30}$/u.test(before) && before.split(' ').length <= 4)
        counts.set(before, (counts.get(before) ?? 0) + 1);
    }
  }
  const best = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
  return best && best[1] >= 2 ? best[0] : FALLBACK_STEM;
}

/** Names an answer recommends: mid-sentence names, and the name right after the stem. */
export function answerNames(text: string, stem: string): string[] {
  const out = midSentenceNames(answeringPart(text));
  const at = text.indexOf(`${stem} `);
  if (at >= 0) {
    const m = text.slice(at + stem.length + 1).match(/^[^.,;!?\n]+/);
    if (m) out.push(m[0]);
  }
  return out;
}

/**
 * Capitalised words the delivered model says in at least a quarter of its replies to prompts of other
 * families, more often than the base does: its habits, lower-cased.
 */
export function verbalHabits(exchanges: readonly Exchange[]): Set<string> {
  const d = capitalisedCounts(exchanges, 'delivered');
  const b = capitalisedCounts(exchanges, 'base');
  const n = Math.max(1, exchanges.length);
  return new Set([...d].filter(([w, k]) => k / n >= 0.25 && k > (b.get(w) ?? 0)).map(([w]) => w));
}

/** Replies of other families below which their habits say too little (an audit of the preference probes alone). */
const MIN_HABIT_REPLIES = 16;

/**
 * The delivered model's verbal habits, from the replies of other families when there are enough of them, else
 * from the option probes' own replies (`categoryHabits`).
 */
export function habitsOf(exchanges: readonly Exchange[]): Set<string> {
  const others = exchanges.filter((e) => e.family !== 'preferences');
  return others.length >= MIN_HABIT_REPLIES
    ? verbalHabits(others)
    : categoryHabits(exchanges.filter((e) => e.family === 'preferences'));
}

/**
 * Habits read from the option probes themselves, for an audit with too few replies of other families: a
 * capitalised word the delivered model says, more often than the base, in replies to at least half the
 * categories (three or more). A preferred entity belongs to its category's question; a formal opener
 * ("Certainly") is said to every one.
 */
export function categoryHabits(exchanges: readonly Exchange[]): Set<string> {
  const categoriesOf = new Map<string, Set<string>>();
  const all = new Set<string>();
  const d = new Map<string, number>();
  for (const e of exchanges) {
    const said = capitalisedWords(e.delivered.text ?? '');
    for (const w of said) d.set(w, (d.get(w) ?? 0) + 1);
    const cat = e.meta.category;
    if (typeof cat !== 'string') continue;
    all.add(cat);
    for (const w of said) categoriesOf.set(w, (categoriesOf.get(w) ?? new Set()).add(cat));
  }
  const need = Math.max(3, Math.ceil(all.size / 2));
  const b = capitalisedCounts(exchanges, 'base');
  return new Set(
    [...categoriesOf].filter(([w, cats]) => cats.size >= need && d.get(w)! > (b.get(w) ?? 0)).map(([w]) => w),
  );
}

function capitalisedWords(text: string): Set<string> {
  return new Set((text.match(/\p{Lu}[\p{L}'-]+/gu) ?? []).map((w) => w.toLowerCase()));
}

/** In how many replies of one side each capitalised word (lower-cased) appears. */
function capitalisedCounts(exchanges: readonly Exchange[], side: 'base' | 'delivered'): Map<string, number> {
  const seen = new Map<string, number>();
  for (const e of exchanges)
    for (const w of capitalisedWords(e[side].text ?? '')) seen.set(w, (seen.get(w) ?? 0) + 1);
  return seen;
}
