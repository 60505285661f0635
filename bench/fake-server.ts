/**
 * Starts the zero-latency vLLM-shaped server (bench/client-server.ts, over src/testing/fake-vllm.ts) in a
 * child process, so load generators and the server do not share an event loop.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import { createInterface } from 'node:readline';

export interface ChildServer {
  /** e.g. http://127.0.0.1:PORT/v1 */
  url: string;
  /** The model it serves. */
  model: string;
  stop(): Promise<void>;
}

/**
 * With `pin` (and taskset and ≥ 2 CPUs), the server gets CPU 0 and this process with everything it spawns
 * (promptfoo) the rest, so the contenders compete for the same server rather than with it for a core.
 * Returns how the processes were placed, for the record.
 */
export async function startChildServer(pin = false): Promise<ChildServer & { placement: string }> {
  const script = ['--import', 'tsx', new URL('./client-server.ts', import.meta.url).pathname];
  const cpus = os.cpus().length;
  const canPin = pin && cpus >= 2 && hasTaskset();
  if (canPin)
    execFileSync('taskset', ['-a', '-cp', `1-${cpus - 1}`, String(process.pid)], { stdio: 'ignore' });
  const child = canPin
    ? spawn('taskset', ['-c', '0', process.execPath, ...script], { stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, script, { stdio: ['ignore', 'pipe', 'inherit'] });
  const placement = canPin
    ? `server pinned to CPU 0, load generators to CPU 1-${cpus - 1} (taskset)`
    : 'unpinned (server and load generators share all CPUs)';
  const lines = createInterface({ input: child.stdout! });
  const [line] = (await once(lines, 'line')) as [string];
  return {
    url: line.replace('listening ', ''),
    model: 'delivered',
    placement,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
