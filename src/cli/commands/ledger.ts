import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { LEDGER_FILE } from '../../gate/evidence.ts';
import { MANIFEST_FILE, manifestHash, readManifest } from '../../ledger/manifest.ts';
import { incompleteReason, readRunState } from '../../ledger/run-state.ts';
import { verifyLedger } from '../../ledger/verify.ts';
import { ExitCode } from '../../util/errors.ts';
import { gatePubOption, withGatePubOptions } from './gate.ts';

const verify: CommandModule = {
  command: 'verify <run>',
  describe:
    "Recompute the ledger's hash chain, check the manifest's evidence root and (with --gate) the gate's signatures; an unfinished run exits 2",
  builder: (y: Argv) =>
    withGatePubOptions(
      y
        .positional('run', { type: 'string', demandOption: true })
        .option('json', { type: 'boolean', default: false }),
    ),
  handler: (argv) => {
    const run = String(argv.run);
    const manifest = existsSync(join(run, MANIFEST_FILE)) ? readManifest(run) : undefined;
    const root = manifest?.evidenceRoot;
    const gatePub = gatePubOption(argv as { gatePub?: unknown; gate?: unknown });
    const r = verifyLedger(join(run, LEDGER_FILE), {
      evidenceRoot: root,
      manifestHash: manifest ? manifestHash(manifest) : undefined,
      gatePub,
    });
    const incomplete = r.ok ? incompleteReason(readRunState(join(run, LEDGER_FILE))) : undefined;
    if (argv.json)
      process.stdout.write(
        `${JSON.stringify({ ...r, evidenceRoot: root ?? null, complete: r.ok && !incomplete, incomplete: incomplete ?? null }, null, 2)}\n`,
      );
    else if (r.ok)
      process.stdout.write(
        `ledger intact: ${r.records} records, head ${r.head.hash}${root ? `, evidence root at record ${r.rootSeq}` : ' (no evidence root in manifest)'}; ${r.gate.records} gate record(s) ${r.gate.records === 0 ? '' : r.gate.verified ? 'verified against gate.pub' : 'signed but NOT verified (pass --gate DIR or --gate-pub FILE)'}\n`,
      );
    else process.stdout.write(`ledger BROKEN at record ${r.error?.seq}: ${r.error?.reason}\n`);
    if (incomplete) process.stderr.write(`probate: ${run}: ${incomplete}\n`);
    (argv as ArgumentsCamelCase & { exitCode?: number }).exitCode = !r.ok
      ? ExitCode.BLOCKED
      : incomplete
        ? ExitCode.USAGE
        : ExitCode.OK;
  },
};

export const ledgerCommand: CommandModule = {
  command: 'ledger <command>',
  describe: 'Evidence ledger tools',
  builder: (y: Argv) => y.command(verify).demandCommand(1),
  handler: () => {},
};
