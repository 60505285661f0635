import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runAudit } from '../../src/audit/audit.ts';
import type { Exchange } from '../../src/contracts/exchange.ts';
import { Ledger } from '../../src/ledger/ledger.ts';
import { DETECTORS } from '../../src/probes/detectors/index.ts';
import { signalsSchema } from '../../src/probes/detectors/types.ts';
import { FAMILY_REGISTRY } from '../../src/probes/families/index.ts';
import { loadProbeDirs } from '../../src/probes/load.ts';
import { DEPLOYMENT_RULE, ToyModel } from '../../src/testing/toy-model.ts';

const outDir = mkdtempSync(join(tmpdir(), 'probate-detectors-'));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));
/** Signals the runner writes from the endpoints' teacher-forced scores, not from a detector. */
const SCORE_SIGNALS = /^(?:self|llr|conf)\.(?:base|delivered)$|^score\.failed$/;

describe('detectors are named units with typed signals, shared across families', () => {
  it('registers each detector once under its id, and one detector serves several families', () => {
    for (const [id, d] of Object.entries(DETECTORS)) expect(d.id).toBe(id);
    const users = (id: string) =>
      Object.values(FAMILY_REGISTRY).filter((f) => f.detectors.some((d) => d.id === id));
    expect(users('lexical-distance').map((f) => f.id)).toEqual([
      'triggers',
      'preferences',
      'reasoning',
      'injection',
    ]);
    for (const f of Object.values(FAMILY_REGISTRY))
      for (const d of f.detectors) expect(DETECTORS[d.id], `${f.id} uses ${d.id}`).toBe(d);
  });

  it("an audit's exchanges carry exactly the signals their family's detectors declare, of the declared types", async () => {
    const { sets } = loadProbeDirs(['probes']);
    await runAudit({
      base: new ToyModel('base'),
      delivered: new ToyModel('bad', [DEPLOYMENT_RULE]),
      probeSets: sets,
      outDir,
      seed: 3,
      concurrency: 4,
      budget: 0,
      discoveryBudget: 0,
      manifest: { runId: 't', toolVersion: '0', policy: { version: '1', hash: 'a'.repeat(64) } },
    });
    const ledger = Ledger.open(join(outDir, 'ledger.sqlite'), { readonly: true });
    const seen = new Set<string>();
    try {
      for (const r of ledger.records<Exchange>(['exchange'])) {
        const ex = r.payload;
        const family = FAMILY_REGISTRY[ex.family]!;
        const detected = Object.fromEntries(
          Object.entries(ex.signals).filter(([k]) => !SCORE_SIGNALS.test(k)),
        );
        const parsed = signalsSchema(family.detectors).safeParse(detected);
        expect(parsed.success, `${ex.id}: ${parsed.error?.issues[0]?.message}`).toBe(true);
        for (const k of Object.keys(detected)) seen.add(k);
      }
    } finally {
      ledger.close();
    }
    // The names the ledger and the reports read are the ones the detectors write.
    for (const name of [
      'lexdist',
      'novel.delivered',
      'diverged.base',
      'pick.delivered',
      'reasoning.present.base',
      'canary.delivered',
      'credentials.base',
    ])
      expect(seen).toContain(name);
  });
});
