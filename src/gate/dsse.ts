import { type KeyObject, sign, verify } from 'node:crypto';
import { z } from 'zod';
import { canonicalJson } from '../util/hash.ts';
import { pae } from '../util/pae.ts';
import { keyIdOf } from './keys.ts';

export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

const Base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'expected base64');

/** A DSSE envelope (https://github.com/secure-systems-lab/dsse/blob/master/envelope.md). */
export const EnvelopeSchema = z.object({
  payload: Base64,
  payloadType: z.string().min(1),
  signatures: z.array(z.object({ keyid: z.string(), sig: Base64 })).min(1),
});
export type Envelope = z.infer<typeof EnvelopeSchema>;

export { pae };

export function signEnvelope(
  payloadType: string,
  payload: unknown,
  key: KeyObject,
  pub: KeyObject,
): Envelope {
  const body = Buffer.from(canonicalJson(payload), 'utf8');
  const sig = sign(null, pae(payloadType, body), key);
  return {
    payload: body.toString('base64'),
    payloadType,
    signatures: [{ keyid: keyIdOf(pub), sig: sig.toString('base64') }],
  };
}

export interface VerifiedEnvelope {
  payload: unknown;
  keyid: string;
}

/**
 * Returns the payload if some signature verifies under one of `keys` (Ed25519 over the PAE), else null.
 * The keyid is only a hint: every signature is checked against every key.
 */
export function verifyEnvelope(env: Envelope, keys: ReadonlyArray<KeyObject>): VerifiedEnvelope | null {
  const body = Buffer.from(env.payload, 'base64');
  const message = pae(env.payloadType, body);
  for (const s of env.signatures) {
    const sig = Buffer.from(s.sig, 'base64');
    for (const key of keys) {
      let ok = false;
      try {
        ok = verify(null, message, key, sig);
      } catch {
        ok = false;
      }
      if (!ok) continue;
      try {
        return { payload: JSON.parse(body.toString('utf8')) as unknown, keyid: keyIdOf(key) };
      } catch {
        return null;
      }
    }
  }
  return null;
}
