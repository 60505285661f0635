import { createPublicKey } from 'node:crypto';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { openGate } from '../../gate/client.ts';
import { loadPrivateKey } from '../../gate/keys.ts';
import { OVERRIDE_TYPE, signOverride } from '../../gate/override.ts';
import { loadPolicy } from '../../gate/policy.ts';
import { manifestHash, readManifest } from '../../ledger/manifest.ts';
import { ExitCode, UserError } from '../../util/errors.ts';
import { printDecision, STATE_EXIT } from './gate.ts';

export const overrideCommand: CommandModule = {
  command: 'override <run>',
  describe: "Sign an override of one finding with a principal's key and submit it to the gate",
  builder: (y: Argv) =>
    y
      .positional('run', { type: 'string', demandOption: true })
      .option('finding', { type: 'string', demandOption: true })
      .option('principal', { type: 'string', demandOption: true, describe: 'name in the gate trust.yaml' })
      .option('key', {
        type: 'string',
        demandOption: true,
        describe: "the principal's Ed25519 private key (PEM)",
      })
      .option('reason', { type: 'string', demandOption: true })
      .option('gate', { type: 'string', demandOption: true })
      .option('policy', {
        type: 'string',
        describe: "the policy the override is made under (default: the gate's pinned policy)",
      })
      .option('json', { type: 'boolean', default: false }),
  handler: async (argv) => {
    const run = String(argv.run);
    const manifest = readManifest(run);
    if (!manifest.evidenceRoot) throw new UserError(`${run}/manifest.json: evidenceRoot: audit not complete`);
    const key = loadPrivateKey(String(argv.key));
    const gate = openGate(String(argv.gate));
    try {
      const named = argv.policy ? loadPolicy(String(argv.policy)) : undefined;
      const policy = named
        ? { version: named.policy.version, hash: named.hash }
        : (await gate.identity()).policy;
      const envelope = signOverride(
        {
          _type: OVERRIDE_TYPE,
          manifestHash: manifestHash(manifest),
          evidenceRoot: manifest.evidenceRoot,
          findingId: String(argv.finding),
          policyVersion: policy.version,
          policyHash: policy.hash,
          principal: String(argv.principal),
          reason: String(argv.reason),
          createdAt: new Date().toISOString(),
        },
        key,
        createPublicKey(key),
      );
      const r = await gate.override(run, envelope);
      printDecision(r, Boolean(argv.json));
      (argv as ArgumentsCamelCase & { exitCode?: number }).exitCode =
        STATE_EXIT[r.state] ?? ExitCode.INTERNAL;
    } finally {
      await gate.close();
    }
  },
};
