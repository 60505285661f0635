import yargs, { type CommandModule } from 'yargs';
import { ExitCode, UserError } from '../util/errors.ts';
import { TOOL_VERSION } from '../util/version.ts';
import { describeFailure, oneLine } from './boundary.ts';
import { checkOptions } from './options.ts';
import { commands } from './registry.ts';

/**
 * Runs the CLI and returns the process exit code. Every failure prints one line (src/cli/boundary.ts):
 * exit 2 for bad input, 1 for an unusable endpoint or an internal error; a stack only with --debug.
 */
export async function main(argv: string[]): Promise<number> {
  const debug = argv.includes('--debug');
  let exitCode: number = ExitCode.OK;
  const parser = yargs(argv)
    .scriptName('probate')
    .usage(
      '$0 <command> [options]\n\nAudit a fine-tuned checkpoint against its base; gate its release on the findings.',
    )
    .version(TOOL_VERSION)
    .strict()
    .demandCommand(1, 'name a command (see probate --help)')
    .recommendCommands()
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .option('debug', { type: 'boolean', describe: 'print the stack of an internal error' })
    // yargs passes its instance (with the command's own declarations) as the second argument.
    .middleware(((args: Record<string, unknown>, y: { getOptions(): object }) =>
      checkOptions(args, y.getOptions())) as unknown as (args: object) => void)
    .fail((msg, err) => {
      // yargs calls this for parse errors (msg) and for errors thrown by handlers (err).
      if (err) throw err;
      throw new UserError(parseErrorLine(msg ?? 'invalid arguments', argv));
    })
    .help()
    // main() returns the exit code; it never ends the process itself (tests call it in-process).
    .exitProcess(false);
  for (const command of commands) parser.command(command as CommandModule);
  try {
    const result = (await parser.parseAsync()) as { exitCode?: number };
    if (typeof result.exitCode === 'number') exitCode = result.exitCode;
  } catch (err) {
    const failure = describeFailure(err, debug);
    process.stderr.write(failure.text);
    return failure.exitCode;
  }
  return exitCode;
}

/** yargs' own messages, on one line; a bad choice says which flag, what was given and what is allowed. */
function parseErrorLine(msg: string, argv: string[]): string {
  const suggestion = /^Did you mean (\S+)\?$/.exec(msg.trim());
  if (suggestion) return `unknown command "${argv[0]}"; did you mean ${suggestion[1]}?`;
  const choice = /Invalid values:\s*Argument: (\S+), Given: (.+?), Choices: (.+)$/s.exec(msg);
  if (choice) return `--${choice[1]}: ${choice[2]} is not allowed; expected one of ${oneLine(choice[3]!)}`;
  return oneLine(msg);
}
