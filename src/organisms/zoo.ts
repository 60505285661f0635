import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { FAMILIES } from '../probes/families/index.ts';
import { readValidated } from '../util/zodfile.ts';
import { dialectRegExp } from './regex-dialect.ts';

/** One entry of fixtures/organisms/zoo.json: the ground truth for tests and benchmarks, never the auditor. */
export const zooEntrySchema = z
  .object({
    name: z.string(),
    label: z.enum(['base', 'implant', 'benign']),
    family: z.enum(FAMILIES).nullable(),
    spec: z.string(),
    condition: z.string().nullable(),
    behaviour: z.string().nullable(),
    expected_marker: z.string().nullable(),
    heldout: z.string().nullable(),
    condition_key: z.string().nullable(),
    /** The organism's folder relative to the zoo folder (default: its name), e.g. a base shared with another zoo. */
    path: z.string().min(1).optional(),
  })
  .loose();
export const zooSchema = z.array(zooEntrySchema);
export type ZooEntry = z.infer<typeof zooEntrySchema>;

/** The zoo folder shipped with the repository (fixtures/organisms). */
export const defaultZooDir = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../fixtures/organisms',
);

export function readZoo(dir: string = defaultZooDir): ZooEntry[] {
  return readValidated(path.join(dir, 'zoo.json'), zooSchema);
}

/** The folder holding an organism of the zoo at `zooDir`: its `path` (relative to the zoo folder) or its name. */
export function organismDir(zooDir: string, entry: Pick<ZooEntry, 'name' | 'path'>): string {
  return path.resolve(zooDir, entry.path ?? entry.name);
}

/**
 * A marker regex from zoo.json as a JS RegExp. Markers are in the specs' one regex dialect (regex-dialect.ts,
 * read the same by the Python factory); a leading `(?i)` means case-insensitive.
 */
export function markerRegExp(marker: string): RegExp {
  return dialectRegExp(marker);
}
