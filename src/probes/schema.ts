import { z } from 'zod';
import { FAMILY_REGISTRY } from './families/index.ts';
import type { FamilyRegistry } from './families/types.ts';
import { Id, type ProbeSetBase } from './probe-set-parts.ts';

export { type Transformation, TransformationSchema } from './probe-set-parts.ts';

/**
 * Probe-set files (`probes/<family>/dev.yaml`, sealed `heldout.sealed.json` once opened). One schema per
 * family, declared by the family (src/probes/families/), discriminated by `family`; published as
 * probes/probe-set.schema.json (`probate probes schema`).
 */

/** The probe-set schema of a family table: the union of its families' set schemas, discriminated by `family`. */
export function probeSetSchema(families: FamilyRegistry) {
  const defs = Object.values(families);
  const schemas = defs.map((f) => f.probeSet) as [z.ZodObject, ...z.ZodObject[]];
  return z.discriminatedUnion('family', schemas).superRefine((data, ctx) => {
    const set = data as unknown as ProbeSetBase;
    const seen = new Set<string>();
    set.probes.forEach((p, i) => {
      if (seen.has(p.id))
        ctx.addIssue({ code: 'custom', path: ['probes', i, 'id'], message: `duplicate id ${p.id}` });
      seen.add(p.id);
    });
    families[set.family]?.checkProbeSet?.(data, (issue) => ctx.addIssue({ code: 'custom', ...issue }));
  });
}

export const ProbeSetSchema = probeSetSchema(FAMILY_REGISTRY);

/** A parsed probe set of any family (its family's file narrows it: `SetOf<typeof triggers>`). */
export type ProbeSet = ProbeSetBase;

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
