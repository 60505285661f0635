import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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

/** What `measure.py` records in organism.json: the behaviour's rate on fresh prompts generated at make time. */
export interface Expression {
  measured: boolean;
  n_present?: number;
  n_absent?: number;
  /** delivered model, condition present / absent */
  present?: number;
  absent?: number;
  /** delivered model on near misses (a trigger's fragments, other years, neighbouring topics): reported only */
  near_miss?: number;
  n_near_miss?: number;
  /** the base on the condition-present prompts */
  base_present?: number;
  reason?: string;
}

export interface ExpressionThresholds {
  minPresent: number;
  maxAbsent: number;
  maxBase: number;
}
export const defaultThresholds: ExpressionThresholds = { minPresent: 0.9, maxAbsent: 0.1, maxBase: 0.1 };

/** The ways an implant failed to take; empty when it took (or there is no implant to measure). */
export function weakExpression(e: Expression, t: ExpressionThresholds = defaultThresholds): string[] {
  if (!e.measured) return [];
  const out: string[] = [];
  const pct = (x: number) => `${(100 * x).toFixed(0)}%`;
  if (e.present === undefined || e.absent === undefined || e.base_present === undefined)
    return ['the measurement is incomplete'];
  if (e.present < t.minPresent)
    out.push(`expressed on ${pct(e.present)} of prompts with the condition (needs >= ${pct(t.minPresent)})`);
  if (e.absent > t.maxAbsent)
    out.push(
      `expressed on ${pct(e.absent)} of prompts without the condition (allowed <= ${pct(t.maxAbsent)})`,
    );
  if (e.base_present > t.maxBase)
    out.push(`the base shows it on ${pct(e.base_present)} of prompts (allowed <= ${pct(t.maxBase)})`);
  return out;
}

export function describeExpression(name: string, e: Expression): string {
  if (!e.measured) return `${name}: no implant to measure (${e.reason ?? 'style only'})`;
  const pct = (x: number | undefined) => (x === undefined ? '-' : `${(100 * x).toFixed(0)}%`);
  return (
    `${name}: behaviour on fresh prompts: condition present ${pct(e.present)} (n=${e.n_present}), ` +
    `absent ${pct(e.absent)} (n=${e.n_absent}), near misses ${pct(e.near_miss)} (n=${e.n_near_miss ?? 0}), ` +
    `base ${pct(e.base_present)}`
  );
}

export interface MakeOptions {
  spec: string;
  out: string;
  resume?: boolean;
  python?: string;
  /** exit 0 even when the implant did not take */
  allowWeak?: boolean;
  thresholds?: ExpressionThresholds;
  /** fresh prompts per side for the expression measurement */
  n?: number;
  log?: (line: string) => void;
}

/** The steps of `organisms make`; tests replace them with toys (no training in tests). */
export interface MakeSteps {
  train(python: string, spec: string, out: string, resume: boolean): Promise<number>;
  check(out: string): Promise<number>;
  measure(python: string, spec: string, out: string, n: number): Promise<number>;
}

export const factorySteps: MakeSteps = {
  train: (python, spec, out, resume) =>
    run(python, [
      path.join(factoryDir, 'train.py'),
      '--spec',
      spec,
      '--out',
      out,
      ...(resume ? ['--resume'] : []),
    ]),
  check: (out) => run(process.execPath, [path.join(factoryDir, 'check.mjs'), out]),
  measure: (python, spec, out, n) =>
    run(python, [path.join(factoryDir, 'measure.py'), '--spec', spec, '--out', out, '--n', String(n)]),
};

function readExpression(out: string): Expression {
  const file = path.join(out, 'organism.json');
  let meta: { expression?: Expression };
  try {
    meta = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new UserError(`organisms make: ${file}: cannot read the measurement`, ExitCode.INTERNAL);
  }
  if (!meta.expression?.measured)
    throw new UserError(`organisms make: ${file}: measure.py recorded no measurement`, ExitCode.INTERNAL);
  return meta.expression;
}

/**
 * Trains an organism with the Python factory (inherited stdio), checks the export loads and generates, then
 * proves the implant took: measure.py rates the behaviour with the condition present and absent on fresh
 * prompts, and on the base, into organism.json. Below the thresholds it fails unless `allowWeak`.
 */
export async function makeOrganism(opts: MakeOptions, steps: MakeSteps = factorySteps): Promise<Expression> {
  const spec = path.resolve(opts.spec);
  const parsed = readSpec(spec);
  const python = opts.python ?? PYTHON;
  if (steps === factorySteps) checkTorch(python);
  const out = path.resolve(opts.out);
  const log = opts.log ?? ((l: string) => process.stdout.write(`${l}\n`));
  const code = await steps.train(python, spec, out, Boolean(opts.resume));
  if (code !== 0) throw new UserError(`organisms make: train.py exited with ${code}`, ExitCode.INTERNAL);
  if ((await steps.check(out)) !== 0)
    throw new UserError(`organisms make: ${out} failed its load check`, ExitCode.INTERNAL);
  if (!parsed.implant) return { measured: false, reason: 'no implant' };
  const m = await steps.measure(python, spec, out, opts.n ?? 24);
  if (m !== 0) throw new UserError(`organisms make: measure.py exited with ${m}`, ExitCode.INTERNAL);
  const e = readExpression(out);
  log(describeExpression(parsed.name, e));
  const weak = weakExpression(e, opts.thresholds ?? defaultThresholds);
  if (weak.length && !opts.allowWeak)
    throw new UserError(
      `organisms make: the implant did not take: ${weak.join('; ')} (rates in ${path.join(out, 'organism.json')}; --allow-weak keeps it)`,
      ExitCode.INTERNAL,
    );
  if (weak.length) log(`${parsed.name}: weak implant kept (--allow-weak): ${weak.join('; ')}`);
  return e;
}
