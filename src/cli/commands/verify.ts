import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { checkAttestation } from '../../gate/attestation.ts';
import { loadPublicKey } from '../../gate/keys.ts';
import { loadPolicy } from '../../gate/policy.ts';
import { compareSubjects, digestWeights, localModelDir } from '../../gate/weights.ts';
import { ExitCode } from '../../util/errors.ts';
import { readJsonFile } from './gate.ts';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** Verifies an attestation against the model actually presented. Exit 0 only if every check holds. */
export async function verifyAttestation(opts: {
  attestation: string;
  pub: string;
  model: string;
  policy?: string;
}): Promise<{ ok: boolean; checks: Check[] }> {
  const checks: Check[] = [];
  const raw = readJsonFile(opts.attestation, 'attestation');
  const att = checkAttestation(raw, loadPublicKey(opts.pub));
  checks.push({
    name: 'signature+expiry+bindings',
    ok: att.ok,
    detail: att.ok ? `keyid ${att.keyid}` : att.reason,
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
      const mismatch = compareSubjects(att.statement.subject, await digestWeights(dir));
      checks.push({
        name: 'subject',
        ok: !mismatch,
        detail: mismatch ?? `${att.statement.subject.length} weight file(s) match`,
      });
    }
    const p = att.statement.predicate.policy;
    if (opts.policy) {
      const loaded = loadPolicy(opts.policy);
      const same = loaded.hash === p.hash && loaded.policy.version === p.version;
      checks.push({
        name: 'policy',
        ok: same,
        detail: same
          ? `version ${p.version}`
          : `${opts.policy} is not the approving policy (version ${p.version}, ${p.hash.slice(0, 12)})`,
      });
    } else
      checks.push({ name: 'policy', ok: true, detail: `version ${p.version} (matches the audit's policy)` });
  }
  return { ok: checks.every((c) => c.ok), checks };
}

export const verifyCommand: CommandModule = {
  command: 'verify <attestation>',
  describe: 'Verify an attestation: signature, expiry, policy, and weight digests of the presented model',
  builder: (y: Argv) =>
    y
      .positional('attestation', { type: 'string', demandOption: true })
      .option('pub', { type: 'string', demandOption: true, describe: "the gate's public key (PEM)" })
      .option('model', { type: 'string', demandOption: true, describe: 'model directory or local:DIR' })
      .option('policy', { type: 'string', describe: 'require this policy file to be the approving one' })
      .option('json', { type: 'boolean', default: false }),
  handler: async (argv) => {
    const r = await verifyAttestation({
      attestation: String(argv.attestation),
      pub: String(argv.pub),
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
