import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { checkAttestation } from '../../gate/attestation.ts';
import { loadPublicKey } from '../../gate/keys.ts';
import { loadPolicy } from '../../gate/policy.ts';
import { GATE_PUB_FILE } from '../../gate/service.ts';
import { loadTrust } from '../../gate/trust.ts';
import { compareSubjects, digestSubject, localModelDir } from '../../gate/weights.ts';
import { ExitCode, UserError } from '../../util/errors.ts';
import { readJsonFile } from './gate.ts';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/**
 * Verifies an attestation against the model actually presented and the gate's pinned policy (from the gate
 * directory's trust.yaml, or a policy file the caller pins). Exit 0 only if every check holds.
 */
export async function verifyAttestation(opts: {
  attestation: string;
  pub?: string;
  gate?: string;
  model: string;
  policy?: string;
}): Promise<{ ok: boolean; checks: Check[] }> {
  const pubFile = opts.pub ?? (opts.gate ? join(opts.gate, GATE_PUB_FILE) : undefined);
  if (!pubFile) throw new UserError("verify: name the gate's public key: --gate DIR or --pub FILE");
  const pub = loadPublicKey(pubFile);
  const pinned = opts.policy
    ? loadPolicy(opts.policy).hash
    : opts.gate
      ? loadTrust(opts.gate, pub).policySha256
      : undefined;
  if (!pinned) throw new UserError("verify: name the gate's policy: --gate DIR or --policy FILE");
  const checks: Check[] = [];
  const raw = readJsonFile(opts.attestation, 'attestation');
  const att = checkAttestation(raw, pub, { policyHash: pinned });
  checks.push({
    name: 'signature+expiry+bindings+policy',
    ok: att.ok,
    detail: att.ok ? `keyid ${att.keyid}, policy ${att.statement.predicate.policy.version}` : att.reason,
  });
  if (att.ok) {
    const dir = localModelDir(opts.model);
    if (!dir)
      checks.push({
        name: 'subject',
        ok: false,
        detail: `${opts.model}: only local model directories can be re-hashed`,
      });
    else {
      let mismatch: string | null;
      try {
        mismatch = compareSubjects(att.statement.subject, await digestSubject(dir));
      } catch (err) {
        if (!(err instanceof UserError)) throw err;
        mismatch = err.message;
      }
      checks.push({
        name: 'subject',
        ok: !mismatch,
        detail: mismatch ?? `${att.statement.subject.length} file(s) the model loads match`,
      });
    }
  }
  return { ok: checks.every((c) => c.ok), checks };
}

export const verifyCommand: CommandModule = {
  command: 'verify <attestation>',
  describe:
    "Verify an attestation: signature, expiry, the gate's pinned policy, and every file the presented model loads",
  builder: (y: Argv) =>
    y
      .positional('attestation', { type: 'string', demandOption: true })
      .option('gate', { type: 'string', describe: 'gate DIR: its gate.pub and the policy trust.yaml pins' })
      .option('pub', { type: 'string', describe: "the gate's public key (PEM), with --policy" })
      .option('model', { type: 'string', demandOption: true, describe: 'model directory or local:DIR' })
      .option('policy', { type: 'string', describe: "the gate's pinned policy file (instead of --gate)" })
      .option('json', { type: 'boolean', default: false }),
  handler: async (argv) => {
    const r = await verifyAttestation({
      attestation: String(argv.attestation),
      pub: argv.pub as string | undefined,
      gate: argv.gate as string | undefined,
      model: String(argv.model),
      policy: argv.policy as string | undefined,
    });
    if (argv.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    else {
      process.stdout.write(`${r.ok ? 'VERIFIED' : 'NOT VERIFIED'}\n`);
      for (const c of r.checks) process.stdout.write(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}\n`);
    }
    (argv as ArgumentsCamelCase & { exitCode?: number }).exitCode = r.ok ? ExitCode.OK : ExitCode.BLOCKED;
  },
};
