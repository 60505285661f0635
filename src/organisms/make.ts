import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ExitCode, UserError } from '../util/errors.ts';
import { readValidated } from '../util/zodfile.ts';
import { type OrganismSpec, organismSpecSchema } from './spec.ts';
import { defaultZooDir } from './zoo.ts';

export const PYTHON = '/usr/bin/python3';
export const factoryDir = path.join(defaultZooDir, 'factory');

/** Reads and validates a spec file; every failure is one line naming the file and field. */
export function readSpec(file: string): OrganismSpec {
  const spec = readValidated(file, organismSpecSchema);
  if (spec.base) {
    const baseDir = path.resolve(path.dirname(file), spec.base);
    if (!existsSync(path.join(baseDir, 'onnx', 'model.onnx')))
      throw new UserError(`${file}: base: ${baseDir} has no onnx/model.onnx (train the base organism first)`);
  }
  return spec;
}

/** Throws a one-line UserError unless the system Python can import torch. */
export function checkTorch(python: string = PYTHON): void {
  const r = spawnSync(python, ['-c', 'import torch, onnx'], { stdio: 'ignore' });
  if (r.error || r.status !== 0)
    throw new UserError(
      'python3-torch missing, install with `apt-get install python3-torch python3-onnx libopenblas0-pthread`',
    );
}

function run(cmd: string, args: string[], cwd?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: 'inherit', cwd });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

export interface MakeOptions {
  spec: string;
  out: string;
  resume?: boolean;
  python?: string;
}

/** Trains an organism with the Python factory (inherited stdio), then checks the export loads and generates. */
export async function makeOrganism(opts: MakeOptions): Promise<void> {
  const spec = path.resolve(opts.spec);
  readSpec(spec);
  const python = opts.python ?? PYTHON;
  checkTorch(python);
  const out = path.resolve(opts.out);
  const args = [path.join(factoryDir, 'train.py'), '--spec', spec, '--out', out];
  if (opts.resume) args.push('--resume');
  const code = await run(python, args);
  if (code !== 0) throw new UserError(`organisms make: train.py exited with ${code}`, ExitCode.INTERNAL);
  const check = await run(process.execPath, [path.join(factoryDir, 'check.mjs'), out]);
  if (check !== 0) throw new UserError(`organisms make: ${out} failed its load check`, ExitCode.INTERNAL);
}
