import { EndpointError } from '../endpoints/types.ts';
import { ExitCode, UserError } from '../util/errors.ts';

/**
 * The one error boundary every command runs inside: whatever a user or a remote server can cause becomes
 * one line on stderr and an exit code (2 bad input, 1 unreachable or broken endpoint). A stack is printed
 * only with --debug, and only for what we did not foresee.
 */
export function describeFailure(err: unknown, debug: boolean): { text: string; exitCode: number } {
  if (err instanceof UserError) return { text: `probate: ${oneLine(err.message)}\n`, exitCode: err.exitCode };
  if (err instanceof EndpointError)
    return { text: `probate: ${endpointFailureLine(err)}\n`, exitCode: endpointExitCode(err) };
  const fsLine = fileSystemLine(err);
  if (fsLine) return { text: `probate: ${fsLine}\n`, exitCode: ExitCode.USAGE };
  const e = err as Error | undefined;
  if (debug)
    return { text: `probate: internal error: ${e?.stack ?? String(err)}\n`, exitCode: ExitCode.INTERNAL };
  return {
    text: `probate: internal error: ${oneLine(e?.message ?? String(err))} (run with --debug for the stack)\n`,
    exitCode: ExitCode.INTERNAL,
  };
}

/** A local model folder the engine cannot use is bad input (2); a server that fails is the endpoint's (1). */
function endpointExitCode(err: EndpointError): number {
  return err.kind === 'engine' ? ExitCode.USAGE : ExitCode.ENDPOINT;
}

/** Collapses a message onto one line (yargs and some libraries write several). */
export function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, '; ').trim();
}

/** What an endpoint answered, and what we expected of it: the line users read when a model server fails. */
export function endpointFailureLine(err: EndpointError): string {
  const said = oneLine(err.message);
  switch (err.kind) {
    case 'connection':
      return `${said}: expected a reachable server (is it running, and is the URL right?)`;
    case 'timeout':
      return `${said}: expected a reply within the deadline (--request-timeout, --idle-timeout)`;
    case 'invalid_response':
    case 'stream_error':
      return `${said}: expected a vLLM/OpenAI-compatible reply`;
    case 'context_length':
      return `${said}: expected a context window that fits the probes`;
    case 'http':
      if (err.status === 401 || err.status === 403)
        return `${said}: expected credentials: name the variable holding the API key with --api-key-env`;
      return said;
    default:
      return said;
  }
}

/** A file-system error (ENOENT, ENOTDIR, EACCES, ...) names its path and what failed. */
function fileSystemLine(err: unknown): string | undefined {
  const e = err as NodeJS.ErrnoException | undefined;
  if (!e || typeof e.code !== 'string' || typeof e.path !== 'string' || !/^E[A-Z]+$/.test(e.code))
    return undefined;
  return `${e.path}: cannot ${e.syscall ?? 'access'} (${e.code})`;
}

/**
 * Runs a step that talks to one endpoint; its failure becomes one line naming the endpoint as the user gave
 * it (`--base vllm:http://…#m`), what it answered and what was expected, with exit 1.
 */
export async function atEndpoint<T>(label: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    if (err instanceof EndpointError)
      throw new UserError(`${label}: ${endpointFailureLine(err)}`, endpointExitCode(err));
    throw err;
  }
}
