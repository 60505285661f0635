import { createPublicKey, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { openGate } from '../../gate/client.ts';
import { initGate } from '../../gate/init.ts';
import { loadPrivateKey, loadPublicKey, requirePrivateMode } from '../../gate/keys.ts';
import { loadPolicy } from '../../gate/policy.ts';
import { POLICY_CHANGE_TYPE, signPolicyChange } from '../../gate/policy-change.ts';
import type { ReleaseResult } from '../../gate/release.ts';
import { checkBind, createGateServer, listen } from '../../gate/server.ts';
import { type DecideResult, GATE_PUB_FILE, GateService } from '../../gate/service.ts';
import { addCaller, addPrincipal } from '../../gate/trust.ts';
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
  describe: "Create a gate: Ed25519 key pair, the gate's policy (pinned in trust.yaml), state database",
  builder: (y: Argv) =>
    y
      .positional('dir', { type: 'string', demandOption: true })
      .option('policy', { type: 'string', describe: "the gate's policy (default policies/default.yaml)" }),
  handler: (argv) => {
    const r = initGate(String(argv.dir), { policy: argv.policy as string | undefined });
    process.stdout.write(`gate initialised in ${r.dir} (keyid ${r.keyid})\n`);
  },
};

const addCallerCmd: CommandModule = {
  command: 'add-caller <dir>',
  describe: 'Allow a caller of gate serve (prints its bearer token once; trust.yaml keeps its sha256)',
  builder: (y: Argv) =>
    y
      .positional('dir', { type: 'string', demandOption: true })
      .option('name', { type: 'string', demandOption: true })
      .option('scopes', {
        type: 'string',
        demandOption: true,
        describe: 'comma-separated: submit (decide), release (release, reconcile), override',
      }),
  handler: (argv) => {
    const dir = String(argv.dir);
    const scopes = String(argv.scopes)
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    const c = addCaller(dir, loadPublicKey(join(dir, GATE_PUB_FILE)), String(argv.name), scopes);
    process.stderr.write(`caller ${c.name} added (scopes ${c.scopes.join(', ')}); its token, shown once:\n`);
    process.stdout.write(`${c.token}\n`);
  },
};

const setPolicyCmd: CommandModule = {
  command: 'set-policy <dir>',
  describe: "Change the gate's policy: a named principal's signed act, recorded in the gate state",
  builder: (y: Argv) =>
    y
      .positional('dir', { type: 'string', demandOption: true })
      .option('policy', { type: 'string', demandOption: true, describe: 'the new policy YAML' })
      .option('principal', { type: 'string', demandOption: true, describe: 'name in the gate trust.yaml' })
      .option('key', { type: 'string', demandOption: true, describe: "the principal's private key (PEM)" })
      .option('reason', { type: 'string', demandOption: true }),
  handler: (argv) => {
    const gate = new GateService(String(argv.dir));
    try {
      const next = loadPolicy(String(argv.policy));
      const key = loadPrivateKey(String(argv.key));
      const envelope = signPolicyChange(
        {
          _type: POLICY_CHANGE_TYPE,
          previousHash: gate.policy().hash,
          policyHash: next.hash,
          policyVersion: next.policy.version,
          principal: String(argv.principal),
          reason: String(argv.reason),
          createdAt: new Date().toISOString(),
        },
        key,
        createPublicKey(key),
      );
      const r = gate.setPolicy(String(argv.policy), envelope);
      process.stdout.write(`policy ${r.version} (${r.hash}) pinned by ${r.principal}\n`);
    } finally {
      gate.close();
    }
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
      .option('policy', { type: 'string', hidden: true })
      .option('json', { type: 'boolean', default: false }),
  handler: async (argv) => {
    if (argv.policy !== undefined)
      throw new UserError(
        '--policy: the gate decides only under its own pinned policy; a principal changes it with probate gate set-policy',
      );
    const gate = openGate(String(argv.gate));
    try {
      const r = await gate.decide(String(argv.run));
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
      .option('runs-root', {
        type: 'string',
        demandOption: true,
        describe: 'run directories callers may name (confined here)',
      })
      .option('release-root', { type: 'string', describe: 'where directory releases may be written' })
      .option('port', { type: 'number', default: 0 })
      .option('host', { type: 'string', default: '127.0.0.1' })
      .option('tls-cert', { type: 'string', describe: 'PEM certificate (serve HTTPS)' })
      .option('tls-key', { type: 'string', describe: 'PEM private key for --tls-cert' })
      .option('behind-proxy', {
        type: 'boolean',
        default: false,
        describe: 'a reverse proxy terminates TLS in front of this gate (allows a non-loopback --host)',
      }),
  handler: async (argv) => {
    const host = String(argv.host);
    const [certFile, keyFile] = [argv.tlsCert as string | undefined, argv.tlsKey as string | undefined];
    if (Boolean(certFile) !== Boolean(keyFile)) throw new UserError('--tls-cert and --tls-key go together');
    checkBind(host, { tls: Boolean(certFile), behindProxy: Boolean(argv.behindProxy) });
    const runsRoot = String(argv.runsRoot);
    if (!existsSync(runsRoot) || !statSync(runsRoot).isDirectory())
      throw new UserError(`--runs-root: ${runsRoot} is not a directory`);
    const releaseRoot = argv.releaseRoot as string | undefined;
    if (releaseRoot && (!existsSync(releaseRoot) || !statSync(releaseRoot).isDirectory()))
      throw new UserError(`--release-root: ${releaseRoot} is not a directory`);
    const tls =
      certFile && keyFile
        ? { cert: readFileOr(certFile, '--tls-cert'), key: readFileOr(keyFile, '--tls-key') }
        : undefined;
    if (tls && keyFile) requirePrivateMode(keyFile, 'key');
    const service = new GateService(String(argv.gate));
    service.policy();
    const server = createGateServer(service, {
      runsRoot,
      releaseRoot,
      tls,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    const addr = await listen(server, Number(argv.port), host);
    process.stdout.write(`listening ${tls ? 'https' : 'http'}://${addr.address}:${addr.port}\n`);
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
  describe: 'The release gate: init, add-principal, add-caller, set-policy, decide, serve, reconcile',
  builder: (y: Argv) =>
    y
      .command(init)
      .command(addPrincipalCmd)
      .command(addCallerCmd)
      .command(setPolicyCmd)
      .command(decideCmd)
      .command(serve)
      .command(reconcileCmd)
      .demandCommand(1),
  handler: () => {},
};

function readFileOr(file: string, flag: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new UserError(`${flag}: ${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
}

export function readJsonFile(file: string, what: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new UserError(`${file}: cannot read ${what} (${code ?? 'not JSON'})`);
  }
}

/** The gate's public key for checking gate records: `--gate-pub FILE`, or `--gate DIR` (its gate.pub). */
export function gatePubOption(argv: { gatePub?: unknown; gate?: unknown }): KeyObject | undefined {
  if (typeof argv.gatePub === 'string') return loadPublicKey(argv.gatePub);
  if (typeof argv.gate === 'string') {
    if (/^https?:\/\//.test(argv.gate))
      throw new UserError('--gate: name the gate DIR (or use --gate-pub FILE) to verify gate records');
    return loadPublicKey(join(argv.gate, GATE_PUB_FILE));
  }
  return undefined;
}

export function withGatePubOptions<T>(y: Argv<T>) {
  return y
    .option('gate', { type: 'string', describe: 'gate DIR: verify gate records with its gate.pub' })
    .option('gate-pub', { type: 'string', describe: "the gate's public key (PEM) to verify gate records" });
}
