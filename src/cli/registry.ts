import type { CommandModule } from 'yargs';
import { auditCommand } from './commands/audit.ts';
import { benchCommand } from './commands/bench.ts';
import { doctorCommand } from './commands/doctor.ts';
import { gateCommand } from './commands/gate.ts';
import { judgeCommand } from './commands/judge.ts';
import { ledgerCommand } from './commands/ledger.ts';
import { organismsCommand } from './commands/organisms.ts';
import { overrideCommand } from './commands/override.ts';
import { probesCommand } from './commands/probes.ts';
import { releaseCommand } from './commands/release.ts';
import { reportCommand } from './commands/report.ts';
import { serveCommand } from './commands/serve.ts';
import { verifyCommand } from './commands/verify.ts';
import { withExamples } from './examples.ts';

/**
 * Every CLI command, one file each under src/cli/commands/. A handler that decides an exit code sets
 * `argv.exitCode`; main() returns it.
 */
export const commands: CommandModule[] = (
  [
    serveCommand as unknown as CommandModule,
    auditCommand as unknown as CommandModule,
    benchCommand,
    probesCommand,
    doctorCommand as unknown as CommandModule,
    gateCommand,
    ledgerCommand,
    verifyCommand,
    releaseCommand,
    overrideCommand,
    judgeCommand,
    reportCommand as unknown as CommandModule,
    organismsCommand as unknown as CommandModule,
  ] as CommandModule[]
).map((c) => withExamples(c));
