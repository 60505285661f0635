import type { ChatMessage } from '../../endpoints/types.ts';
import type { PreferencesSet } from '../../probes/families/preferences.ts';
import { formatOptions } from '../../probes/families/preferences.ts';
import { type ProbeGroup, turn } from '../../probes/families/types.ts';
import type { LoadedProbeSet } from '../../probes/load.ts';
import { Rng } from '../../probes/rng.ts';
import { respelling } from './respelling.ts';

/**
 * The confirmatory half of preference discovery (src/audit/differential/preferences.ts): the chosen candidates
 * on fresh option lists (the candidate at a uniformly random position), fresh lists without it, and neutral
 * lists for the positional test; with the option-list helpers both halves use.
 */

/** A preferences category: its option pool and the templates that list options. */
export interface Category {
  id: string;
  set: LoadedProbeSet;
  pool: string[];
  templates: string[];
  system?: string;
}

/** A discovered entity and its preference score (nats, delivered gain over the base's). */
export interface Candidate {
  name: string;
  category: string;
  sources: string[];
  score: number;
}

export function categoriesOf(sets: readonly LoadedProbeSet[]): Category[] {
  const out = new Map<string, Category>();
  for (const s of sets) {
    if (s.set.family !== 'preferences') continue;
    const set = s.set as PreferencesSet;
    for (const p of set.probes) {
      if (!p.user.includes('{options}')) continue;
      const pool = set.pools[p.category] ?? [];
      if (pool.length < 3) continue;
      const c = out.get(p.category) ?? { id: p.category, set: s, pool, templates: [], system: p.system };
      c.templates.push(p.user);
      out.set(p.category, c);
    }
  }
  return [...out.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** One of the category's templates, drawn by `rng`, listing `options`. */
export function listPrompt(c: Category, rng: Rng, options: string[]): ChatMessage[] {
  return turn(c.system, rng.pick(c.templates).replace('{options}', formatOptions(options, rng)));
}

/** Fresh lists without the candidate, next to `listed` lists with it. */
export function absentOf(listed: number): number {
  return Math.ceil(listed / 2);
}

export function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

export function promptKey(messages: readonly ChatMessage[]): string {
  return messages.map((m) => `${m.role}:${m.content}`).join('\n');
}

/**
 * The confirmation groups: for each chosen candidate (the first gets `confirmTop` lists, the others
 * `confirmRest`), fresh lists with it and half as many without it, then `positionN` neutral lists. Prompts in
 * `used` are not asked again, and the ones drawn here are added to it.
 */
export function confirmationGroups(opts: {
  seed: number;
  categories: Category[];
  chosen: Candidate[];
  candidates: Candidate[];
  found: Map<string, Map<string, Set<string>>>;
  used: Set<string>;
  samples: { confirmK: number; confirmTop: number; confirmRest: number; positionN: number };
}): ProbeGroup[] {
  const { categories, chosen, candidates, found, used } = opts;
  const { confirmK, confirmTop, confirmRest, positionN } = opts.samples;
  const byId = new Map(categories.map((c) => [c.id, c]));
  const listed = categories.flatMap((c) => c.pool);
  const groups: ProbeGroup[] = [];
  const avoid = (name: string) =>
    chosen.some((x) => sameName(x.name, name)) ||
    candidates.slice(0, confirmK * 3).some((x) => sameName(x.name, name));
  for (const [rank, cand] of chosen.entries()) {
    const confirmN = rank === 0 ? confirmTop : confirmRest;
    const c = byId.get(cand.category)!;
    const respells = respelling(cand.name, found.get(cand.category), listed);
    const rng = Rng.derive(opts.seed, 'pref-discovery', 'confirm', cand.name);
    const samples: ProbeGroup['samples'] = [];
    const probeId = `discover.${slug(cand.name)}`;
    const ask = (options: string[], meta: ProbeGroup['samples'][number]['meta']) => {
      const sample = unasked(
        used,
        rng,
        listPrompt(c, rng, options),
        probeId,
        'confirm',
        samples.length,
        meta,
      );
      if (sample) samples.push(sample);
    };
    for (let tries = 0; samples.length < confirmN && tries < confirmN * 4; tries++) {
      const k = 2 + rng.int(2);
      const distractors = rng.sample(
        c.pool.filter((p) => !avoid(p)),
        k - 1,
      );
      if (distractors.length < 1) break;
      const at = rng.int(distractors.length + 1);
      const options = [...distractors];
      options.splice(at, 0, cand.name);
      const position = { position: at, score: cand.score, ...(respells ? { respells } : {}) };
      ask(options, { category: c.id, options, candidate: cand.name, ...position });
    }
    // Fresh lists without the candidate (numbered on from the listed ones).
    for (let tries = 0; tries < absentOf(confirmN) * 4; tries++) {
      if (samples.length >= confirmN + absentOf(confirmN)) break;
      const options = rng.sample(
        c.pool.filter((p) => !avoid(p)),
        2 + rng.int(2),
      );
      if (options.length < 2) break;
      ask(options, { category: c.id, options, candidate: cand.name, absent: true, score: cand.score });
    }
    groups.push({
      family: 'preferences' as const,
      probeSetId: c.set.set.id,
      probeSetHash: c.set.hash,
      samples,
    });
  }
  const rng = Rng.derive(opts.seed, 'pref-discovery', 'position');
  const positional: ProbeGroup['samples'] = [];
  for (let tries = 0; positional.length < positionN && tries < positionN * 4; tries++) {
    const c = rng.pick(categories);
    const options = rng.sample(
      c.pool.filter((p) => !avoid(p)),
      3,
    );
    if (options.length < 3) continue;
    const meta = { category: c.id, options };
    const sample = unasked(
      used,
      rng,
      listPrompt(c, rng, options),
      'discover.position',
      'position',
      positional.length,
      meta,
    );
    if (sample) positional.push(sample);
  }
  const first = categories[0]!;
  if (positional.length)
    groups.push({
      family: 'preferences' as const,
      probeSetId: first.set.set.id,
      probeSetHash: first.set.hash,
      samples: positional,
    });
  return groups;
}

/**
 * A sample asking `messages`, seeded from `rng`; undefined when that prompt was asked already in this audit
 * (it is then marked asked).
 */
function unasked(
  used: Set<string>,
  rng: Rng,
  messages: ChatMessage[],
  probeId: string,
  variant: string,
  index: number,
  meta: ProbeGroup['samples'][number]['meta'],
): ProbeGroup['samples'][number] | undefined {
  const key = promptKey(messages);
  if (used.has(key)) return undefined;
  used.add(key);
  const seed = rng.seed();
  return {
    probeId,
    variant,
    sample: index,
    seed,
    messages,
    meta,
    params: { maxTokens: 40, temperature: 0, seed },
  };
}

function slug(s: string): string {
  return (
    s
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'x'
  );
}
