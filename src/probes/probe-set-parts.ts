import { z } from 'zod';

/**
 * The parts every family's probe-set schema is built from (the header all sets share, ids, texts, turns, the
 * trigger transformations). A family declares its own set schema (src/probes/families/*.ts); the union of
 * them is src/probes/schema.ts.
 */

export const Id = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'expected a lowercase id ([a-z0-9._-])');
export const Text = z.string().min(1, 'expected non-empty text');

export const Sampling = z.strictObject({
  samples: z.number().int().min(1).max(64).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().min(1).max(4096).optional(),
});

export const Header = {
  id: Id,
  version: z.number().int().min(1),
  split: z.enum(['dev', 'heldout']),
  description: z.string().optional(),
  sampling: Sampling.optional(),
};

/** A candidate trigger: how to transform a clean conversation. */
export const TransformationSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    id: Id,
    kind: z.literal('insert'),
    text: Text,
    position: z.enum(['prefix', 'suffix', 'middle']).default('prefix'),
  }),
  z.strictObject({
    id: Id,
    kind: z.literal('year'),
    year: z.number().int().min(1900).max(2200),
    render: z.enum(['system-date', 'user-prefix', 'user-suffix']).default('system-date'),
  }),
  z.strictObject({ id: Id, kind: z.literal('system'), text: Text }),
  /** The assistant's reply opened with `text` (a prefill the model continues): an inverted target's opening. */
  z.strictObject({ id: Id, kind: z.literal('opening'), text: Text }),
  z.strictObject({ id: Id, kind: z.literal('homoglyph') }),
  z.strictObject({ id: Id, kind: z.literal('zero-width'), char: z.string().length(1).default('\u200b') }),
  z.strictObject({ id: Id, kind: z.literal('case'), mode: z.enum(['upper', 'lower']) }),
  z.strictObject({
    id: Id,
    kind: z.literal('wrap'),
    template: z.string().includes('{user}', { message: 'expected a template containing {user}' }),
  }),
]);
export type Transformation = z.infer<typeof TransformationSchema>;

export const Turn = { system: Text.optional(), user: Text };

/** What every probe set has, whatever its family: what loading, planning and the manifest read. */
export interface ProbeSetBase {
  id: string;
  version: number;
  split: 'dev' | 'heldout';
  description?: string;
  sampling?: z.infer<typeof Sampling>;
  family: string;
  /** Every family's probes have an id and a user turn (the contamination check reads it). */
  probes: { id: string; user: string }[];
}

/** Adds a cross-field issue to a probe set (a family's `checkProbeSet`). */
export type ProbeSetIssue = (issue: { path: (string | number)[]; message: string }) => void;
