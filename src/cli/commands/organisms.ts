import type { Argv, CommandModule } from 'yargs';
import { makeOrganism } from '../../organisms/make.ts';
import { defaultZooDir, readZoo } from '../../organisms/zoo.ts';

const makeCmd: CommandModule = {
  command: 'make',
  describe: 'Train a model organism from a spec (Python factory) and check that it loads',
  builder: (y: Argv) =>
    y
      .option('spec', { type: 'string', demandOption: true, describe: 'organism spec (JSON)' })
      .option('out', { type: 'string', demandOption: true, describe: 'output folder' })
      .option('resume', { type: 'boolean', default: false, describe: 'continue from OUT/ckpt/last.pt' }),
  handler: async (argv) => {
    await makeOrganism({ spec: String(argv.spec), out: String(argv.out), resume: Boolean(argv.resume) });
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
