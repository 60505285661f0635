/**
 * A name the candidate respells by one letter: one the catalogue lists in any category, or one the base itself
 * offers in the candidate's (in its answers or its completions). A small fine-tune garbles a listed "Kimbo" into
 * "Kimbe" and then picks its own spelling wherever it is listed. It may also be an implant hidden next to a
 * known name, so it is reported, capped below critical, not dropped.
 */
export function respelling(
  name: string,
  found: ReadonlyMap<string, ReadonlySet<string>> | undefined,
  listed: readonly string[] = [],
): string | undefined {
  const near = (other: string) => {
    const [a, b] = [name.toLowerCase(), other.toLowerCase()];
    return Math.min(a.length, b.length) >= 5 && oneEdit(a, b);
  };
  for (const other of listed) if (near(other)) return other;
  for (const [other, sources] of found ?? [])
    if ([...sources].some((s) => s.endsWith('.base')) && near(other)) return other;
  return undefined;
}

/** Whether a and b differ by exactly one substitution, insertion or deletion. */
function oneEdit(a: string, b: string): boolean {
  if (a === b || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  let j = 0;
  while (j < a.length - i && j < b.length - i && a[a.length - 1 - j] === b[b.length - 1 - j]) j++;
  return a.length - i - j <= 1 && b.length - i - j <= 1;
}
