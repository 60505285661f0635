import { cpSync, existsSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { request } from 'undici';
import { manifestHash, readManifest } from '../ledger/manifest.ts';
import { ExitCode, UserError } from '../util/errors.ts';
import { checkAttestation, type Statement } from './attestation.ts';
import type { GateState } from './decide.ts';
import { type GateService, lineageOf } from './service.ts';
import type { CapabilityRow } from './statedb.ts';
import { compareSubjects, digestWeights, localModelDir, type Subject, subjectsOf } from './weights.ts';

export interface ReleaseResult {
  state: 'RELEASED' | 'UNCERTAIN' | GateState;
  capabilityId: string;
  target: string;
  detail: string;
}

/** What a promotion attempt proved: done, provably not done, or unknown (reply lost, timeout). */
type Outcome = { kind: 'done' } | { kind: 'not-done'; why: string } | { kind: 'unknown'; why: string };

const refuse = (why: string): never => {
  throw new UserError(`release refused: ${why}`, ExitCode.BLOCKED);
};

function parseTarget(target: string): { kind: 'dir'; dir: string } | { kind: 'webhook'; url: string } {
  if (target.startsWith('webhook:')) {
    const url = target.slice('webhook:'.length);
    if (!/^https?:\/\//.test(url)) throw new UserError(`--to: webhook needs an http(s) URL, got '${url}'`);
    return { kind: 'webhook', url };
  }
  return { kind: 'dir', dir: resolve(target) };
}

async function promoteDir(
  source: string,
  dest: string,
  subjects: Subject[],
  capId: string,
): Promise<Outcome> {
  const tmp = join(dirname(dest), `.${capId}.probate-tmp`);
  try {
    rmSync(tmp, { recursive: true, force: true });
    cpSync(source, tmp, { recursive: true });
    const mismatch = compareSubjects(subjects, await digestWeights(tmp));
    if (mismatch) {
      rmSync(tmp, { recursive: true, force: true });
      return { kind: 'not-done', why: `copied weights differ from the attestation (${mismatch})` };
    }
    renameSync(tmp, dest);
    return { kind: 'done' };
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    // rename is the only step with an effect and it is atomic: a failure anywhere means nothing landed.
    if (existsSync(dest)) return { kind: 'unknown', why: (err as Error).message };
    return { kind: 'not-done', why: (err as NodeJS.ErrnoException).code ?? 'copy failed' };
  }
}

async function promoteWebhook(
  url: string,
  statement: Statement,
  cap: CapabilityRow,
  timeoutMs: number,
): Promise<Outcome> {
  const body = JSON.stringify({
    capabilityId: cap.id,
    subject: statement.subject,
    lineage: cap.lineage,
    manifestHash: statement.predicate.manifestHash,
    evidenceRoot: statement.predicate.evidenceRoot,
  });
  try {
    const res = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': cap.idem_key },
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    await res.body.dump();
    if (res.statusCode >= 200 && res.statusCode < 300) return { kind: 'done' };
    if (res.statusCode >= 400 && res.statusCode < 500)
      return { kind: 'not-done', why: `webhook refused: HTTP ${res.statusCode}` };
    return { kind: 'unknown', why: `webhook answered HTTP ${res.statusCode}` };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // A refused connection never reached the receiver; anything later may have been processed.
    if (code === 'ECONNREFUSED') return { kind: 'not-done', why: 'connection refused' };
    return { kind: 'unknown', why: code ?? (err as Error).message };
  }
}

/** Status query for reconcile: GET URL with the idempotency key; 200 {applied:true} or 404. */
async function webhookStatus(url: string, key: string, timeoutMs: number): Promise<Outcome> {
  try {
    const res = await request(url, {
      method: 'GET',
      headers: { 'idempotency-key': key },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await res.body.text();
    if (res.statusCode === 404) return { kind: 'not-done', why: 'receiver has no record of the key' };
    if (res.statusCode === 200 && (JSON.parse(text) as { applied?: unknown }).applied === true)
      return { kind: 'done' };
    return { kind: 'unknown', why: `status query answered HTTP ${res.statusCode}` };
  } catch (err) {
    return { kind: 'unknown', why: (err as NodeJS.ErrnoException).code ?? (err as Error).message };
  }
}

function settle(
  gate: GateService,
  cap: CapabilityRow,
  runDir: string,
  outcome: Outcome,
  target: string,
): ReleaseResult {
  const audit = gate.db.audit(cap.audit)!;
  const lineageName = gate.db.lineage(cap.lineage)?.name ?? cap.lineage;
  const policy = gate.policy();
  const record = (to: GateState, reasons: string[], event: string) => {
    gate.db.setState(audit.id, cap.lineage, lineageName, to);
    gate.db.addTransition({
      audit: audit.id,
      lineage: cap.lineage,
      from: 'UNCERTAIN',
      to,
      reasons,
      policyVersion: policy.policy.version,
      policyHash: policy.hash,
      capabilityId: cap.id,
    });
    return [
      { kind: 'release' as const, payload: { event, capabilityId: cap.id, target } },
      {
        kind: 'transition' as const,
        payload: {
          from: 'UNCERTAIN',
          to,
          reasons,
          lineage: cap.lineage,
          capabilityId: cap.id,
          policy: { version: policy.policy.version, hash: policy.hash },
        },
      },
    ];
  };
  if (outcome.kind === 'unknown')
    return {
      state: 'UNCERTAIN',
      capabilityId: cap.id,
      target,
      detail: `outcome unknown (${outcome.why}); capability stays reserved: run probate gate reconcile`,
    };
  const done = outcome.kind === 'done';
  const items = gate.db.tx(() => {
    if (done) {
      if (!gate.db.moveCapability(cap.id, 'reserved', 'consumed')) throw new Error('capability not reserved');
      return record('RELEASED', [`promoted to ${target}`], 'consumed');
    }
    const expired = Date.parse(cap.expires_at) <= Date.now();
    if (!gate.db.moveCapability(cap.id, 'reserved', expired ? 'void' : 'minted'))
      throw new Error('capability not reserved');
    return record('COMMITTABLE', [`nothing promoted: ${outcome.why}`], 'unreserved');
  });
  gate.appendToRun(runDir, items);
  return {
    state: done ? 'RELEASED' : 'COMMITTABLE',
    capabilityId: cap.id,
    target,
    detail: done ? `promoted to ${target}` : `nothing promoted: ${outcome.why}`,
  };
}

/**
 * Spends an attestation's single-use capability: verify, reserve (state UNCERTAIN) in one transaction,
 * promote, then settle. An unknown outcome leaves the reservation until `reconcile` finds evidence.
 */
export async function release(
  gate: GateService,
  raw: unknown,
  targetSpec: string,
  opts: { timeoutMs?: number } = {},
): Promise<ReleaseResult> {
  const check = checkAttestation(raw, gate.pub);
  if (!check.ok) return refuse(check.reason);
  const statement = check.statement;
  const capId = statement.predicate.capability.id;
  const cap = gate.db.capability(capId) ?? refuse('unknown capability');
  if (cap.audit !== statement.predicate.manifestHash) refuse('capability belongs to another audit');
  const audit = gate.db.audit(cap.audit) ?? refuse('unknown audit');
  if (cap.lineage !== lineageOf(statement.predicate.manifest).id)
    refuse('capability belongs to another lineage');
  const target = parseTarget(targetSpec);
  const targetName = target.kind === 'dir' ? target.dir : `webhook:${target.url}`;
  const subjects = statement.subject;
  let source: string | undefined;
  if (target.kind === 'dir') {
    source = localModelDir(statement.predicate.manifest.delivered.ref);
    if (!source) refuse('the delivered model is not a local directory; release it to a webhook');
    const mismatch = compareSubjects(subjects, await digestWeights(source!));
    if (mismatch) refuse(`delivered weights changed since approval: ${mismatch}`);
    if (existsSync(target.dir)) throw new UserError(`--to: ${target.dir} already exists`);
  }
  // Reserve: compare-and-set minted → reserved; a second (or concurrent) use finds it not minted.
  gate.db.tx(() => {
    const now = gate.db.capability(capId)!;
    if (now.status !== 'minted')
      refuse(
        `capability already ${now.status === 'reserved' ? 'reserved (UNCERTAIN; run probate gate reconcile)' : now.status}`,
      );
    if (gate.db.audit(audit.id)?.state !== 'COMMITTABLE')
      refuse(`audit is ${gate.db.audit(audit.id)?.state}`);
    gate.db.moveCapability(capId, 'minted', 'reserved', targetName);
    const policy = gate.policy();
    gate.db.setState(audit.id, cap.lineage, gate.db.lineage(cap.lineage)?.name ?? cap.lineage, 'UNCERTAIN');
    gate.db.addTransition({
      audit: audit.id,
      lineage: cap.lineage,
      from: 'COMMITTABLE',
      to: 'UNCERTAIN',
      reasons: [`release to ${targetName} reserved`],
      policyVersion: policy.policy.version,
      policyHash: policy.hash,
      capabilityId: capId,
    });
  });
  gate.appendToRun(audit.run_dir, [
    { kind: 'release', payload: { event: 'reserved', capabilityId: capId, target: targetName } },
  ]);
  const outcome =
    target.kind === 'dir'
      ? await promoteDir(source!, target.dir, subjects, capId)
      : await promoteWebhook(target.url, statement, cap, opts.timeoutMs ?? 30_000);
  return settle(gate, { ...cap, status: 'reserved' }, audit.run_dir, outcome, targetName);
}

/** Looks for terminal evidence of a reserved release: the target holds the digests, or provably nothing. */
export async function reconcile(
  gate: GateService,
  runDir: string,
  targetSpec?: string,
  opts: { timeoutMs?: number } = {},
): Promise<ReleaseResult> {
  const manifest = readManifest(resolve(runDir));
  const auditId = manifestHash(manifest);
  const cap = gate.db.capabilitiesOf(auditId).find((c) => c.status === 'reserved');
  if (!cap) {
    const state = gate.db.audit(auditId)?.state ?? 'RUNNING';
    return { state, capabilityId: '', target: '', detail: 'no reserved release to reconcile' };
  }
  const spec = targetSpec ?? cap.target;
  if (!spec) throw new UserError('--to: the reservation has no recorded target; name one');
  const target = parseTarget(spec);
  const targetName = target.kind === 'dir' ? target.dir : `webhook:${target.url}`;
  let outcome: Outcome;
  if (target.kind === 'dir') {
    rmSync(join(dirname(target.dir), `.${cap.id}.probate-tmp`), { recursive: true, force: true });
    if (!existsSync(target.dir)) outcome = { kind: 'not-done', why: `${target.dir} does not exist` };
    else {
      const mismatch = compareSubjects(subjectsOf(manifest), await digestWeights(target.dir));
      outcome = mismatch
        ? { kind: 'unknown', why: `target holds other weights (${mismatch})` }
        : { kind: 'done' };
    }
  } else outcome = await webhookStatus(target.url, cap.idem_key, opts.timeoutMs ?? 30_000);
  return settle(gate, cap, gate.db.audit(auditId)?.run_dir ?? resolve(runDir), outcome, targetName);
}
