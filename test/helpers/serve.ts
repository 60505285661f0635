import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Starts `probate serve ARGS --port 0` and resolves with the child and the URL it printed. */
export async function startServe(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['bin/probate.js', 'serve', ...args, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      const m = /^listening (http:\/\/\S+)/.exec(line);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`probate serve exited with ${code}`)));
  });
  return { child, url };
}
