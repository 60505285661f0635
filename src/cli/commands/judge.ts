import { fileURLToPath } from 'node:url';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { openEndpoint } from '../../endpoints/open.ts';
import { calibrate, defaultCalibrationStore, loadLabels, writeCalibration } from '../../judges/calibrate.ts';
import { loadRubrics } from '../../judges/rubric.ts';
import { UserError } from '../../util/errors.ts';
import { atEndpoint } from '../boundary.ts';
import { endpointOptions, type HttpFlagArgs, withHttpFlags, withKeyFlags } from '../http-flags.ts';

const DEFAULT_RUBRICS = fileURLToPath(new URL('../../../judges', import.meta.url));

interface CalibrateArgs extends HttpFlagArgs {
  labels: string;
  judge: string;
  rubrics: string;
  store: string;
  cacheDir?: string;
  attempts: number;
  concurrency: number;
  json: boolean;
}

const fmt = (x: number | null): string => (x === null ? 'n/a' : x.toFixed(3));

const calibrateCommand: CommandModule<object, CalibrateArgs> = {
  command: 'calibrate',
  describe: 'Measure a judge against labelled pairs (both orders) and store the result under its identity',
  builder: (y: Argv) =>
    withKeyFlags(withHttpFlags(y), [])
      .option('labels', {
        type: 'string',
        demandOption: true,
        describe: 'labelled pairs: a JSON/YAML file or a folder',
      })
      .option('judge', {
        type: 'string',
        demandOption: true,
        describe: 'judge model reference (vllm:URL#MODEL, hf:MODEL, ...)',
      })
      .option('rubrics', { type: 'string', default: DEFAULT_RUBRICS, describe: 'rubric folder' })
      .option('store', {
        type: 'string',
        default: defaultCalibrationStore(),
        describe: 'calibration store folder',
      })
      .option('cache-dir', { type: 'string', describe: 'cache judge verdicts by content hash here' })
      .option('attempts', {
        type: 'number',
        default: 3,
        describe: 'attempts per order before malformed output is uncertain',
      })
      .option('concurrency', { type: 'number', default: 4, describe: 'pairs judged at once' })
      .option('json', {
        type: 'boolean',
        default: false,
        describe: 'print the result as JSON',
      }) as unknown as Argv<CalibrateArgs>,
  handler: async (argv: ArgumentsCamelCase<CalibrateArgs>) => {
    if (!Number.isInteger(argv.attempts) || argv.attempts < 1 || argv.attempts > 10) {
      throw new UserError('--attempts: expected an integer from 1 to 10');
    }
    if (!Number.isInteger(argv.concurrency) || argv.concurrency < 1 || argv.concurrency > 64) {
      throw new UserError('--concurrency: expected an integer from 1 to 64');
    }
    const labels = loadLabels(argv.labels);
    const rubrics = loadRubrics(argv.rubrics);
    const judge = await openEndpoint(argv.judge, endpointOptions(argv));
    try {
      const record = await atEndpoint(`--judge ${judge.ref}`, () =>
        calibrate({
          judge,
          rubrics,
          labels,
          cacheDir: argv.cacheDir,
          maxAttempts: argv.attempts,
          concurrency: argv.concurrency,
        }),
      );
      const file = writeCalibration(record, argv.store);
      const m = record.metrics;
      if (argv.json) {
        process.stdout.write(
          `${JSON.stringify({ agreement: m.agreement, kappa: m.kappa, position_flip_rate: m.position_flip_rate, uncertain_rate: m.uncertain_rate, pairs: m.pairs, decisive: m.decisive, confusion: m.confusion, uncertain_by_reason: m.uncertain_by_reason, by_behaviour: m.by_behaviour, judge_calls: m.judge_calls, judge: record.judgeRef, fingerprint: record.fingerprint, stored: file }, null, 2)}\n`,
        );
      } else {
        process.stdout.write(
          `judge ${record.judgeRef} on ${m.pairs} labelled pairs (${m.judge_calls} calls)\n` +
            `  agreement (decided pairs) ${fmt(m.agreement)}   kappa ${fmt(m.kappa)}\n` +
            `  position flip rate ${fmt(m.position_flip_rate)}   uncertain rate ${fmt(m.uncertain_rate)}\n` +
            `  stored ${file}\n`,
        );
      }
    } finally {
      await judge.close();
    }
  },
};

export const judgeCommand: CommandModule = {
  command: 'judge <command>',
  describe: 'LLM judge: calibration against labelled pairs',
  builder: (y: Argv) => y.command(calibrateCommand as unknown as CommandModule).demandCommand(1),
  handler: () => {},
};
