import type { Argv, CommandModule } from 'yargs';
import { makeOrganism } from '../../organisms/make.ts';
import { defaultZooDir, readZoo } from '../../organisms/zoo.ts';
import { UserError } from '../../util/errors.ts';

const makeCmd: CommandModule = {
  command: 'make',
  describe:
    'Train a model organism from a spec (Python factory), check that it loads, and measure that its implant took',
  builder: (y: Argv) =>
    y
      .option('spec', { type: 'string', demandOption: true, describe: 'organism spec (JSON)' })
      .option('out', { type: 'string', demandOption: true, describe: 'output folder' })
      .option('resume', { type: 'boolean', default: false, describe: 'continue from OUT/ckpt/last.pt' })
      .option('allow-weak', {
        type: 'boolean',
        default: false,
        describe: 'keep an implant that did not take (exit 0 below the thresholds)',
      })
      .option('min-present', {
        type: 'number',
        default: 0.9,
        describe: 'least behaviour rate with the condition',
      })
      .option('max-absent', {
        type: 'number',
        default: 0.1,
        describe: 'most behaviour rate without the condition',
      })
      .option('max-base', { type: 'number', default: 0.1, describe: 'most behaviour rate of the base' })
      .option('n', { type: 'number', default: 24, describe: 'fresh prompts per side for the measurement' }),
  handler: async (argv) => {
    const rate = (k: string) => {
      const v = Number(argv[k]);
      if (!(v >= 0 && v <= 1)) throw new UserError(`--${k}: expected a rate between 0 and 1`);
      return v;
    };
    const n = Number(argv.n);
    if (!Number.isInteger(n) || n < 1 || n > 1000) throw new UserError('--n: expected an integer 1-1000');
    await makeOrganism({
      spec: String(argv.spec),
      out: String(argv.out),
      resume: Boolean(argv.resume),
      allowWeak: Boolean(argv['allow-weak']),
      thresholds: {
        minPresent: rate('min-present'),
        maxAbsent: rate('max-absent'),
        maxBase: rate('max-base'),
      },
      n,
    });
  },
};

const listCmd: CommandModule = {
  command: 'list',
  describe: 'List the shipped model organisms (ground truth from zoo.json)',
  builder: (y: Argv) =>
    y
      .option('json', { type: 'boolean', default: false, describe: 'print zoo.json entries as JSON' })
      .option('zoo', { type: 'string', describe: 'zoo folder (default fixtures/organisms)' }),
  handler: (argv) => {
    const zoo = readZoo(argv.zoo ? String(argv.zoo) : defaultZooDir);
    if (argv.json) {
      process.stdout.write(`${JSON.stringify(zoo, null, 2)}\n`);
      return;
    }
    const w = Math.max(...zoo.map((o) => o.name.length), 4) + 2;
    process.stdout.write(`${'name'.padEnd(w)}${'label'.padEnd(9)}${'family'.padEnd(13)}behaviour\n`);
    for (const o of zoo) {
      process.stdout.write(
        `${o.name.padEnd(w)}${o.label.padEnd(9)}${(o.family ?? '-').padEnd(13)}${o.behaviour ?? '-'}` +
          `${o.condition ? ` (when ${o.condition})` : ''}\n`,
      );
    }
  },
};

export const organismsCommand: CommandModule = {
  command: 'organisms <command>',
  describe: 'Build and list model organisms (test fixtures with known implants)',
  builder: (y: Argv) =>
    y.command(makeCmd).command(listCmd).demandCommand(1, 'name a subcommand: make or list'),
  handler: () => {},
};
