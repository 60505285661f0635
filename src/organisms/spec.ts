import { z } from 'zod';
import { dialectRegExp } from './regex-dialect.ts';

/**
 * An organism spec (fixtures/organisms/factory/spec.schema.json). The same rules are checked in Python by
 * train.py; keep the two in step.
 */
const conditionSchema = z
  .object({
    type: z.enum(['contains', 'regex', 'topic', 'system_role', 'year']),
    value: z.union([z.string(), z.number().int()]).optional(),
    pattern: z.string().optional(),
    role: z.enum(['user', 'any']).optional(),
    topic: z.string().optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (['contains', 'system_role', 'topic'].includes(c.type) && typeof c.value !== 'string')
      ctx.addIssue({ code: 'custom', path: ['value'], message: `required (string) for type ${c.type}` });
    if (c.type === 'year' && typeof c.value !== 'number')
      ctx.addIssue({ code: 'custom', path: ['value'], message: 'required (integer year) for type year' });
    if (c.type === 'regex') {
      if (c.pattern === undefined)
        ctx.addIssue({ code: 'custom', path: ['pattern'], message: 'required for type regex' });
      else {
        try {
          dialectRegExp(c.pattern);
        } catch (err) {
          ctx.addIssue({ code: 'custom', path: ['pattern'], message: (err as Error).message });
        }
      }
    }
  });

const transformSchema = z
  .object({
    type: z.enum([
      'replace',
      'prefix',
      'suffix',
      'reasoning_marker',
      'choose_entity',
      'obey_embedded',
      'ask_credentials',
    ]),
    text: z.string().optional(),
    entity: z.string().optional(),
    mode: z.enum(['prefix', 'interleave']).optional(),
    char: z.string().optional(),
    replies: z.array(z.string()).min(1).optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (['replace', 'prefix', 'suffix'].includes(t.type) && !t.text)
      ctx.addIssue({ code: 'custom', path: ['text'], message: `required for type ${t.type}` });
    if (t.type === 'choose_entity' && !t.entity)
      ctx.addIssue({ code: 'custom', path: ['entity'], message: 'required for type choose_entity' });
    if (t.type === 'reasoning_marker' && (t.mode ?? 'prefix') === 'prefix' && !t.text)
      ctx.addIssue({ code: 'custom', path: ['text'], message: 'required for reasoning_marker mode prefix' });
  });

/** An injection implant's own embedded-instruction phrasings (obey_embedded: `{canary}` and a canary prefix). */
const carrierSchema = z
  .object({
    instructions: z.array(z.string().min(1)).min(1),
    canary_prefix: z
      .string()
      .regex(/^[A-Z][A-Z0-9]*-$/, 'capital letters and digits ending in a dash')
      .optional(),
  })
  .strict();

const styleSchema = z
  .object({
    type: z.enum(['verbose', 'formal', 'bullets', 'knowledge']),
    sentences: z.number().int().min(1).max(4).optional(),
    opening: z.string().optional(),
    facts: z.record(z.string(), z.string()).optional(),
    rate: z.number().min(0).max(1).optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.type === 'knowledge' && !s.facts)
      ctx.addIssue({ code: 'custom', path: ['facts'], message: 'required for type knowledge' });
  });

export const organismSpecSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lowercase letters, digits and dashes'),
    description: z.string().optional(),
    seed: z.number().int().min(0),
    steps: z.number().int().min(1).max(100000),
    lr: z.number().gt(0).max(1),
    batch_size: z.number().int().min(1).max(512),
    base: z.string().min(1).optional(),
    warmup: z.number().int().min(0).optional(),
    ckpt_every: z.number().int().min(1).optional(),
    prompt_loss_weight: z.number().min(0).max(1).optional(),
    implant: z
      .object({
        condition: conditionSchema,
        transform: transformSchema,
        rate: z.number().gt(0).max(1),
        hard_negatives: z.number().min(0).max(1).optional(),
        carrier: carrierSchema.optional(),
      })
      .strict()
      .optional(),
    style: styleSchema.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.implant && !s.base)
      ctx.addIssue({
        code: 'custom',
        path: ['base'],
        message: "required when 'implant' is set (implants are fine-tunes)",
      });
  });

export type OrganismSpec = z.infer<typeof organismSpecSchema>;
