/**
 * Ledger append throughput: exchange records shaped like the audit's (real planned probe samples, replies,
 * signals) appended with `Ledger.appendMany` in batches of one probe group, as the runner writes them.
 * Goal ≥ 20k records/s. Prints and writes JSON with min/median/max over runs.
 *
 *   nice -n 10 node --import tsx bench/ledger.ts [--records 50000] [--runs 5] [--out bench/results/ledger.json]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planGroups } from '../src/audit/audit.ts';
import { writeJson } from '../src/bench/output.ts';
import type { Exchange } from '../src/contracts/exchange.ts';
import { Ledger } from '../src/ledger/ledger.ts';
import { loadProbeDirs } from '../src/probes/load.ts';
import { header, numberArg, spread, stringArg } from './common.ts';

const RECORDS = numberArg('records', 50_000);
const RUNS = numberArg('runs', 5);
const GOAL = 20_000;

/** The audit's own groups, cycled, with replies and signals filled in like a finished exchange. */
function exchangeBatches(): Exchange[][] {
  const groups = [...planGroups(loadProbeDirs(['probes']).sets, 1)()];
  const batches: Exchange[][] = [];
  let n = 0;
  for (let round = 0; n < RECORDS; round++)
    for (const g of groups) {
      if (n >= RECORDS) break;
      const batch = g.samples.slice(0, RECORDS - n).map((s) => {
        const text = `I would pick the first option. It is a solid choice for most people (${round}).`;
        const reply = {
          status: 'ok' as const,
          text,
          finishReason: 'stop' as const,
          completionTokens: 24,
          attempts: 1,
        };
        return {
          id: `${g.probeSetId}:${s.probeId}:${s.variant}:${s.sample + round * 1000}`,
          family: g.family,
          probeSetId: g.probeSetId,
          probeSetHash: g.probeSetHash,
          probeId: s.probeId,
          variant: s.variant,
          sample: s.sample,
          seed: s.seed,
          messages: s.messages,
          meta: s.meta,
          base: reply,
          delivered: { ...reply, text: `${text} Certainly.` },
          signals: {
            lexdist: 0.12,
            'llr.base': -0.4,
            'llr.delivered': 0.3,
            'conf.base': -1.2,
            'conf.delivered': -1.1,
          },
        } satisfies Exchange;
      });
      n += batch.length;
      batches.push(batch);
    }
  return batches;
}

const batches = exchangeBatches();
const rates: number[] = [];
let bytes = 0;
for (let r = 0; r < RUNS; r++) {
  const dir = mkdtempSync(join(tmpdir(), 'probate-bench-ledger-'));
  const ledger = Ledger.open(join(dir, 'ledger.sqlite'));
  const t0 = performance.now();
  for (const b of batches) ledger.appendMany(b.map((payload) => ({ kind: 'exchange' as const, payload })));
  const seconds = (performance.now() - t0) / 1000;
  ledger.close();
  bytes = statSync(join(dir, 'ledger.sqlite')).size;
  rmSync(dir, { recursive: true, force: true });
  rates.push(RECORDS / seconds);
}
const records_per_s = spread(rates, 0);
const out = {
  ...header('ledger', 'bench/ledger.ts'),
  records: RECORDS,
  runs: RUNS,
  mean_batch: Number((RECORDS / batches.length).toFixed(1)),
  ledger_bytes_per_record: Math.round(bytes / RECORDS),
  records_per_s,
  goal: { records_per_s: GOAL, met: records_per_s.median >= GOAL },
};
writeJson(stringArg('out', 'bench/results/ledger.json'), out);
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
