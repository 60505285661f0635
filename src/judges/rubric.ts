import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { type FamilyId, SEVERITIES } from '../contracts/exchange.ts';
import { FAMILIES, FAMILY_REGISTRY } from '../probes/families/index.ts';
import type { FamilyRegistry } from '../probes/families/types.ts';
import { UserError } from '../util/errors.ts';
import { hashJson } from '../util/hash.ts';
import { readValidated } from '../util/zodfile.ts';

/** A rubric file (`judges/<id>.yaml`): what counts as the behaviour, how severe, and what does not count. */
export const RubricSchema = z
  .object({
    id: z.string().regex(/^[a-z][a-z0-9-]*$/, 'expected a lower-case id'),
    version: z.number().int().positive(),
    family: z.union([z.enum(FAMILIES), z.literal('general')]),
    title: z.string().min(1),
    /** The compact instruction small-context judges see (one line). */
    prompt: z.string().min(10).max(160),
    behaviour: z.string().min(10),
    severity: z
      .array(
        z.strictObject({
          level: z.enum(SEVERITIES),
          when: z.string().min(1),
          examples: z.array(z.string()).default([]),
        }),
      )
      .min(1),
    not_counted: z.array(z.string().min(1)).min(1),
  })
  .strict();

export type RubricSpec = z.infer<typeof RubricSchema>;

export interface Rubric extends RubricSpec {
  /** sha256 over the canonical rubric content: binds verdicts (and approvals) to the exact rubric. */
  hash: string;
}

export function loadRubricFile(file: string): Rubric {
  const spec = readValidated(file, RubricSchema);
  return { ...spec, hash: hashJson(spec) };
}

/** Rubrics by family, with `general` as the fallback for exchanges whose family has none. */
export interface RubricSet {
  byId: Map<string, Rubric>;
  /** Hash over all rubric hashes, sorted by id. */
  hash: string;
}

export function loadRubrics(dir: string): RubricSet {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => /\.ya?ml$/.test(f));
  } catch (err) {
    throw new UserError(
      `${dir}: cannot read rubric folder (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const byId = new Map<string, Rubric>();
  for (const f of files.sort()) {
    const rubric = loadRubricFile(join(dir, f));
    if (byId.has(rubric.id)) throw new UserError(`${join(dir, f)}: id: duplicate rubric id '${rubric.id}'`);
    byId.set(rubric.id, rubric);
  }
  if (byId.size === 0) throw new UserError(`${dir}: no rubric files (*.yaml)`);
  return { byId, hash: hashJson([...byId.values()].map((r) => [r.id, r.hash])) };
}

/** The rubric for a family: its declared default rubric (`FamilyDef.rubric`), else one declaring that family, else `general`. */
export function rubricFor(
  set: RubricSet,
  family: FamilyId,
  families: FamilyRegistry = FAMILY_REGISTRY,
): Rubric {
  const declared = families[family]?.rubric;
  const own = declared === undefined ? undefined : set.byId.get(declared);
  if (own) return own;
  for (const r of set.byId.values()) if (r.family === family) return r;
  const general = set.byId.get('general');
  if (!general) throw new UserError(`no rubric for family '${family}' and no 'general' rubric`);
  return general;
}

export function rubricById(set: RubricSet, id: string): Rubric {
  const r = set.byId.get(id);
  if (!r) throw new UserError(`unknown rubric '${id}' (have: ${[...set.byId.keys()].join(', ')})`);
  return r;
}

/** The full rubric text for judges with room for it. */
export function renderRubric(r: Rubric): string {
  const levels = r.severity
    .map(
      (s) =>
        `- ${s.level}: ${s.when}${s.examples.length ? ` e.g. ${s.examples.map((e) => JSON.stringify(e)).join('; ')}` : ''}`,
    )
    .join('\n');
  return [
    `Rubric: ${r.title} (${r.id} v${r.version})`,
    `Behaviour to flag: ${r.behaviour}`,
    `Severity levels:\n${levels}`,
    `Does NOT count (verdict clear):\n${r.not_counted.map((n) => `- ${n}`).join('\n')}`,
  ].join('\n\n');
}
