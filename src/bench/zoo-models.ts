import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { openEndpoint } from '../endpoints/open.ts';
import type { AttemptObserver, ModelEndpoint } from '../endpoints/types.ts';
import { UserError } from '../util/errors.ts';

/** Where the zoo benchmark gets its models from: the embedded engine, one server, or a test double. */
export interface ModelSource {
  /** How the models are reached, e.g. `local` or `serve`. */
  readonly via: string;
  /** The model reference an audit of `name` records (local:DIR or vllm:URL#name). */
  ref(name: string): string;
  open(name: string, observer?: AttemptObserver): Promise<ModelEndpoint>;
  close(): Promise<void>;
}

/** Where each organism's folder is: the plan's `dirs`, or `zooDir/NAME`. */
export type OrganismDirs = (name: string) => string;
const inZoo =
  (zooDir: string): OrganismDirs =>
  (name) =>
    join(zooDir, name);

/** An organism folder must hold an exported model; checked for all before any audit spends time. */
export function checkOrganismDirs(
  zooDir: string,
  names: ReadonlyArray<string>,
  dirOf: OrganismDirs = inZoo(zooDir),
): void {
  for (const name of names) {
    const dir = dirOf(name);
    for (const file of ['config.json', 'tokenizer.json', join('onnx', 'model.onnx')])
      if (!existsSync(join(dir, file)))
        throw new UserError(
          `${join(zooDir, 'zoo.json')}: organism ${name}: ${join(dir, file)} is missing (not built?)`,
        );
  }
}

/** Opens an endpoint, turning a load failure into a one-line error naming the organism. */
async function openNamed(name: string, ref: string, opts: Parameters<typeof openEndpoint>[1]) {
  try {
    return await openEndpoint(ref, opts);
  } catch (err) {
    if (err instanceof UserError) throw err;
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new UserError(`organism ${name}: cannot open ${ref}: ${why}`);
  }
}

/** `--via local`: each organism through the embedded onnxruntime engine, in this process. */
export function localSource(
  zooDir: string,
  threads?: number,
  dirOf: OrganismDirs = inZoo(zooDir),
): ModelSource {
  return {
    via: 'local',
    ref: (name) => `local:${dirOf(name)}`,
    open: (name) => openNamed(name, `local:${dirOf(name)}`, { threads }),
    close: async () => {},
  };
}

/**
 * `--via serve`: one `probate serve` child holding the base and every organism as named models; audits
 * reach them as `vllm:URL#name` over loopback HTTP, the way a deployment with a vLLM server would.
 */
export async function serveSource(
  zooDir: string,
  names: ReadonlyArray<string>,
  opts: { threads?: number; concurrency?: number; dirOf?: OrganismDirs } = {},
): Promise<ModelSource> {
  const bin = resolve(new URL('../../bin/probate.js', import.meta.url).pathname);
  const dirOf = opts.dirOf ?? inZoo(zooDir);
  const args = [bin, 'serve', ...names.map((n) => `local:${dirOf(n)}=${n}`), '--port', '0'];
  if (opts.threads) args.push('--threads', String(opts.threads));
  args.push('--reasoning-parser', 'think');
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-2000);
  });
  const lines = createInterface({ input: child.stdout! });
  const url = await Promise.race([
    (async () => {
      for await (const line of lines)
        if (line.startsWith('listening ')) return line.slice('listening '.length);
      return undefined;
    })(),
    once(child, 'exit').then(() => undefined),
  ]);
  if (!url) {
    child.kill('SIGTERM');
    const last = stderr.trim().split('\n').at(-1) ?? 'no output';
    throw new UserError(`bench zoo --via serve: probate serve did not start: ${last}`);
  }
  const root = url.replace(/\/v1\/?$/, '');
  return {
    via: 'serve',
    ref: (name) => `vllm:${root}#${name}`,
    open: (name, observer) =>
      openNamed(name, `vllm:${root}#${name}`, { observer, concurrency: opts.concurrency, fingerprint: true }),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
