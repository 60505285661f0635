/**
 * Starts the zero-latency vLLM-shaped server (bench/client-server.ts, over test/helpers/fake-vllm.ts) in a
 * child process, so load generators and the server do not share an event loop.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export interface ChildServer {
  /** e.g. http://127.0.0.1:PORT/v1 */
  url: string;
  /** The model it serves. */
  model: string;
  stop(): Promise<void>;
}

export async function startChildServer(): Promise<ChildServer> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./client-server.ts', import.meta.url).pathname],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  return {
    url: line.replace('listening ', ''),
    model: 'delivered',
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
