import { type KeyObject, randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RecordKind } from '../contracts/records.ts';
import { Ledger } from '../ledger/ledger.ts';
import type { Manifest } from '../ledger/manifest.ts';
import { writeFileAtomic } from '../ledger/manifest.ts';
import { ExitCode, UserError } from '../util/errors.ts';
import { hashJson, sha256Hex } from '../util/hash.ts';
import { ATTESTATION_FILE, buildStatement } from './attestation.ts';
import { type DecidedState, decide, type GateState } from './decide.ts';
import { type Envelope, IN_TOTO_PAYLOAD_TYPE, signEnvelope } from './dsse.ts';
import { collectEvidence, LEDGER_FILE } from './evidence.ts';
import { keyIdOf, loadPrivateKey, loadPublicKey } from './keys.ts';
import { checkOverride } from './override.ts';
import { defaultPolicyPath, type LoadedPolicy, loadPolicy } from './policy.ts';
import { STATE_DB_FILE, StateDb } from './statedb.ts';
import { loadTrust } from './trust.ts';
import { subjectsOf } from './weights.ts';

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
  capabilityId?: string;
  attestation?: Envelope;
  attestationPath?: string;
}

/** Lineage = base identity + lineage name (`--lineage`, else the delivered model id). */
export function lineageOf(m: Manifest): { id: string; name: string } {
  const name = m.lineage ?? m.delivered.modelId;
  const b = m.base;
  const base = {
    modelId: b.modelId,
    root: b.root,
    weightDigests: b.weightDigests,
    fingerprint: b.fingerprint,
  };
  return { id: hashJson({ base, name }), name };
}

export function idempotencyKey(capabilityId: string): string {
  return sha256Hex(`probate-release-v1:${capabilityId}`);
}

/**
 * The gate: the only holder of the signing key. Decides from a run's ledger, records transitions and
 * capabilities in its state DB, signs attestations. Used in-process (`--gate DIR`) or by `gate serve`.
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
    this.#key = loadPrivateKey(keyFile);
    this.pub = loadPublicKey(join(this.dir, GATE_PUB_FILE));
    this.keyid = keyIdOf(this.pub);
    this.db = new StateDb(join(this.dir, STATE_DB_FILE));
  }

  close(): void {
    this.db.close();
  }

  policy(file?: string): LoadedPolicy {
    if (file) return loadPolicy(file);
    const own = join(this.dir, GATE_POLICY_FILE);
    return loadPolicy(existsSync(own) ? own : defaultPolicyPath());
  }

  sign(payloadType: string, payload: unknown): Envelope {
    return signEnvelope(payloadType, payload, this.#key, this.pub);
  }

  /** Appends gate records to the run's ledger (after the evidence root; verify allows only these kinds). */
  appendToRun(runDir: string, items: Array<{ kind: RecordKind; payload: unknown }>): void {
    const ledger = Ledger.open(join(runDir, LEDGER_FILE));
    try {
      ledger.appendMany(items);
    } finally {
      ledger.close();
    }
  }

  decide(runDirIn: string, policyFile?: string): DecideResult {
    const runDir = resolve(runDirIn);
    const loaded = this.policy(policyFile);
    const run = collectEvidence(runDir, { policyHash: loaded.hash });
    const trust = loadTrust(this.dir, this.pub);
    const binding = {
      manifestHash: run.manifestHash,
      evidenceRoot: run.evidenceRoot,
      policyVersion: loaded.policy.version,
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
    const decision = decide(run.evidence, loaded.policy);
    const auditId = run.manifestHash;
    const lineage = lineageOf(run.manifest);
    const policy = { version: loaded.policy.version, hash: loaded.hash };

    const ledgerItems: Array<{ kind: RecordKind; payload: unknown }> = [];
    const outcome = this.db.tx(() => {
      if (this.db.reservedIn(lineage.id))
        throw new UserError(
          `lineage '${lineage.name}' has a release in UNCERTAIN state; run probate gate reconcile first`,
          ExitCode.REVIEW_REQUIRED,
        );
      const existing = this.db.audit(auditId);
      const lin = this.db.lineage(lineage.id);
      if (existing?.state === 'RELEASED')
        throw new UserError(`audit ${auditId.slice(0, 12)} was already released`);
      if (existing && lin?.state === 'BLOCKED' && lin.current_audit !== auditId)
        throw new UserError(
          `lineage '${lineage.name}' is BLOCKED by a later audit; audit a new checkpoint`,
          ExitCode.BLOCKED,
        );
      let from: GateState = existing?.state ?? 'RUNNING';
      let previousAudit = existing?.previous_audit ?? null;
      if (!existing) {
        const remediates = lin?.state === 'BLOCKED';
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
          const reasons = [`new checkpoint audited for blocked lineage; previous audit ${previousAudit}`];
          this.db.setState(auditId, lineage.id, lineage.name, 'REMEDIATED');
          this.db.addTransition({
            audit: auditId,
            lineage: lineage.id,
            from: 'BLOCKED',
            to: 'REMEDIATED',
            reasons,
            policyVersion: policy.version,
            policyHash: policy.hash,
          });
          ledgerItems.push({
            kind: 'transition',
            payload: {
              from: 'BLOCKED',
              to: 'REMEDIATED',
              reasons,
              policy,
              lineage: lineage.id,
              previousAudit,
            },
          });
        }
      }
      // Any unspent capability of this lineage dies with a new decision; at most one is ever live.
      this.db.db
        .prepare(
          `UPDATE capabilities SET status = 'void', updated = datetime('now') WHERE lineage = ? AND status = 'minted'`,
        )
        .run(lineage.id);
      this.db.setState(auditId, lineage.id, lineage.name, decision.state);
      let capabilityId: string | undefined;
      let attestation: Envelope | undefined;
      if (decision.state === 'COMMITTABLE') {
        capabilityId = randomBytes(16).toString('hex');
        const expiresAt = new Date(Date.now() + loaded.policy.attestation.ttlSeconds * 1000).toISOString();
        this.db.mintCapability({
          id: capabilityId,
          audit: auditId,
          lineage: lineage.id,
          expires_at: expiresAt,
          idem_key: idempotencyKey(capabilityId),
        });
        const bySeverity: Record<string, number> = {};
        for (const f of run.evidence.findings) bySeverity[f.severity] = (bySeverity[f.severity] ?? 0) + 1;
        const statement = buildStatement(subjectsOf(run.manifest), {
          manifest: run.manifest,
          manifestHash: auditId,
          evidenceRoot: run.evidenceRoot,
          lineage: lineage.id,
          verdict: { state: 'COMMITTABLE', reasons: decision.reasons },
          policy,
          findings: { total: run.evidence.findings.length, bySeverity, overridden: [...valid].sort() },
          capability: { id: capabilityId, expiresAt },
          issuedAt: new Date().toISOString(),
        });
        attestation = this.sign(IN_TOTO_PAYLOAD_TYPE, statement);
      }
      this.db.addTransition({
        audit: auditId,
        lineage: lineage.id,
        from,
        to: decision.state,
        reasons: decision.reasons,
        policyVersion: policy.version,
        policyHash: policy.hash,
        capabilityId,
      });
      ledgerItems.push({
        kind: 'transition',
        payload: {
          from,
          to: decision.state,
          reasons: decision.reasons,
          policy,
          lineage: lineage.id,
          capabilityId,
        },
      });
      return { capabilityId, attestation, previousAudit };
    });

    this.appendToRun(runDir, ledgerItems);
    const attestationPath = join(runDir, ATTESTATION_FILE);
    if (outcome.attestation)
      writeFileAtomic(attestationPath, `${JSON.stringify(outcome.attestation, null, 2)}\n`);
    else rmSync(attestationPath, { force: true });
    return {
      state: decision.state,
      reasons: decision.reasons,
      auditId,
      lineage: lineage.id,
      previousAudit: outcome.previousAudit,
      overrides: { valid, void: voided },
      capabilityId: outcome.capabilityId,
      attestation: outcome.attestation,
      attestationPath: outcome.attestation ? attestationPath : undefined,
    };
  }

  /** Records a principal's signed override (refused unless valid now), then re-decides. */
  override(runDirIn: string, envelope: unknown, policyFile?: string): DecideResult {
    const runDir = resolve(runDirIn);
    const loaded = this.policy(policyFile);
    const run = collectEvidence(runDir, { policyHash: loaded.hash });
    const check = checkOverride(envelope, loadTrust(this.dir, this.pub), {
      manifestHash: run.manifestHash,
      evidenceRoot: run.evidenceRoot,
      policyVersion: loaded.policy.version,
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
    this.appendToRun(runDir, [{ kind: 'override', payload: envelope }]);
    return this.decide(runDir, policyFile);
  }
}
