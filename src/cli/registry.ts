import type { CommandModule } from 'yargs';

/**
 * Every CLI command, one file each under src/cli/commands/. A handler that decides an exit code sets
 * `argv.exitCode`; main() returns it.
 */
export const commands: CommandModule[] = [];
