import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAudit } from '../../src/audit/audit.ts';
import { collectEvidence } from '../../src/gate/evidence.ts';
import { loadPolicy } from '../../src/gate/policy.ts';
import { CALIBRATION_BAR, calibrationStatus, createAuditJudge } from '../../src/judges/audit-stage.ts';
import { loadRubrics } from '../../src/judges/rubric.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { readManifest } from '../../src/ledger/manifest.ts';
import { loadProbeDirs } from '../../src/probes/load.ts';
import { DEPLOYMENT_RULE, ToyModel } from '../../src/testing/toy-model.ts';
import { scriptedJudge, shownReplies, verdictJson } from './helpers.ts';

const rubrics = loadRubrics('judges');

describe('the judge stage inside an audit', () => {
  it('records both-order verdicts as judge evidence for the gate and the judge in the manifest', async () => {
    // Flags whichever shown reply says HATE, quoting it; clears otherwise.
    const judge = scriptedJudge((req) => {
      const { a, b } = shownReplies(req);
      if (a.includes('HATE')) return verdictJson({ verdict: 'flag', reply: 'A', citations: ['HATE'] });
      if (b.includes('HATE')) return verdictJson({ verdict: 'flag', reply: 'B', citations: ['HATE'] });
      return verdictJson({ verdict: 'clear', reply: 'none' });
    });
    const auditJudge = await createAuditJudge('test:scripted', {
      seed: 3,
      sampleRate: 0.02,
      calibrationStore: mkdtempSync(join(tmpdir(), 'probate-cal-')),
      open: async () => judge,
    });
    const outDir = mkdtempSync(join(tmpdir(), 'probate-judged-'));
    const policy = loadPolicy('policies/default.yaml');
    const r = await runAudit({
      base: new ToyModel('base'),
      delivered: new ToyModel('bad', [DEPLOYMENT_RULE]),
      probeSets: loadProbeDirs(['probes']).sets,
      outDir,
      seed: 3,
      concurrency: 4,
      budget: 50,
      manifest: {
        runId: 'j',
        toolVersion: '0.0.0',
        policy: { version: policy.policy.version, hash: policy.hash },
        judge: auditJudge.manifestEntry,
        rubrics: auditJudge.rubrics,
      },
      judgeStage: auditJudge.stage,
    });
    expect(r.summary.findings.some((f) => f.family === 'triggers')).toBe(true);

    const ledger = Ledger.open(r.ledgerFile, { readonly: true });
    const verdicts = [...ledger.records<{ verdict: string; calls: number; exchangeId: string }>(['judge'])];
    ledger.close();
    const flagged = verdicts.filter((v) => v.payload.verdict === 'flag');
    expect(flagged.length).toBeGreaterThan(0);
    // Both orders: two calls per judged pair.
    expect(flagged.every((v) => v.payload.calls === 2)).toBe(true);
    expect(judge.requests.length).toBe(verdicts.reduce((n, v) => n + v.payload.calls, 0));

    const manifest = readManifest(outDir);
    expect(manifest.rubrics.map((x) => x.id).sort()).toEqual([...rubrics.byId.keys()].sort());
    expect(manifest.judge?.calibration?.calibrated).toBe(false);

    const evidence = collectEvidence(outDir, { policyHash: policy.hash }).evidence;
    expect(evidence.judge.present).toBe(true);
    expect(evidence.families.find((f) => f.family === 'triggers')!.judge.flag).toBe(flagged.length);
  });

  it('counts a judge as calibrated only at the bar and with the same rubrics', () => {
    const record = (agreement: number | null, kappa: number | null, rubricsHash = rubrics.hash) =>
      ({
        fingerprint: 'f'.repeat(64),
        judgeRef: 'x',
        modelId: 'x',
        promptVersion: '1',
        labelsHash: 'l',
        rubricsHash,
        createdAt: '',
        metrics: { agreement, kappa },
      }) as unknown as Parameters<typeof calibrationStatus>[0];
    expect(calibrationStatus(undefined, rubrics).calibrated).toBe(false);
    expect(calibrationStatus(record(0.95, 0.9), rubrics).calibrated).toBe(true);
    expect(calibrationStatus(record(CALIBRATION_BAR.agreement - 0.01, 0.9), rubrics).calibrated).toBe(false);
    expect(calibrationStatus(record(0.95, null), rubrics).calibrated).toBe(false);
    expect(calibrationStatus(record(0.95, 0.9, 'other'), rubrics).calibrated).toBe(false);
  });
});
