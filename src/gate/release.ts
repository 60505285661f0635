import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { request } from 'undici';
import { manifestHash, readManifest } from '../ledger/manifest.ts';
import { ExitCode, UserError } from '../util/errors.ts';
import { hashRegularFile } from '../util/subject.ts';
import { checkAttestation, type Statement } from './attestation.ts';
import type { GateState } from './decide.ts';
import { lineageOf } from './lineage.ts';
import type { GateService } from './service.ts';
import type { CapabilityRow } from './statedb.ts';
import {
  compareSubjects,
  digestSubject,
  localModelDir,
  type Subject,
  subjectDigest,
  subjectsOf,
} from './weights.ts';

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

/**
 * Copies exactly the attested files, as regular files, into a fresh private directory beside `dest`, hashing
 * each byte as it is copied (a file swapped after the check is caught, a symlink is never followed), then
 * re-verifies the whole copy and renames it into place. Nothing else from the source is promoted.
 */
async function promoteDir(source: string, dest: string, subjects: Subject[]): Promise<Outcome> {
  let tmp: string | undefined;
  try {
    tmp = mkdtempSync(join(dirname(dest), '.probate-release-'));
    for (const s of subjects) {
      if (s.name.split('/').some((part) => part === '..' || part === '' || part === '.'))
        return { kind: 'not-done', why: `${s.name}: not a plain relative path` };
      const out = join(tmp, s.name);
      mkdirSync(dirname(out), { recursive: true, mode: 0o755 });
      const fd = openSync(out, 'wx', 0o644);
      let got: string;
      try {
        got = hashRegularFile(join(source, s.name), (chunk) => {
          writeSync(fd, chunk);
        });
      } finally {
        closeSync(fd);
      }
      if (got !== s.digest.sha256) return { kind: 'not-done', why: `${s.name}: changed while being copied` };
    }
    const mismatch = compareSubjects(subjects, await digestSubject(tmp));
    if (mismatch) return { kind: 'not-done', why: `the copy differs from the attestation (${mismatch})` };
    if (existsSync(dest)) return { kind: 'not-done', why: `${dest} appeared during the release` };
    renameSync(tmp, dest);
    tmp = undefined;
    return { kind: 'done' };
  } catch (err) {
    // rename is the only step with an effect and it is atomic: a failure anywhere before it means nothing landed.
    if (tmp === undefined && existsSync(dest)) return { kind: 'unknown', why: (err as Error).message };
    const e = err as NodeJS.ErrnoException;
    return { kind: 'not-done', why: e instanceof UserError ? e.message : (e.code ?? 'copy failed') };
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

async function promoteWebhook(
  url: string,
  statement: Statement,
  cap: CapabilityRow,
  timeoutMs: number,
): Promise<Outcome> {
  const digest = subjectDigest(statement.subject);
  const body = JSON.stringify({
    capabilityId: cap.id,
    subjectDigest: digest,
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
    const text = await res.body.text();
    if (res.statusCode >= 200 && res.statusCode < 300) {
      // The receipt must name what the receiver applied; anything else may have promoted other bytes.
      const echoed = receiptDigest(text);
      if (echoed === digest) return { kind: 'done' };
      return {
        kind: 'unknown',
        why: echoed ? 'receipt names another subject digest' : 'receipt does not echo the subject digest',
      };
    }
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

function receiptDigest(text: string): string | undefined {
  try {
    const d = (JSON.parse(text) as { subjectDigest?: unknown }).subjectDigest;
    return typeof d === 'string' ? d : undefined;
  } catch {
    return undefined;
  }
}

/** Status query for reconcile: GET URL with the idempotency key; 200 {applied:true, subjectDigest} or 404. */
async function webhookStatus(url: string, key: string, digest: string, timeoutMs: number): Promise<Outcome> {
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
      return receiptDigest(text) === digest
        ? { kind: 'done' }
        : { kind: 'unknown', why: 'receiver applied the key but does not echo the subject digest' };
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
          evidenceRoot: audit.evidence_root,
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
  gate.appendToRun(runDir, audit.id, items);
  return {
    state: done ? 'RELEASED' : 'COMMITTABLE',
    capabilityId: cap.id,
    target,
    detail: done ? `promoted to ${target}` : `nothing promoted: ${outcome.why}`,
  };
}

/**
 * Spends an attestation's single-use capability: verify (signature, the gate's pinned policy, the exact
 * files), reserve (state UNCERTAIN) in one transaction, promote, then settle. An unknown outcome leaves the
 * reservation until `reconcile` finds evidence at the reserved target.
 */
export async function release(
  gate: GateService,
  raw: unknown,
  targetSpec: string,
  opts: { timeoutMs?: number } = {},
): Promise<ReleaseResult> {
  const pinned = gate.policy();
  const check = checkAttestation(raw, gate.pub, { policyHash: pinned.hash });
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
  // Re-hash what will be promoted: the delivered folder must hold exactly the attested files, now.
  const source = localModelDir(statement.predicate.manifest.delivered.ref);
  if (target.kind === 'dir' && !source)
    refuse('the delivered model is not a local directory; release it to a webhook');
  if (source) {
    let present: Record<string, string>;
    try {
      present = await digestSubject(source);
    } catch (err) {
      return refuse(`delivered model: ${(err as Error).message}`);
    }
    const mismatch = compareSubjects(subjects, present);
    if (mismatch) refuse(`delivered files changed since approval: ${mismatch}`);
  }
  if (target.kind === 'dir' && existsSync(target.dir))
    throw new UserError(`--to: ${target.dir} already exists`);
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
    gate.db.setState(audit.id, cap.lineage, gate.db.lineage(cap.lineage)?.name ?? cap.lineage, 'UNCERTAIN');
    gate.db.addTransition({
      audit: audit.id,
      lineage: cap.lineage,
      from: 'COMMITTABLE',
      to: 'UNCERTAIN',
      reasons: [`release to ${targetName} reserved`],
      policyVersion: pinned.policy.version,
      policyHash: pinned.hash,
      capabilityId: capId,
    });
  });
  gate.appendToRun(audit.run_dir, audit.id, [
    { kind: 'release', payload: { event: 'reserved', capabilityId: capId, target: targetName } },
  ]);
  const outcome =
    target.kind === 'dir'
      ? await promoteDir(source!, target.dir, subjects)
      : await promoteWebhook(target.url, statement, cap, opts.timeoutMs ?? 30_000);
  return settle(gate, { ...cap, status: 'reserved' }, audit.run_dir, outcome, targetName);
}

/**
 * Looks for terminal evidence of a reserved release at the target it reserved (and only there): the target
 * holds exactly the attested files / the receiver echoes the key and subject digest, or provably nothing.
 */
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
  if (!cap.target) throw new UserError('reconcile: the reservation has no recorded target');
  const reserved = parseTarget(cap.target);
  const reservedName = reserved.kind === 'dir' ? reserved.dir : `webhook:${reserved.url}`;
  if (targetSpec !== undefined) {
    const asked = parseTarget(targetSpec);
    const askedName = asked.kind === 'dir' ? asked.dir : `webhook:${asked.url}`;
    if (askedName !== reservedName)
      throw new UserError(
        `--to: ${askedName} is not the reserved target (${reservedName}); a release settles only where it was reserved`,
        ExitCode.BLOCKED,
      );
  }
  const subjects = subjectsOf(manifest);
  let outcome: Outcome;
  if (reserved.kind === 'dir') {
    if (!existsSync(reserved.dir)) outcome = { kind: 'not-done', why: `${reserved.dir} does not exist` };
    else {
      let mismatch: string | null;
      try {
        mismatch = compareSubjects(subjects, await digestSubject(reserved.dir));
      } catch (err) {
        mismatch = (err as Error).message;
      }
      outcome = mismatch
        ? { kind: 'unknown', why: `target holds other files (${mismatch})` }
        : { kind: 'done' };
    }
  } else
    outcome = await webhookStatus(
      reserved.url,
      cap.idem_key,
      subjectDigest(subjects),
      opts.timeoutMs ?? 30_000,
    );
  return settle(gate, cap, gate.db.audit(auditId)?.run_dir ?? resolve(runDir), outcome, reservedName);
}
