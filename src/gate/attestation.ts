import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { ManifestSchema, manifestHash } from '../ledger/manifest.ts';
import { type Envelope, EnvelopeSchema, IN_TOTO_PAYLOAD_TYPE, verifyEnvelope } from './dsse.ts';
import type { Subject } from './weights.ts';

export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
export const PREDICATE_TYPE = 'https://probate.dev/audit/v1';
export const ATTESTATION_FILE = 'attestation.dsse.json';

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);

export const AuditPredicateSchema = z.object({
  manifest: ManifestSchema,
  manifestHash: Hex64,
  evidenceRoot: Hex64,
  lineage: Hex64,
  verdict: z.object({ state: z.literal('COMMITTABLE'), reasons: z.array(z.string()) }),
  policy: z.object({ version: z.string(), hash: Hex64 }),
  findings: z.object({
    total: z.number().int().min(0),
    bySeverity: z.record(z.string(), z.number().int().min(0)),
    overridden: z.array(z.string()),
  }),
  capability: z.object({ id: z.string().regex(/^[0-9a-f]{32}$/), expiresAt: z.string() }),
  issuedAt: z.string(),
});
export type AuditPredicate = z.infer<typeof AuditPredicateSchema>;

export const StatementSchema = z.object({
  _type: z.literal(STATEMENT_TYPE),
  subject: z.array(z.object({ name: z.string().min(1), digest: z.object({ sha256: Hex64 }) })).min(1),
  predicateType: z.literal(PREDICATE_TYPE),
  predicate: AuditPredicateSchema,
});
export type Statement = z.infer<typeof StatementSchema>;

export function buildStatement(subject: Subject[], predicate: AuditPredicate): Statement {
  return { _type: STATEMENT_TYPE, subject, predicateType: PREDICATE_TYPE, predicate };
}

export type AttestationCheck =
  | { ok: true; statement: Statement; keyid: string }
  | { ok: false; reason: string; statement?: Statement };

/**
 * Signature, statement shape, internal bindings (manifest hash, evidence root), the approving policy = the
 * gate's pinned policy (`pinned.policyHash`), and expiry at `now`. Subject digests against a presented
 * model are the caller's next step.
 */
export function checkAttestation(
  raw: unknown,
  pub: KeyObject,
  pinned: { policyHash: string },
  now: Date = new Date(),
): AttestationCheck {
  const env = EnvelopeSchema.safeParse(raw);
  if (!env.success) return { ok: false, reason: 'not a DSSE envelope' };
  if (env.data.payloadType !== IN_TOTO_PAYLOAD_TYPE)
    return { ok: false, reason: 'payloadType is not in-toto' };
  const verified = verifyEnvelope(env.data, [pub]);
  if (!verified) return { ok: false, reason: 'signature does not verify with the gate key' };
  const parsed = StatementSchema.safeParse(verified.payload);
  if (!parsed.success) return { ok: false, reason: 'not a probate in-toto statement' };
  const statement = parsed.data;
  const p = statement.predicate;
  if (manifestHash(p.manifest) !== p.manifestHash)
    return { ok: false, reason: 'manifest hash does not match', statement };
  if (p.manifest.evidenceRoot !== p.evidenceRoot)
    return { ok: false, reason: 'evidence root mismatch', statement };
  if (p.policy.hash !== pinned.policyHash)
    return {
      ok: false,
      reason: `approved under policy ${p.policy.hash.slice(0, 12)}…, not the gate's pinned policy ${pinned.policyHash.slice(0, 12)}…`,
      statement,
    };
  const expires = Date.parse(p.capability.expiresAt);
  if (!Number.isFinite(expires) || expires <= now.getTime())
    return { ok: false, reason: `expired at ${p.capability.expiresAt}`, statement };
  return { ok: true, statement, keyid: verified.keyid };
}

export type { Envelope };
