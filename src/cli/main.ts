import yargs, { type CommandModule } from 'yargs';
import { ExitCode, UserError } from '../util/errors.ts';
import { TOOL_VERSION } from '../util/version.ts';
import { commands } from './registry.ts';

/** Runs the CLI and returns the process exit code. User errors print one line; internal errors exit 1. */
export async function main(argv: string[]): Promise<number> {
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
    .fail((msg, err) => {
      // yargs calls this for parse errors (msg) and for errors thrown by handlers (err).
      if (err) throw err;
      throw new UserError(msg ?? 'invalid arguments');
    })
    .help()
    // main() returns the exit code; it never ends the process itself (tests call it in-process).
    .exitProcess(false);
  for (const command of commands) parser.command(command as CommandModule);
  try {
    const result = (await parser.parseAsync()) as { exitCode?: number };
    if (typeof result.exitCode === 'number') exitCode = result.exitCode;
  } catch (err) {
    if (err instanceof UserError) {
      process.stderr.write(`probate: ${err.message.split('\n')[0]}\n`);
      return err.exitCode;
    }
    process.stderr.write(`probate: internal error: ${(err as Error)?.stack ?? String(err)}\n`);
    return ExitCode.INTERNAL;
  }
  return exitCode;
}
