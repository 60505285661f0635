import type { KeyObject } from 'node:crypto';
import { z } from 'zod';
import { signEnvelope } from './dsse.ts';
import { checkPrincipalEnvelope } from './override.ts';
import type { Trust } from './trust.ts';

export const POLICY_CHANGE_PAYLOAD_TYPE = 'application/vnd.probate.policy-change+json';
export const POLICY_CHANGE_TYPE = 'https://probate.dev/policy-change/v1';

/** What a principal signs to change the gate's policy: from one pinned hash to the next, with a reason. */
export const PolicyChangeSchema = z.strictObject({
  _type: z.literal(POLICY_CHANGE_TYPE),
  previousHash: z.string().regex(/^[0-9a-f]{64}$/),
  policyHash: z.string().regex(/^[0-9a-f]{64}$/),
  policyVersion: z.string().min(1),
  principal: z.string().min(1),
  reason: z.string().min(1).max(2000),
  createdAt: z.string(),
});
export type PolicyChange = z.infer<typeof PolicyChangeSchema>;

export function signPolicyChange(change: PolicyChange, key: KeyObject, pub: KeyObject) {
  return signEnvelope(POLICY_CHANGE_PAYLOAD_TYPE, PolicyChangeSchema.parse(change), key, pub);
}

export type PolicyChangeCheck = { ok: true; change: PolicyChange } | { ok: false; reason: string };

/**
 * A policy change counts only if it is signed by the principal it names (trusted, not forbidden), moves
 * from the currently pinned hash, and names exactly the new file's hash and version.
 */
export function checkPolicyChange(
  raw: unknown,
  trust: Trust,
  expected: { previousHash: string; policyHash: string; policyVersion: string },
): PolicyChangeCheck {
  const c = checkPrincipalEnvelope(raw, trust, POLICY_CHANGE_PAYLOAD_TYPE);
  if (!c.ok) return c;
  const parsed = PolicyChangeSchema.safeParse(c.payload);
  if (!parsed.success) return { ok: false, reason: 'malformed policy-change statement' };
  const s = parsed.data;
  if (c.signer !== s.principal) return { ok: false, reason: `signer is not principal '${s.principal}'` };
  if (s.previousHash !== expected.previousHash)
    return { ok: false, reason: 'signed against a policy that is no longer the pinned one' };
  if (s.policyHash !== expected.policyHash || s.policyVersion !== expected.policyVersion)
    return { ok: false, reason: 'signed for another policy file' };
  return { ok: true, change: s };
}
