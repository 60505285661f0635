import { type KeyObject, sign, verify } from 'node:crypto';
import { z } from 'zod';
import type { RecordKind } from '../contracts/records.ts';
import { canonicalJson, sha256Hex } from '../util/hash.ts';
import { pae } from '../util/pae.ts';

/**
 * Gate records (transition, override, release) carry the gate's Ed25519 signature in `gateSig`, over the
 * record's kind, its sequence number and the rest of its payload (which names the manifest hash it was
 * decided on). A record appended by anyone else — an unsigned COMMITTABLE transition, a signed one replayed
 * at another position or from another run — does not verify against gate.pub.
 */
export const GATE_RECORD_PAYLOAD_TYPE = 'application/vnd.probate.gate-record+json';

export const GateSigSchema = z.strictObject({
  keyid: z.string().regex(/^[0-9a-f]{64}$/),
  sig: z.string().regex(/^[A-Za-z0-9+/]+={0,2}$/),
});
export type GateSig = z.infer<typeof GateSigSchema>;

function signedBytes(kind: RecordKind, seq: number, payload: Record<string, unknown>): Buffer {
  const { gateSig: _omit, ...rest } = payload;
  return pae(GATE_RECORD_PAYLOAD_TYPE, Buffer.from(canonicalJson({ kind, seq, payload: rest }), 'utf8'));
}

export function keyIdOfPub(pub: KeyObject): string {
  return sha256Hex(pub.export({ type: 'spki', format: 'der' }));
}

/** Returns the payload with its `gateSig` for the record that will be stored at `seq`. */
export function signGateRecord(
  kind: RecordKind,
  seq: number,
  payload: Record<string, unknown>,
  key: KeyObject,
  pub: KeyObject,
): Record<string, unknown> {
  const sig = sign(null, signedBytes(kind, seq, payload), key).toString('base64');
  return { ...payload, gateSig: { keyid: keyIdOfPub(pub), sig } };
}

export type GateSigCheck = 'verified' | 'unsigned' | 'bad-signature';

/** Checks a gate record's signature against the gate's public key. */
export function checkGateRecord(
  kind: RecordKind,
  seq: number,
  payload: unknown,
  pub: KeyObject,
): GateSigCheck {
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) return 'unsigned';
  const p = payload as Record<string, unknown>;
  const gs = GateSigSchema.safeParse(p.gateSig);
  if (!gs.success) return 'unsigned';
  try {
    return verify(null, signedBytes(kind, seq, p), pub, Buffer.from(gs.data.sig, 'base64'))
      ? 'verified'
      : 'bad-signature';
  } catch {
    return 'bad-signature';
  }
}
