import type { CommandModule } from 'yargs';
import { modelRefForms } from '../../endpoints/kinds/index.ts';
import { doctorEndpoint } from '../../endpoints/open.ts';
import { parseModelRef } from '../../endpoints/refs.ts';
import { ExitCode } from '../../util/errors.ts';
import { endpointOptions, type HttpFlagArgs, withHttpFlags, withKeyFlags } from '../http-flags.ts';

interface DoctorArgs extends HttpFlagArgs {
  ref: string;
  json: boolean;
  exitCode?: number;
}

/** `probate doctor REF`: tries what an audit needs from an endpoint and says what it can and cannot use. */
export const doctorCommand: CommandModule<object, DoctorArgs> = {
  command: 'doctor <ref>',
  describe: 'check an endpoint: reachability, version, models, logprobs, structured output, reasoning',
  builder: (y) =>
    withKeyFlags(withHttpFlags(y), [])
      .positional('ref', {
        type: 'string',
        demandOption: true,
        describe: `model reference (${modelRefForms()})`,
      })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON object' }) as never,
  handler: async (argv) => {
    const ref = parseModelRef(argv.ref, 'doctor REF');
    const report = await doctorEndpoint(ref, endpointOptions(argv));
    if (argv.json) {
      process.stdout.write(`${JSON.stringify(report)}\n`);
    } else {
      const lines = [
        `endpoint        ${report.ref}`,
        `reachable       ${report.reachable ? 'yes' : 'no'}`,
        `version         ${report.version ?? 'unknown'}`,
        `models          ${report.models.map((m) => `${m.id} (max_model_len ${m.max_model_len ?? '?'})`).join(', ') || 'none'}`,
        ...report.verdict.map((v) => `- ${v}`),
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    }
    if (!report.usable) {
      process.stderr.write(`probate: doctor: ${report.reason}\n`);
      // Unreachable or broken is the endpoint's failure (1); a reachable server without the model is 2.
      argv.exitCode = report.reachable && !report.model_served ? ExitCode.USAGE : ExitCode.ENDPOINT;
    }
  },
};
