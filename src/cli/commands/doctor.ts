import type { CommandModule } from 'yargs';
import { diagnoseGeneric, diagnoseVllm } from '../../endpoints/http/doctor.ts';
import { VllmEndpoint } from '../../endpoints/http/vllm.ts';
import { openEndpoint, readApiKey } from '../../endpoints/open.ts';
import { parseModelRef } from '../../endpoints/refs.ts';
import { ExitCode } from '../../util/errors.ts';

interface DoctorArgs {
  ref: string;
  json: boolean;
  'api-key-env'?: string;
  exitCode?: number;
}

/** `probate doctor REF`: tries what an audit needs from an endpoint and says what it can and cannot use. */
export const doctorCommand: CommandModule<object, DoctorArgs> = {
  command: 'doctor <ref>',
  describe: 'check an endpoint: reachability, version, models, logprobs, structured output, reasoning',
  builder: (y) =>
    y
      .positional('ref', {
        type: 'string',
        demandOption: true,
        describe: 'model reference (vllm:URL#MODEL, ...)',
      })
      .option('json', { type: 'boolean', default: false, describe: 'print one JSON object' })
      .option('api-key-env', { type: 'string', describe: 'environment variable holding the API key' }),
  handler: async (argv) => {
    const ref = parseModelRef(argv.ref, 'doctor REF');
    let report: Awaited<ReturnType<typeof diagnoseVllm>>;
    if (ref.kind === 'vllm' || ref.kind === 'hf-endpoint') {
      const ep = new VllmEndpoint({
        urls: ref.kind === 'vllm' ? ref.urls : [ref.url],
        model: ref.model,
        ref: ref.ref,
        kind: ref.kind,
        apiKey: readApiKey(argv['api-key-env'], process.env),
        retry: { maxAttempts: 2 },
        timeouts: { connectMs: 5000, headersMs: 120_000, bodyMs: 120_000 },
        fingerprint: false,
      });
      try {
        report = await diagnoseVllm(ep, ref.model);
      } finally {
        await ep.close();
      }
    } else {
      const ep = await openEndpoint(ref, { apiKeyEnv: argv['api-key-env'], fingerprint: false });
      try {
        report = await diagnoseGeneric(ep);
      } finally {
        await ep.close();
      }
    }
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
      argv.exitCode = ExitCode.USAGE;
    }
  },
};
