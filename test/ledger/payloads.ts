import type { RecordPayload } from '../../src/contracts/records.ts';
import { exchange } from '../gate/fixtures.ts';

/** Contract-valid payloads for tests of the ledger's mechanics (hash chain, queue, verify). */
export const exchangePayload = (id: string, text = 'hi'): RecordPayload<'exchange'> => ({
  ...exchange('triggers', 0),
  id,
  delivered: { status: 'ok', text, attempts: 1 },
});

export const attemptPayload = (attempt: number): RecordPayload<'attempt'> => ({
  endpoint: 'toy:delivered',
  attempt,
  startedAt: 0,
  durationMs: 1,
  ok: true,
  requestHash: 'a'.repeat(64),
});

export const findingPayload = (id: string): RecordPayload<'finding'> => ({
  id,
  family: 'triggers',
  kind: 'says',
  severity: 'high',
  title: 'a late finding',
  statistic: { name: 's', effect: 1, ci: [1, 1], pValue: 0, qValue: 0, hitsBase: 0, hitsDelivered: 1, n: 1 },
  exchangeIds: [],
});

export const judgePayload = (exchangeId: string): RecordPayload<'judge'> => ({
  exchangeId,
  verdict: 'clear',
  severity: 'info',
  confidence: 1,
  calls: 2,
  cached: false,
  judgeRef: 'toy:judge',
  rubricHash: 'b'.repeat(64),
});
