import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { FAMILY_REGISTRY } from '../probes/families/index.ts';
import type { FamilyRegistry } from '../probes/families/types.ts';
import { UserError } from '../util/errors.ts';
import { FILE_LIMITS } from '../util/file-size.ts';
import { sha256Hex } from '../util/hash.ts';
import { readValidated } from '../util/zodfile.ts';

const Action = z.enum(['block', 'review', 'pass']);
const Fraction = z.number().min(0).max(1);

const FamilyThresholds = z.strictObject({
  /** Family suspicion score at or above which a human must review. */
  review: Fraction,
  /** Family suspicion score at or above which the release is blocked. */
  block: Fraction,
});

/**
 * The gate policy (YAML). Deterministic: the same evidence under the same policy always yields the same
 * state. Versioned: approvals and overrides bind to `version` and to the file's sha256.
 */
export function policySchema(registry: FamilyRegistry = FAMILY_REGISTRY) {
  const families = Object.values(registry);
  const ids = z.enum(families.map((f) => f.id) as [string, ...string[]]);
  return z
    .strictObject({
      version: z.string().min(1),
      description: z.string().optional(),
      /** What a finding of each severity does. `critical` is always `block` (invariant 1). */
      severity: z.strictObject({
        critical: z.literal('block'),
        high: Action,
        medium: Action,
        low: Action,
        info: Action,
      }),
      /**
       * Thresholds on each family's suspicion score; a family left out is not score-gated. Without the table,
       * each family's own defaults (`FamilyDef.policy`).
       */
      families: z
        .partialRecord(ids, FamilyThresholds)
        .default(() =>
          Object.fromEntries(families.map((f) => [f.id, { review: f.policy.review, block: f.policy.block }])),
        ),
      coverage: z.strictObject({
        /**
         * Families that must have evidence; missing, failed or uncertain evidence there is fail-closed. Left
         * out: the families whose defaults say so (`FamilyDef.policy.coverageRequired`).
         */
        required: z
          .array(ids)
          .default(() => families.filter((f) => f.policy.coverageRequired).map((f) => f.id)),
        /** Minimum fraction of planned exchanges answered by both models, per required family. */
        minOkFraction: Fraction,
        /** Maximum failed exchanges tolerated per required family. */
        maxFailed: z.number().int().min(0),
        /** Maximum judge verdicts of `uncertain` tolerated per required family. */
        maxUncertain: z.number().int().min(0),
      }),
      judge: z.strictObject({ requireCalibrated: z.boolean() }),
      overrides: z.strictObject({
        /**
         * What an override of a critical finding achieves. `review`: the finding counts as high-for-review,
         * never as clear (BLOCKED → REVIEW_REQUIRED at best). `clear`: it is ignored like any overridden finding.
         */
        critical: z.enum(['review', 'clear']),
      }),
      attestation: z.strictObject({
        ttlSeconds: z
          .number()
          .int()
          .positive()
          .max(90 * 24 * 3600),
      }),
    })
    .refine((p) => Object.values(p.families).every((t) => t === undefined || t.review <= t.block), {
      message: 'each family needs review <= block',
      path: ['families'],
    });
}

export const PolicySchema = policySchema();
export type Policy = z.infer<typeof PolicySchema>;

export interface LoadedPolicy {
  policy: Policy;
  /** sha256 of the file's bytes: a changed file is a changed policy, even if only a comment changed. */
  hash: string;
  path: string;
}

/** Reads and validates a policy file; `families` supplies the family ids and defaults (tests pass their own). */
export function loadPolicy(file: string, families: FamilyRegistry = FAMILY_REGISTRY): LoadedPolicy {
  const schema = families === FAMILY_REGISTRY ? PolicySchema : policySchema(families);
  const policy: Policy = readValidated(file, schema, FILE_LIMITS.policy);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    throw new UserError(`${file}: cannot read`);
  }
  return { policy, hash: sha256Hex(bytes), path: file };
}

/** The policy shipped with probate (policies/default.yaml). */
export function defaultPolicyPath(): string {
  return new URL('../../policies/default.yaml', import.meta.url).pathname;
}
