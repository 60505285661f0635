import { join } from 'node:path';
import type { CommandModule } from 'yargs';
import { incompleteReason, readRunState } from '../../ledger/run-state.ts';
import {
  projectReport,
  REPORT_FILES,
  REPORT_FORMATS,
  type ReportFormat,
  renderReport,
  writeAllReports,
} from '../../report/index.ts';
import { ExitCode, UserError } from '../../util/errors.ts';
import { gatePubOption, withGatePubOptions } from './gate.ts';

interface ReportArgs {
  run: string;
  gate?: string;
  gatePub?: string;
  format: ReportFormat;
  write: boolean;
  policy?: string;
  exitCode?: number;
}

/** `probate report RUN`: projects the run's ledger into a report on stdout, or writes all formats into RUN. */
export const reportCommand: CommandModule<object, ReportArgs> = {
  command: 'report <run>',
  describe: 'render the report of an audit run from its evidence ledger',
  builder: (y) =>
    withGatePubOptions(y)
      .positional('run', { type: 'string', demandOption: true, describe: 'run directory (the audit --out)' })
      .option('format', {
        alias: 'f',
        choices: REPORT_FORMATS,
        default: 'md' as ReportFormat,
        describe: 'output format (printed to stdout)',
      })
      .option('write', {
        type: 'boolean',
        default: false,
        describe: `write every format into RUN (${Object.values(REPORT_FILES).join(', ')}) instead of printing`,
      })
      .option('policy', {
        type: 'string',
        describe:
          "policy file to evaluate when no gate decided (default: the run manifest's, then the shipped one; used only if its hash is the run's)",
      }),
  handler: (argv) => {
    const opts = { gatePub: gatePubOption(argv), policyFile: argv.policy };
    const model = projectReport(argv.run, opts);
    // A ledger without run.start holds no audit; one without a proper run.end is rendered, but said so.
    const state = readRunState(join(argv.run, 'ledger.sqlite'));
    if (state.state === 'no-run')
      throw new UserError(`${argv.run}: ${incompleteReason(state)}; nothing to report`);
    if (argv.write) {
      const paths = writeAllReports(argv.run, opts);
      process.stdout.write(`${Object.values(paths).join('\n')}\n`);
    } else process.stdout.write(renderReport(model, argv.format));
    const incomplete = incompleteReason(state);
    if (incomplete) {
      process.stderr.write(`probate: ${argv.run}: ${incomplete}\n`);
      argv.exitCode = ExitCode.USAGE;
    }
  },
};
