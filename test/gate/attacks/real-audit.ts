import { type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import { createHash, generateKeyPairSync, type Hash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { listSubjectFiles } from '../../../src/util/subject.ts';

/**
 * Real audits of shipped organisms for the gate's adversarial tests: the product's own CLI (`probate audit`)
 * on the embedded engine, against a private copy of the organism (attacks swap its files). Organisms are
 * chosen by label/family from fixtures/organisms/zoo.json and kept only if the audit gives the verdict the
 * attack needs, never by a trigger string. Each test file runs the audits it needs once (beforeAll) and
 * hands every attack a fresh copy of the undecided run.
 */
export const ZOO = resolve('fixtures/organisms');
export const OFFLINE_POLICY = resolve('policies/offline.yaml');
export const BIN = resolve('bin/probate.js');
export const ready = existsSync(join(ZOO, 'base/onnx/model.onnx')) && existsSync(join(ZOO, 'zoo.json'));

export interface ZooEntry {
  name: string;
  label: string;
  family: string | null;
}

export function zooEntries(pick: (e: ZooEntry) => boolean): string[] {
  const zoo = JSON.parse(readFileSync(join(ZOO, 'zoo.json'), 'utf8')) as ZooEntry[];
  return zoo.filter((e) => pick(e) && existsSync(join(ZOO, e.name, 'onnx/model.onnx'))).map((e) => e.name);
}

export function cli(args: string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, CI: '1', ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Runs several CLI invocations at the same time (separate processes), resolving to their exit codes. */
export function cliConcurrently(runs: string[][]): Promise<Array<{ code: number | null; out: string }>> {
  return Promise.all(
    runs.map(
      (args) =>
        new Promise<{ code: number | null; out: string }>((ok) => {
          const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, CI: '1' } });
          let out = '';
          p.stdout.on('data', (d) => {
            out += d;
          });
          p.stderr.on('data', (d) => {
            out += d;
          });
          p.on('close', (code) => ok({ code, out }));
        }),
    ),
  );
}

export interface AuditRun {
  organism: string;
  /** The private copy of the organism the audit measured (the manifest's delivered ref). */
  modelDir: string;
  runDir: string;
  exitCode: number | null;
  verdict: string;
  stdout: string;
  stderr: string;
}

/** `probate audit` of `modelDir` against the shipped base, written to `runDir`. */
export function audit(
  modelDir: string,
  runDir: string,
  opts: { policy?: string; gate?: string; probes?: string[]; budget?: number } = {},
): AuditRun {
  const args = [
    'audit',
    '--base',
    `local:${join(ZOO, 'base')}`,
    '--delivered',
    `local:${modelDir}`,
    '--policy',
    opts.policy ?? OFFLINE_POLICY,
    '--out',
    runDir,
    '--threads',
    '1',
    '--json',
  ];
  for (const p of opts.probes ?? []) args.push('--probes', p);
  if (opts.budget !== undefined) args.push('--budget', String(opts.budget));
  if (opts.gate) args.push('--gate', opts.gate);
  const r = cli(args);
  let verdict = 'UNKNOWN';
  try {
    verdict = (JSON.parse(r.stdout) as { state: string }).state;
  } catch {
    // not JSON: the audit failed; the caller's assertion shows stderr
  }
  return {
    organism: '',
    modelDir,
    runDir,
    exitCode: r.status,
    verdict,
    stdout: r.stdout,
    stderr: r.stderr,
  };
}

/**
 * Where finished template audits are kept between test files and runs (a real audit costs minutes of CPU).
 * An entry is keyed by everything that shapes the evidence: the organism's files, the policy file, the probe
 * sets and the code that produces evidence; any change makes a fresh audit.
 */
const CACHE = join(tmpdir(), 'probate-gate-attack-audits');

function hashTree(dir: string, out: Hash): void {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) hashTree(p, out);
    else if (e.isFile()) out.update(`${p}\0`).update(readFileSync(p));
  }
}

export function auditKey(organism: string, policy: string): string {
  const h = createHash('sha256');
  h.update(`${organism}\0`);
  for (const rel of listSubjectFiles(join(ZOO, organism)))
    h.update(`${rel}\0`).update(readFileSync(join(ZOO, organism, rel)));
  h.update(readFileSync(policy));
  for (const d of ['probes', 'src/audit', 'src/probes', 'src/endpoints', 'src/judges', 'src/contracts'])
    hashTree(resolve(d), h);
  return h.digest('hex').slice(0, 24);
}

function cached(key: string): { root: string; verdict: string } | undefined {
  try {
    const e = JSON.parse(readFileSync(join(CACHE, `${key}.json`), 'utf8')) as {
      root: string;
      verdict: string;
    };
    return existsSync(e.root) ? e : undefined;
  } catch {
    return undefined;
  }
}

/** Records a finished template audit (model copy under ROOT/models, run under ROOT/runs) in the cache. */
export function remember(key: string, root: string, verdict: string): void {
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(join(CACHE, `${key}.json`), JSON.stringify({ root, verdict }));
}

function templateOf(root: string, name: string, verdict: string): AuditRun {
  return {
    organism: name,
    modelDir: join(root, 'models', name),
    runDir: join(root, 'runs', `${name}-template`),
    exitCode: null,
    verdict,
    stdout: '',
    stderr: '',
  };
}

/**
 * Copies organisms from the zoo in order and audits each until one gives `want` (the audit's own
 * evaluation under the offline policy); returns that audit (its run is left undecided by any gate).
 * A template audit already made for the same organism files, policy, probes and evidence code is reused.
 */
export function auditUntil(candidates: string[], want: string): AuditRun {
  const tried: string[] = [];
  for (const name of candidates) {
    const key = auditKey(name, OFFLINE_POLICY);
    const hit = cached(key);
    if (hit) {
      if (hit.verdict === want) return templateOf(hit.root, name, hit.verdict);
      tried.push(`${name}: ${hit.verdict} (cached)`);
      continue;
    }
    const root = mkdtempSync(join(tmpdir(), `probate-attack-audit-${name}-`));
    const modelDir = join(root, 'models', name);
    mkdirSync(join(root, 'models'), { recursive: true });
    cpSync(join(ZOO, name), modelDir, { recursive: true });
    const r = audit(modelDir, join(root, 'runs', `${name}-template`));
    tried.push(`${name}: ${r.verdict} (exit ${r.exitCode}) ${r.stderr.split('\n').slice(-3).join(' ')}`);
    if (r.verdict !== 'UNKNOWN') remember(key, root, r.verdict);
    if (r.verdict === want) return { ...r, organism: name };
  }
  throw new Error(`no organism audited as ${want}: ${tried.join('; ')}`);
}

/** A fresh copy of an undecided run, for one attack. */
export function copyRun(template: string, dest: string): string {
  cpSync(template, dest, { recursive: true });
  return dest;
}

export function scratch(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `probate-attack-${prefix}-`));
}

/** A principal's Ed25519 key pair on disk (private key 0600). */
export function principalKeys(dir: string, name: string): { pub: string; key: string } {
  const pair = generateKeyPairSync('ed25519');
  const pub = join(dir, `${name}.pub`);
  const key = join(dir, `${name}.key`);
  writeFileSync(pub, pair.publicKey.export({ type: 'spki', format: 'pem' }));
  writeFileSync(key, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return { pub, key };
}
