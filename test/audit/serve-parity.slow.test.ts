import { type ChildProcess, execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe } from '../helpers/serve.ts';

/**
 * The same audit, two transports: `probate audit` on the embedded engine, and `probate audit` against a
 * `probate serve` holding the same two organisms (vLLM wire protocol over loopback). Greedy decoding and
 * teacher-forced scores must agree, so the findings, the trigger search and the verdict must be identical.
 */
const ZOO = 'fixtures/organisms';
const DELIVERED = 'trig-token';

interface AuditJson {
  exchanges: number;
  failed: number;
  overall: number;
  state: string;
  exitCode: number;
  families: { family: string; score: number; findings: number }[];
  findings: { family: string; kind: string; severity: string; statistic: { name: string } }[];
  triggers: { minimal?: unknown; condition?: string; hitRateWith?: number }[];
}

function audit(base: string, delivered: string): Promise<AuditJson> {
  const out = mkdtempSync(join(tmpdir(), 'probate-parity-'));
  const args = ['bin/probate.js', 'audit', '--base', base, '--delivered', delivered, '--json', '--out', out];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...args, '--policy', 'policies/offline.yaml', '--threads', '1'],
      { maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        // Exit 20 (BLOCKED) is the expected verdict here, not a failure of the command.
        if (err && typeof err.code !== 'number') return reject(err);
        try {
          resolve(JSON.parse(stdout) as AuditJson);
        } catch {
          reject(new Error(`audit printed no JSON (exit ${err?.code ?? 0}): ${stderr.slice(-400)}`));
        }
      },
    );
  });
}

const shape = (r: AuditJson) => ({
  exchanges: r.exchanges,
  failed: r.failed,
  state: r.state,
  exitCode: r.exitCode,
  families: r.families.map((f) => ({ family: f.family, findings: f.findings })),
  findings: r.findings.map((f) => `${f.severity} ${f.family}/${f.kind} ${f.statistic.name}`).sort(),
  triggers: r.triggers.map((t) => ({
    minimal: t.minimal,
    condition: t.condition,
    hitRateWith: t.hitRateWith,
  })),
});

describe('audit over probate serve equals the embedded audit', () => {
  let child: ChildProcess;
  let url: string;

  beforeAll(async () => {
    // The slow suite needs the shipped organisms: a missing one fails here, it is not skipped.
    for (const name of ['base', DELIVERED])
      if (!existsSync(join(ZOO, name, 'onnx/model.onnx'))) throw new Error(`${ZOO}/${name} is not built`);
    ({ child, url } = await startServe([
      `local:${ZOO}/base=base`,
      `local:${ZOO}/${DELIVERED}=delivered`,
      '--threads',
      '1',
    ]));
  });

  afterAll(() => {
    child?.kill('SIGTERM');
  });

  it('gives the same findings, trigger and verdict over HTTP as in-process', async () => {
    const local = await audit(`local:${ZOO}/base`, `local:${ZOO}/${DELIVERED}`);
    const served = await audit(`vllm:${url}/v1#base`, `vllm:${url}/v1#delivered`);
    expect(local.failed).toBe(0);
    expect(local.findings.some((f) => f.family === 'triggers')).toBe(true);
    expect(shape(served)).toEqual(shape(local));
    // Scores come from teacher-forced logprobs computed by the same engine on both paths.
    expect(served.overall).toBeCloseTo(local.overall, 3);
    for (const [i, f] of local.families.entries()) expect(served.families[i]!.score).toBeCloseTo(f.score, 3);
  }, 1_200_000); // two full audits with discovery: past the slow suite's 300 s default on a loaded machine
});
