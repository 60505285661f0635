import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { openGate } from '../../gate/client.ts';
import { initGate } from '../../gate/init.ts';
import { loadPublicKey } from '../../gate/keys.ts';
import type { ReleaseResult } from '../../gate/release.ts';
import { createGateServer, listen } from '../../gate/server.ts';
import { type DecideResult, GATE_PUB_FILE, GateService } from '../../gate/service.ts';
import { addPrincipal } from '../../gate/trust.ts';
import { ExitCode, UserError } from '../../util/errors.ts';

type Args = ArgumentsCamelCase<Record<string, unknown>> & { exitCode?: number };

export const STATE_EXIT: Record<string, number> = {
  COMMITTABLE: ExitCode.COMMITTABLE,
  RELEASED: ExitCode.OK,
  REVIEW_REQUIRED: ExitCode.REVIEW_REQUIRED,
  UNCERTAIN: ExitCode.REVIEW_REQUIRED,
  BLOCKED: ExitCode.BLOCKED,
};

export function printDecision(r: DecideResult, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
    return;
  }
  process.stdout.write(`${r.state}\n`);
  for (const reason of r.reasons) process.stdout.write(`  - ${reason}\n`);
  for (const v of r.overrides.void) process.stdout.write(`  (override void: ${v})\n`);
  if (r.attestationPath) process.stdout.write(`attestation: ${r.attestationPath}\n`);
}

export function printRelease(r: ReleaseResult, json: boolean): void {
  process.stdout.write(json ? `${JSON.stringify(r, null, 2)}\n` : `${r.state}: ${r.detail}\n`);
}

const init: CommandModule = {
  command: 'init <dir>',
  describe: 'Create a gate: Ed25519 key pair, trust.yaml, policy.yaml, state database',
  builder: (y: Argv) => y.positional('dir', { type: 'string', demandOption: true }),
  handler: (argv) => {
    const r = initGate(String(argv.dir));
    process.stdout.write(`gate initialised in ${r.dir} (keyid ${r.keyid})\n`);
  },
};

const addPrincipalCmd: CommandModule = {
  command: 'add-principal <dir>',
  describe: 'Allow a named principal (public key) to sign overrides',
  builder: (y: Argv) =>
    y
      .positional('dir', { type: 'string', demandOption: true })
      .option('name', { type: 'string', demandOption: true })
      .option('pub', { type: 'string', demandOption: true, describe: 'PEM public key file' }),
  handler: (argv) => {
    const dir = String(argv.dir);
    const p = addPrincipal(dir, loadPublicKey(join(dir, GATE_PUB_FILE)), String(argv.name), String(argv.pub));
    process.stdout.write(`principal ${p.name} added (keyid ${p.keyid})\n`);
  },
};

const decideCmd: CommandModule = {
  command: 'decide <run>',
  describe: 'Verify the ledger, decide the state by policy, record it; sign an attestation if COMMITTABLE',
  builder: (y: Argv) =>
    y
      .positional('run', { type: 'string', demandOption: true })
      .option('gate', { type: 'string', demandOption: true, describe: 'gate DIR or http://HOST:PORT' })
      .option('policy', { type: 'string', describe: 'policy YAML (default: the gate policy.yaml)' })
      .option('json', { type: 'boolean', default: false }),
  handler: async (argv) => {
    const gate = openGate(String(argv.gate));
    try {
      const r = await gate.decide(String(argv.run), argv.policy as string | undefined);
      printDecision(r, Boolean(argv.json));
      (argv as Args).exitCode = STATE_EXIT[r.state] ?? ExitCode.INTERNAL;
    } finally {
      await gate.close();
    }
  },
};

const reconcileCmd: CommandModule = {
  command: 'reconcile <run>',
  describe: 'Settle a release left UNCERTAIN by looking for terminal evidence at the target',
  builder: (y: Argv) =>
    y
      .positional('run', { type: 'string', demandOption: true })
      .option('gate', { type: 'string', demandOption: true })
      .option('to', { type: 'string', describe: 'target (default: the reserved one)' })
      .option('json', { type: 'boolean', default: false }),
  handler: async (argv) => {
    const gate = openGate(String(argv.gate));
    try {
      const r = await gate.reconcile(String(argv.run), argv.to as string | undefined);
      printRelease(r, Boolean(argv.json));
      (argv as Args).exitCode = STATE_EXIT[r.state] ?? ExitCode.REVIEW_REQUIRED;
    } finally {
      await gate.close();
    }
  },
};

const serve: CommandModule = {
  command: 'serve',
  describe: 'Serve the gate over HTTP; the signing key stays in this process',
  builder: (y: Argv) =>
    y
      .option('gate', { type: 'string', demandOption: true, describe: 'gate DIR' })
      .option('port', { type: 'number', default: 0 })
      .option('host', { type: 'string', default: '127.0.0.1' }),
  handler: async (argv) => {
    const service = new GateService(String(argv.gate));
    const server = createGateServer(service, (line) => process.stderr.write(`${line}\n`));
    const addr = await listen(server, Number(argv.port), String(argv.host));
    process.stdout.write(`listening http://${addr.address}:${addr.port}\n`);
    await new Promise<void>((done) => {
      const stop = () => server.close(() => done());
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    service.close();
  },
};

export const gateCommand: CommandModule = {
  command: 'gate <command>',
  describe: 'The release gate: init, add-principal, decide, serve, reconcile',
  builder: (y: Argv) =>
    y
      .command(init)
      .command(addPrincipalCmd)
      .command(decideCmd)
      .command(serve)
      .command(reconcileCmd)
      .demandCommand(1),
  handler: () => {},
};

export function readJsonFile(file: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`${file}: cannot read ${what} (${code ?? 'not JSON'})`);
  }
}
