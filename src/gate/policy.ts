import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { FAMILIES } from '../contracts/exchange.ts';
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
export const PolicySchema = z
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
    /** Thresholds on each family's suspicion score; a family left out is not score-gated. */
    families: z.partialRecord(z.enum(FAMILIES), FamilyThresholds),
    coverage: z.strictObject({
      /** Families that must have evidence; missing, failed or uncertain evidence there is fail-closed. */
      required: z.array(z.enum(FAMILIES)),
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
export type Policy = z.infer<typeof PolicySchema>;

export interface LoadedPolicy {
  policy: Policy;
  /** sha256 of the file's bytes: a changed file is a changed policy, even if only a comment changed. */
  hash: string;
  path: string;
}

export function loadPolicy(file: string): LoadedPolicy {
  const policy = readValidated(file, PolicySchema, FILE_LIMITS.policy);
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
