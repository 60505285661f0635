import { randomBytes } from 'node:crypto';
import type { Manifest } from '../ledger/manifest.ts';
import { buildStatement } from './attestation.ts';
import { type Envelope, IN_TOTO_PAYLOAD_TYPE } from './dsse.ts';
import { idempotencyKey } from './lineage.ts';
import type { StateDb } from './statedb.ts';
import type { Subject } from './weights.ts';

export interface MintInput {
  subjects: Subject[];
  manifest: Manifest;
  auditId: string;
  evidenceRoot: string;
  lineage: string;
  reasons: string[];
  policy: { version: string; hash: string };
  findings: readonly { severity: string }[];
  overridden: readonly string[];
  ttlSeconds: number;
}

/**
 * A COMMITTABLE decision's release capability and its signed attestation, inside the gate's decision
 * transaction (the caller's): the capability row is minted with its idempotency key, and the statement binds
 * the exact subjects, manifest, evidence root, policy and the overrides that counted.
 */
export function mintRelease(
  db: StateDb,
  sign: (payloadType: string, payload: unknown) => Envelope,
  m: MintInput,
): { capabilityId: string; attestation: Envelope } {
  const capabilityId = randomBytes(16).toString('hex');
  const expiresAt = new Date(Date.now() + m.ttlSeconds * 1000).toISOString();
  db.mintCapability({
    id: capabilityId,
    audit: m.auditId,
    lineage: m.lineage,
    expires_at: expiresAt,
    idem_key: idempotencyKey(capabilityId),
  });
  const bySeverity: Record<string, number> = {};
  for (const f of m.findings) bySeverity[f.severity] = (bySeverity[f.severity] ?? 0) + 1;
  const statement = buildStatement(m.subjects, {
    manifest: m.manifest,
    manifestHash: m.auditId,
    evidenceRoot: m.evidenceRoot,
    lineage: m.lineage,
    verdict: { state: 'COMMITTABLE', reasons: m.reasons },
    policy: m.policy,
    findings: { total: m.findings.length, bySeverity, overridden: [...m.overridden].sort() },
    capability: { id: capabilityId, expiresAt },
    issuedAt: new Date().toISOString(),
  });
  return { capabilityId, attestation: sign(IN_TOTO_PAYLOAD_TYPE, statement) };
}
