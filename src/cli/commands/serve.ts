import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { readApiKey } from '../../endpoints/open.ts';
import { type ServeModelSpec, startServer } from '../../endpoints/serve/index.ts';
import { UserError } from '../../util/errors.ts';

interface ServeArgs {
  models: string[];
  host: string;
  port: number;
  reasoningParser?: string;
  threads?: number;
  apiKeyEnv?: string;
}

/** `local:DIR` or `local:DIR=NAME` (NAME is what clients send as `model`). */
export function parseServeModel(text: string): ServeModelSpec {
  if (!text.startsWith('local:')) throw new UserError(`serve: ${text}: expected local:DIR[=NAME]`);
  const body = text.slice('local:'.length);
  const eq = body.lastIndexOf('=');
  const dir = eq >= 0 ? body.slice(0, eq) : body;
  const name = eq >= 0 ? body.slice(eq + 1) : undefined;
  if (!dir) throw new UserError(`serve: ${text}: expected a directory after local:`);
  if (name !== undefined && !/^[^\s#,]+$/.test(name)) {
    throw new UserError(`serve: ${text}: the name after = must be non-empty without spaces, # or ,`);
  }
  return { dir, name };
}

export const serveCommand: CommandModule<object, ServeArgs> = {
  command: 'serve <models..>',
  describe: 'Serve local models over a vLLM-compatible OpenAI API (several models on one port)',
  builder: (y: Argv) =>
    y
      .positional('models', {
        type: 'string',
        array: true,
        demandOption: true,
        describe: 'local:DIR[=NAME] ...',
      })
      .option('host', { type: 'string', default: '127.0.0.1' })
      .option('port', { type: 'number', default: 8000, describe: '0 picks a free port' })
      .option('reasoning-parser', {
        type: 'string',
        choices: ['think'],
        describe: 'split <think>…</think> into reasoning',
      })
      .option('threads', { type: 'number', describe: 'onnxruntime threads per model' })
      .option('api-key-env', {
        type: 'string',
        describe: 'environment variable holding the API key for /v1/*',
      }) as Argv<ServeArgs>,
  handler: async (argv: ArgumentsCamelCase<ServeArgs>) => {
    if (!Number.isInteger(argv.port) || argv.port < 0 || argv.port > 65535) {
      throw new UserError(`--port: expected 0..65535, got ${argv.port}`);
    }
    const server = await startServer({
      models: argv.models.map(parseServeModel),
      host: argv.host,
      port: argv.port,
      reasoningParser: argv.reasoningParser === 'think' ? 'think' : undefined,
      threads: argv.threads,
      apiKey: readApiKey(argv.apiKeyEnv, process.env),
    });
    process.stdout.write(`listening ${server.url}\n`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await server.close();
  },
};
