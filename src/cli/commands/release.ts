import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { openGate } from '../../gate/client.ts';
import { ExitCode } from '../../util/errors.ts';
import { printRelease, readJsonFile, STATE_EXIT } from './gate.ts';

export const releaseCommand: CommandModule = {
  command: 'release <attestation>',
  describe: "Spend the attestation's single-use capability: promote the verified weights to TARGET",
  builder: (y: Argv) =>
    y
      .positional('attestation', { type: 'string', demandOption: true })
      .option('gate', { type: 'string', demandOption: true, describe: 'gate DIR or http://HOST:PORT' })
      .option('to', { type: 'string', demandOption: true, describe: 'DIR (must not exist) or webhook:URL' })
      .option('timeout-ms', { type: 'number', default: 30_000, describe: 'webhook reply timeout' })
      .option('json', { type: 'boolean', default: false }),
  handler: async (argv) => {
    const att = readJsonFile(String(argv.attestation), 'attestation');
    const gate = openGate(String(argv.gate));
    try {
      const r = await gate.release(att, String(argv.to), Number(argv.timeoutMs));
      printRelease(r, Boolean(argv.json));
      (argv as ArgumentsCamelCase & { exitCode?: number }).exitCode =
        r.state === 'RELEASED'
          ? ExitCode.OK
          : r.state === 'COMMITTABLE'
            ? ExitCode.INTERNAL
            : (STATE_EXIT[r.state] ?? 1);
    } finally {
      await gate.close();
    }
  },
};
