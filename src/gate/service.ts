import type { KeyObject } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RecordItem, RecordPayload } from '../contracts/records.ts';
import { signGateRecord } from '../ledger/gate-sig.ts';
import { Ledger } from '../ledger/ledger.ts';
import { writeFileAtomic } from '../ledger/manifest.ts';
import { ExitCode, UserError } from '../util/errors.ts';
import { hashJson } from '../util/hash.ts';
import { ATTESTATION_FILE } from './attestation.ts';
import { type DecidedState, decide, type GateState } from './decide.ts';
import { type Envelope, signEnvelope } from './dsse.ts';
import { collectEvidence, LEDGER_FILE } from './evidence.ts';
import { keyIdOf, loadPrivateKey, loadPublicKey, requirePrivateMode } from './keys.ts';
import { lineageOf } from './lineage.ts';
import { mintRelease } from './mint.ts';
import { checkOverride } from './override.ts';
import { type LoadedPolicy, loadPolicy } from './policy.ts';
import { checkPolicyChange } from './policy-change.ts';
import { STATE_DB_FILE, StateDb } from './statedb.ts';
import { loadTrust, type Trust, updateTrust } from './trust.ts';
import { subjectDigest, subjectsOf } from './weights.ts';

export const GATE_KEY_FILE = 'gate.key';
export const GATE_PUB_FILE = 'gate.pub';
export const GATE_POLICY_FILE = 'policy.yaml';

export interface DecideResult {
  state: DecidedState;
  reasons: string[];
  auditId: string;
  lineage: string;
  previousAudit: string | null;
  /** Overrides that count, and those refused with why. */
  overrides: { valid: string[]; void: string[] };
  /** Digest of the delivered model's files (src/util/subject.ts): what the BLOCK sticks to. */
  subject: string;
  capabilityId?: string;
  attestation?: Envelope;
  attestationPath?: string;
}

/**
 * The gate: the only holder of the signing key and of the policy. Decides from a run's ledger under its own
 * pinned policy, records transitions and capabilities in its state DB, signs attestations and every record
 * it appends to a run's ledger. Used in-process (`--gate DIR`) or by `gate serve`.
 */
export class GateService {
  readonly dir: string;
  readonly db: StateDb;
  readonly pub: KeyObject;
  readonly keyid: string;
  readonly #key: KeyObject;

  constructor(dir: string) {
    this.dir = resolve(dir);
    const keyFile = join(this.dir, GATE_KEY_FILE);
    if (!existsSync(keyFile)) throw new UserError(`${keyFile}: missing (run probate gate init ${dir})`);
    requirePrivateMode(this.dir, 'dir');
    this.#key = loadPrivateKey(keyFile);
    this.pub = loadPublicKey(join(this.dir, GATE_PUB_FILE));
    this.keyid = keyIdOf(this.pub);
    this.db = new StateDb(join(this.dir, STATE_DB_FILE));
  }

  close(): void {
    this.db.close();
  }

  trust(): Trust {
    return loadTrust(this.dir, this.pub);
  }

  /**
   * The gate's policy: GATE/policy.yaml, accepted only if its sha256 is the one trust.yaml pins and the last
   * one recorded in the state DB (a file edited by hand, or a pin changed without `gate set-policy`, stops
   * the gate rather than deciding under it).
   */
  policy(): LoadedPolicy {
    const file = join(this.dir, GATE_POLICY_FILE);
    const loaded = loadPolicy(file);
    const pinned = this.trust().policySha256;
    if (loaded.hash !== pinned)
      throw new UserError(
        `${file}: sha256 ${loaded.hash.slice(0, 12)}… is not the policy pinned in trust.yaml (${pinned.slice(0, 12)}…); the policy changes only by probate gate set-policy`,
      );
    const recorded = this.db.currentPolicy();
    if (recorded?.hash !== pinned)
      throw new UserError(
        `${join(this.dir, 'trust.yaml')}: pinned policy is not the last one recorded in the gate state; the policy changes only by probate gate set-policy`,
      );
    return loaded;
  }

  /** A policy change: a principal's signed act, checked against the pinned policy, recorded in the state DB. */
  setPolicy(policyFile: string, envelope: unknown): { hash: string; version: string; principal: string } {
    const current = this.policy();
    const next = loadPolicy(policyFile);
    const check = checkPolicyChange(envelope, this.trust(), {
      previousHash: current.hash,
      policyHash: next.hash,
      policyVersion: next.policy.version,
    });
    if (!check.ok) throw new UserError(`policy change refused: ${check.reason}`, ExitCode.BLOCKED);
    const target = join(this.dir, GATE_POLICY_FILE);
    this.db.tx(() => {
      this.db.addPolicyChange({
        hash: next.hash,
        version: next.policy.version,
        principal: check.change.principal,
        envelope: JSON.stringify(envelope),
      });
      const tmp = join(this.dir, `.policy-${process.pid}.yaml`); // .yaml: loadPolicy parses by extension
      copyFileSync(next.path, tmp);
      chmodSync(tmp, 0o600);
      if (loadPolicy(tmp).hash !== next.hash)
        throw new UserError(`${policyFile}: changed while being installed`);
      updateTrust(this.dir, 'policy', { sha256: next.hash });
      renameSync(tmp, target);
    });
    return { hash: next.hash, version: next.policy.version, principal: check.change.principal };
  }

  sign(payloadType: string, payload: unknown): Envelope {
    return signEnvelope(payloadType, payload, this.#key, this.pub);
  }

  /**
   * Appends gate records to the run's ledger (after the evidence root; verify allows only these kinds), each
   * signed by the gate over its kind, position and payload, and bound to the manifest it was decided on.
   */
  appendToRun(runDir: string, manifestHashHex: string, items: ReadonlyArray<RecordItem>): void {
    const ledger = Ledger.open(join(runDir, LEDGER_FILE));
    try {
      ledger.appendMany(items, (seq, kind, payload) =>
        signGateRecord(
          kind,
          seq,
          { ...(payload as Record<string, unknown>), manifestHash: manifestHashHex },
          this.#key,
          this.pub,
        ),
      );
    } finally {
      ledger.close();
    }
  }

  decide(runDirIn: string): DecideResult {
    const runDir = canonicalRunDir(runDirIn);
    const loaded = this.policy();
    const run = collectEvidence(runDir, { policyHash: loaded.hash, gatePub: this.pub });
    const trust = this.trust();
    const binding = {
      manifestHash: run.manifestHash,
      evidenceRoot: run.evidenceRoot,
      policyVersion: loaded.policy.version,
      policyHash: loaded.hash,
      findingIds: new Set(run.evidence.findings.map((f) => f.id)),
    };
    const valid: string[] = [];
    const voided: string[] = [];
    for (const raw of run.overridePayloads) {
      const c = checkOverride(raw, trust, binding);
      if (c.ok) valid.push(c.statement.findingId);
      else voided.push(c.reason);
    }
    run.evidence.overridden = valid;
    // Re-evaluated from the evidence under the gate's pinned policy, whatever policy the audit ran under.
    const decision = decide(run.evidence, loaded.policy);
    const auditId = run.manifestHash;
    const lineage = lineageOf(run.manifest);
    const policy = { version: loaded.policy.version, hash: loaded.hash };
    const subjects = subjectsOf(run.manifest);
    const subject = subjectDigest(subjects);
    const intact = run.evidence.integrity.length === 0;

    const ledgerItems: RecordItem[] = [];
    const transitionPayload = (from: GateState, to: GateState, reasons: string[], extra: object = {}) => ({
      from,
      to,
      reasons,
      policy,
      lineage: lineage.id,
      subject,
      evidenceRoot: run.evidenceRoot,
      ...extra,
    });
    const outcome = this.db.tx(() => {
      const existing = this.db.audit(auditId);
      if (existing && existing.run_dir !== runDir)
        throw new UserError(
          `${runDir}: audit ${auditId.slice(0, 12)} is registered from ${existing.run_dir}; a copy of a run is not decided`,
        );
      if (!intact) {
        // Broken evidence says nothing about the weights: BLOCKED for this audit only. The lineage, the
        // subject and other audits' capabilities are untouched, so a corrupted copy cannot block or void them.
        const from: GateState = existing?.state ?? 'RUNNING';
        if (!existing)
          this.db.upsertAudit({
            id: auditId,
            run_dir: runDir,
            lineage: lineage.id,
            state: 'BLOCKED',
            evidence_root: run.evidenceRoot,
            previous_audit: null,
          });
        else
          this.db.db
            .prepare(`UPDATE audits SET state = 'BLOCKED', updated = datetime('now') WHERE id = ?`)
            .run(auditId);
        this.db.db
          .prepare(
            `UPDATE capabilities SET status = 'void', updated = datetime('now') WHERE audit = ? AND status = 'minted'`,
          )
          .run(auditId);
        this.db.addTransition({
          audit: auditId,
          lineage: lineage.id,
          from,
          to: 'BLOCKED',
          reasons: decision.reasons,
          policyVersion: policy.version,
          policyHash: policy.hash,
        });
        ledgerItems.push({
          kind: 'transition',
          payload: transitionPayload(from, 'BLOCKED', decision.reasons),
        });
        return {
          state: 'BLOCKED' as DecidedState,
          reasons: decision.reasons,
          previousAudit: existing?.previous_audit ?? null,
        };
      }
      if (this.db.reservedIn(lineage.id))
        throw new UserError(
          `lineage '${lineage.name}' has a release in UNCERTAIN state; run probate gate reconcile first`,
          ExitCode.REVIEW_REQUIRED,
        );
      const lin = this.db.lineage(lineage.id);
      if (existing?.state === 'RELEASED')
        throw new UserError(`audit ${auditId.slice(0, 12)} was already released`);
      if (existing && lin?.state === 'BLOCKED' && lin.current_audit !== auditId)
        throw new UserError(
          `lineage '${lineage.name}' is BLOCKED by a later audit; audit a new checkpoint`,
          ExitCode.BLOCKED,
        );
      // The same weights stay BLOCKED across new audits, manifests, policies and lineage names: only the
      // blocking audit's own re-decision (a principal's override) or different weights lift it.
      const block = this.db.subjectBlock(subject, auditId);
      let state: DecidedState = decision.state;
      let reasons = decision.reasons;
      if (block && state !== 'BLOCKED') {
        state = 'BLOCKED';
        reasons = [
          `the same weights (subject ${subject.slice(0, 12)}…) were BLOCKED by audit ${block.audit.slice(0, 12)}: a new audit is not a remediation; a principal's override on that audit or different weights is required`,
          ...decision.reasons,
        ];
      }
      let from: GateState = existing?.state ?? 'RUNNING';
      let previousAudit = existing?.previous_audit ?? null;
      if (!existing) {
        const blockingSubject =
          lin?.state === 'BLOCKED' ? this.db.subjectBlockOf(lin.current_audit) : undefined;
        const remediates = lin?.state === 'BLOCKED' && blockingSubject !== subject;
        previousAudit = lin?.current_audit ?? null;
        from = remediates ? 'REMEDIATED' : 'RUNNING';
        this.db.upsertAudit({
          id: auditId,
          run_dir: runDir,
          lineage: lineage.id,
          state: from,
          evidence_root: run.evidenceRoot,
          previous_audit: previousAudit,
        });
        if (remediates) {
          const why = [`different weights audited for blocked lineage; previous audit ${previousAudit}`];
          this.db.setState(auditId, lineage.id, lineage.name, 'REMEDIATED');
          this.db.addTransition({
            audit: auditId,
            lineage: lineage.id,
            from: 'BLOCKED',
            to: 'REMEDIATED',
            reasons: why,
            policyVersion: policy.version,
            policyHash: policy.hash,
          });
          ledgerItems.push({
            kind: 'transition',
            payload: transitionPayload('BLOCKED', 'REMEDIATED', why, { previousAudit }),
          });
        }
      }
      // Any unspent capability of this lineage dies with a new decision; at most one is ever live.
      this.db.db
        .prepare(
          `UPDATE capabilities SET status = 'void', updated = datetime('now') WHERE lineage = ? AND status = 'minted'`,
        )
        .run(lineage.id);
      this.db.setState(auditId, lineage.id, lineage.name, state);
      if (state === 'BLOCKED') this.db.blockSubject(subject, auditId, lineage.id);
      else this.db.unblockSubject(subject, auditId);
      const minted =
        state === 'COMMITTABLE'
          ? mintRelease(this.db, (t, p) => this.sign(t, p), {
              subjects,
              manifest: run.manifest,
              auditId,
              evidenceRoot: run.evidenceRoot,
              lineage: lineage.id,
              reasons,
              policy,
              findings: run.evidence.findings,
              overridden: valid,
              ttlSeconds: loaded.policy.attestation.ttlSeconds,
            })
          : undefined;
      const capabilityId = minted?.capabilityId;
      const attestation = minted?.attestation;
      this.db.addTransition({
        audit: auditId,
        lineage: lineage.id,
        from,
        to: state,
        reasons,
        policyVersion: policy.version,
        policyHash: policy.hash,
        capabilityId,
      });
      ledgerItems.push({
        kind: 'transition',
        payload: transitionPayload(from, state, reasons, { capabilityId }),
      });
      return { state, reasons, capabilityId, attestation, previousAudit };
    });

    this.appendToRun(runDir, auditId, ledgerItems);
    const attestationPath = join(runDir, ATTESTATION_FILE);
    if (outcome.attestation)
      writeFileAtomic(attestationPath, `${JSON.stringify(outcome.attestation, null, 2)}\n`);
    else rmSync(attestationPath, { force: true });
    return {
      state: outcome.state,
      reasons: outcome.reasons,
      auditId,
      lineage: lineage.id,
      subject,
      previousAudit: outcome.previousAudit,
      overrides: { valid, void: voided },
      capabilityId: outcome.capabilityId,
      attestation: outcome.attestation,
      attestationPath: outcome.attestation ? attestationPath : undefined,
    };
  }

  /** Records a principal's signed override (refused unless valid now), then re-decides. */
  override(runDirIn: string, envelope: unknown): DecideResult {
    const runDir = canonicalRunDir(runDirIn);
    const loaded = this.policy();
    const run = collectEvidence(runDir, { policyHash: loaded.hash, gatePub: this.pub });
    const existing = this.db.audit(run.manifestHash);
    if (existing && existing.run_dir !== runDir)
      throw new UserError(
        `${runDir}: audit ${run.manifestHash.slice(0, 12)} is registered from ${existing.run_dir}; a copy of a run is not decided`,
      );
    const check = checkOverride(envelope, this.trust(), {
      manifestHash: run.manifestHash,
      evidenceRoot: run.evidenceRoot,
      policyVersion: loaded.policy.version,
      policyHash: loaded.hash,
      findingIds: new Set(run.evidence.findings.map((f) => f.id)),
    });
    if (!check.ok) throw new UserError(`override refused: ${check.reason}`, ExitCode.BLOCKED);
    this.db.addOverride({
      id: hashJson(envelope),
      audit: run.manifestHash,
      finding: check.statement.findingId,
      principal: check.statement.principal,
      envelope: JSON.stringify(envelope),
    });
    this.appendToRun(runDir, run.manifestHash, [
      { kind: 'override', payload: envelope as RecordPayload<'override'> },
    ]);
    return this.decide(runDir);
  }
}

/** A run directory by its real path: a symlink or `..` spelling of a run is the same run. */
export function canonicalRunDir(runDir: string): string {
  try {
    return realpathSync(resolve(runDir));
  } catch {
    throw new UserError(`${runDir}: no such run directory`);
  }
}
