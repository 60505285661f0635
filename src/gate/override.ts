import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { type Envelope, EnvelopeSchema, signEnvelope, verifyEnvelope } from './dsse.ts';
import { keyIdOf } from './keys.ts';
import type { Trust } from './trust.ts';

export const OVERRIDE_PAYLOAD_TYPE = 'application/vnd.probate.override+json';
export const OVERRIDE_TYPE = 'https://probate.dev/override/v1';

/** What a principal signs: one finding of one audit, under one policy version, with a reason. */
export const OverrideStatementSchema = z.strictObject({
  _type: z.literal(OVERRIDE_TYPE),
  manifestHash: z.string().regex(/^[0-9a-f]{64}$/),
  evidenceRoot: z.string().regex(/^[0-9a-f]{64}$/),
  findingId: z.string().min(1),
  policyVersion: z.string().min(1),
  /** sha256 of the policy the principal overrides under; when present it must be the gate's pinned one. */
  policyHash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  principal: z.string().min(1),
  reason: z.string().min(1).max(2000),
  createdAt: z.string(),
});
export type OverrideStatement = z.infer<typeof OverrideStatementSchema>;

export function signOverride(statement: OverrideStatement, key: KeyObject, pub: KeyObject): Envelope {
  return signEnvelope(OVERRIDE_PAYLOAD_TYPE, OverrideStatementSchema.parse(statement), key, pub);
}

export interface OverrideBinding {
  manifestHash: string;
  evidenceRoot: string;
  policyVersion: string;
  policyHash: string;
  findingIds: ReadonlySet<string>;
}

export type OverrideCheck =
  | { ok: true; statement: OverrideStatement; keyid: string }
  | { ok: false; reason: string };

export type PrincipalCheck =
  | { ok: true; payload: unknown; signer: string; keyid: string }
  | { ok: false; reason: string };

/**
 * A principal's signed act: a well-formed DSSE envelope of `payloadType`, signed by a key listed under
 * trust.yaml `principals` that is neither the gate's own nor `forbidden` (auditor, judge, CI keys).
 */
export function checkPrincipalEnvelope(raw: unknown, trust: Trust, payloadType: string): PrincipalCheck {
  const env = EnvelopeSchema.safeParse(raw);
  if (!env.success) return { ok: false, reason: 'not a DSSE envelope' };
  if (env.data.payloadType !== payloadType) return { ok: false, reason: 'wrong payloadType' };
  const keyids = new Set(env.data.signatures.map((s) => s.keyid));
  // A signature by a forbidden key is refused outright, whatever trust.yaml's principal list says.
  for (const keyid of keyids)
    if (trust.forbidden.has(keyid)) return { ok: false, reason: 'signed by the gate or a forbidden key' };
  const principals = trust.principals.filter((p) => !trust.forbidden.has(p.keyid));
  const verified = verifyEnvelope(
    env.data,
    principals.map((p) => p.key),
  );
  if (!verified) return { ok: false, reason: 'no valid signature by a trusted principal' };
  const signer = principals.find((p) => keyIdOf(p.key) === verified.keyid);
  if (!signer) return { ok: false, reason: 'no valid signature by a trusted principal' };
  return { ok: true, payload: verified.payload, signer: signer.name, keyid: verified.keyid };
}

/**
 * An override counts only if: it is a principal's signed act (checkPrincipalEnvelope) by the principal it
 * names; and it binds this manifest, this evidence root, the gate's policy (version, and hash when given)
 * and a finding that exists in the evidence.
 */
export function checkOverride(raw: unknown, trust: Trust, binding: OverrideBinding): OverrideCheck {
  const c = checkPrincipalEnvelope(raw, trust, OVERRIDE_PAYLOAD_TYPE);
  if (!c.ok) return c;
  const statement = OverrideStatementSchema.safeParse(c.payload);
  if (!statement.success) return { ok: false, reason: 'malformed override statement' };
  const s = statement.data;
  if (c.signer !== s.principal) return { ok: false, reason: `signer is not principal '${s.principal}'` };
  if (s.manifestHash !== binding.manifestHash) return { ok: false, reason: 'bound to a different manifest' };
  if (s.evidenceRoot !== binding.evidenceRoot)
    return { ok: false, reason: 'bound to a different evidence root' };
  if (s.policyVersion !== binding.policyVersion)
    return { ok: false, reason: 'bound to a different policy version' };
  if (s.policyHash !== undefined && s.policyHash !== binding.policyHash)
    return { ok: false, reason: "bound to a policy other than the gate's pinned one" };
  if (!binding.findingIds.has(s.findingId))
    return { ok: false, reason: `no finding '${s.findingId}' in this audit` };
  return { ok: true, statement: s, keyid: c.keyid };
}
