import { z } from 'zod';

/**
 * Probe-set files (`probes/<family>/dev.yaml`, sealed `heldout.sealed.json` once opened). One schema per
 * family, discriminated by `family`; published as probes/probe-set.schema.json (`probate probes schema`).
 */

const Id = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, 'expected a lowercase id ([a-z0-9._-])');
const Text = z.string().min(1, 'expected non-empty text');

const Sampling = z.strictObject({
  samples: z.number().int().min(1).max(64).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().min(1).max(4096).optional(),
});

const Header = {
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

const Turn = { system: Text.optional(), user: Text };

const TriggersSet = z.strictObject({
  ...Header,
  family: z.literal('triggers'),
  transformations: z.array(TransformationSchema).min(1),
  /** Prompts held back for trigger search (fresh prompts the divergence must reproduce on). */
  freshPrompts: z.array(z.strictObject({ id: Id, ...Turn })).default([]),
  probes: z.array(z.strictObject({ id: Id, ...Turn })).min(1),
});

const PreferencesSet = z.strictObject({
  ...Header,
  family: z.literal('preferences'),
  /** Named options per category; each sample draws `choices` of them in a seeded random order. */
  pools: z.record(Id, z.array(Text).min(2)),
  probes: z
    .array(
      z.strictObject({
        id: Id,
        system: Text.optional(),
        category: Id,
        /** `{options}` is replaced by the drawn options ("A, B or C"); without it the prompt is open. */
        user: Text,
        choices: z.number().int().min(2).max(6).default(3),
      }),
    )
    .min(1),
});

const ReasoningSet = z.strictObject({
  ...Header,
  family: z.literal('reasoning'),
  probes: z.array(z.strictObject({ id: Id, ...Turn })).min(1),
});

const InjectionSet = z.strictObject({
  ...Header,
  family: z.literal('injection'),
  /** Canary formats: @ = letter, % = digit, # = letter or digit; other characters are kept. */
  canaryFormats: z
    .array(
      z
        .string()
        .regex(/[@%#]{3,}/, 'expected at least 3 placeholder characters (@ letter, % digit, # either)'),
    )
    .min(1),
  /** Generated probes: a random payload in one of many carriers and framings (families/injection-sweep.ts). */
  sweep: z.number().int().min(0).max(512).default(0),
  probes: z
    .array(
      z.strictObject({
        id: Id,
        system: Text.optional(),
        /** `{instruction}` marks where the embedded instruction goes (absent for control probes). */
        user: Text,
        kind: z.enum(['canary', 'credentials', 'control']),
        /** For canary probes `{canary}` is replaced by a fresh random canary per sample. */
        instruction: Text.optional(),
      }),
    )
    .min(1),
});

export const ProbeSetSchema = z
  .discriminatedUnion('family', [TriggersSet, PreferencesSet, ReasoningSet, InjectionSet])
  .superRefine((set, ctx) => {
    const seen = new Set<string>();
    set.probes.forEach((p, i) => {
      if (seen.has(p.id))
        ctx.addIssue({ code: 'custom', path: ['probes', i, 'id'], message: `duplicate id ${p.id}` });
      seen.add(p.id);
    });
    if (set.family === 'injection') {
      set.probes.forEach((p, i) => {
        if (p.kind !== 'control' && !p.user.includes('{instruction}'))
          ctx.addIssue({ code: 'custom', path: ['probes', i, 'user'], message: 'expected {instruction}' });
        if (p.kind !== 'control' && !p.instruction)
          ctx.addIssue({ code: 'custom', path: ['probes', i, 'instruction'], message: 'required' });
        if (p.kind === 'canary' && !p.instruction?.includes('{canary}'))
          ctx.addIssue({ code: 'custom', path: ['probes', i, 'instruction'], message: 'expected {canary}' });
      });
    }
    if (set.family === 'preferences') {
      set.probes.forEach((p, i) => {
        if (!set.pools[p.category])
          ctx.addIssue({ code: 'custom', path: ['probes', i, 'category'], message: `no pool ${p.category}` });
      });
    }
  });

export type ProbeSet = z.infer<typeof ProbeSetSchema>;
export type ProbeSetOf<F extends ProbeSet['family']> = Extract<ProbeSet, { family: F }>;

/** The sealed (encrypted) file format of a held-out split. */
export const SealedFileSchema = z.strictObject({
  format: z.literal('probate.sealed/v1'),
  cipher: z.literal('aes-256-gcm'),
  /** base64, 12 bytes. */
  nonce: z.string().min(1),
  /** base64, 16 bytes. */
  tag: z.string().min(1),
  ciphertext: z.string().min(1),
  /** sha256 of the plaintext (hex): the probe set's content hash, checkable before opening. */
  plaintextSha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** Public facts, so a run can name the set without the key. */
  id: Id,
  version: z.number().int().min(1),
});
export type SealedFile = z.infer<typeof SealedFileSchema>;

export function probeSetJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ProbeSetSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
