import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { LEDGER_FILE } from '../../gate/evidence.ts';
import { MANIFEST_FILE, readManifest } from '../../ledger/manifest.ts';
import { verifyLedger } from '../../ledger/verify.ts';
import { ExitCode } from '../../util/errors.ts';

const verify: CommandModule = {
  command: 'verify <run>',
  describe: "Recompute the ledger's hash chain (and check the manifest's evidence root)",
  builder: (y: Argv) =>
    y
      .positional('run', { type: 'string', demandOption: true })
      .option('json', { type: 'boolean', default: false }),
  handler: (argv) => {
    const run = String(argv.run);
    const root = existsSync(join(run, MANIFEST_FILE)) ? readManifest(run).evidenceRoot : undefined;
    const r = verifyLedger(join(run, LEDGER_FILE), { evidenceRoot: root });
    if (argv.json) process.stdout.write(`${JSON.stringify({ ...r, evidenceRoot: root ?? null }, null, 2)}\n`);
    else if (r.ok)
      process.stdout.write(
        `ledger intact: ${r.records} records, head ${r.head.hash}${root ? `, evidence root at record ${r.rootSeq}` : ' (no evidence root in manifest)'}\n`,
      );
    else process.stdout.write(`ledger BROKEN at record ${r.error?.seq}: ${r.error?.reason}\n`);
    (argv as ArgumentsCamelCase & { exitCode?: number }).exitCode = r.ok ? ExitCode.OK : ExitCode.BLOCKED;
  },
};

export const ledgerCommand: CommandModule = {
  command: 'ledger <command>',
  describe: 'Evidence ledger tools',
  builder: (y: Argv) => y.command(verify).demandCommand(1),
  handler: () => {},
};
