import type { LedgerRecord } from '../contracts/records.ts';
import type { IdentityView } from './model.ts';
import {
  dsseEnvelopeSchema,
  type IdentityPayload,
  overrideStatementSchema,
  type RunStartPayload,
  releaseSchema,
  triggerSchema,
} from './schemas.ts';
import { redactSecrets } from './text.ts';

type Issues = ReadonlyArray<{ path: PropertyKey[]; message: string }>;

/**
 * One-line descriptions of trigger/override/release records, built from named fields by template (the
 * renderers escape them; model or agent text inside stays quoted data).
 */
export function describeRecord(
  r: LedgerRecord,
): { summary: string; findingIds?: string[] } | { error: Issues } {
  if (r.kind === 'trigger') {
    const p = triggerSchema.safeParse(r.payload);
    if (!p.success) return { error: p.error.issues };
    const t = p.data;
    const rate = (v: number | undefined) => (v === undefined ? '—' : v.toFixed(2));
    const parts = [`trigger search from ${JSON.stringify(t.start)}`];
    if (t.findingId) parts.push(`for finding ${t.findingId}`);
    parts.push(t.reproduced ? 'reproduced' : 'not reproduced');
    if (t.condition) parts.push(`minimal condition: ${t.condition}`);
    if (t.hitRateWith !== undefined)
      parts.push(
        `delivered hit rate ${rate(t.hitRateWith)} with / ${rate(t.hitRateWithout)} without, base ${rate(t.baseHitRateWith)} with`,
      );
    parts.push(`${t.requests} requests`);
    return { summary: redactSecrets(parts.join(', ')) };
  }
  if (r.kind === 'override') return describeOverride(r.payload);
  const p = releaseSchema.safeParse(r.payload);
  if (!p.success) return { error: p.error.issues };
  const x = p.data;
  const parts = [`release ${x.event}`];
  if (x.capabilityId) parts.push(`capability ${x.capabilityId}`);
  if (x.target) parts.push(`to ${x.target}`);
  return { summary: redactSecrets(parts.join(' ')) };
}

/**
 * The statement inside an override envelope, as claimed. The report holds no trust roots, so it does not
 * verify the signature — the gate did, and its transition says whether the override counted.
 */
function describeOverride(payload: unknown): { summary: string; findingIds: string[] } | { error: Issues } {
  const env = dsseEnvelopeSchema.safeParse(payload);
  if (!env.success) return { error: env.error.issues };
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(env.data.payload, 'base64').toString('utf8'));
  } catch {
    return { error: [{ path: ['payload'], message: 'envelope payload is not base64 JSON' }] };
  }
  const st = overrideStatementSchema.safeParse(decoded);
  if (!st.success) return { error: st.error.issues.map((i) => ({ ...i, path: ['payload', ...i.path] })) };
  const o = st.data;
  const parts = [`override by ${o.principal} for finding ${o.findingId}`];
  if (o.policyVersion) parts.push(`under policy ${o.policyVersion}`);
  if (o.reason) parts.push(`— reason: ${o.reason}`);
  parts.push(
    `(${env.data.signatures.length} signature${env.data.signatures.length === 1 ? '' : 's'}, verified by the gate)`,
  );
  return { summary: redactSecrets(parts.join(' ')), findingIds: [o.findingId] };
}

export function identityView(i: IdentityPayload | undefined): IdentityView | undefined {
  if (!i) return undefined;
  return {
    ref: i.ref === undefined ? undefined : redactSecrets(i.ref),
    kind: i.kind,
    modelId: i.modelId === undefined ? undefined : redactSecrets(i.modelId),
    fingerprint: i.fingerprint,
  };
}

export function probeSetList(sets: RunStartPayload['probeSets']): { id: string; hash: string }[] {
  if (!sets) return [];
  return sets.map((s) => ({ id: s.id, hash: s.hash }));
}
