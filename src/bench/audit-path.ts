import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planGroups, queueExchanges } from '../audit/audit.ts';
import { runDifferential } from '../audit/runner.ts';
import type { Exchange } from '../contracts/exchange.ts';
import { openEndpoint } from '../endpoints/open.ts';
import type { AttemptRecord, ModelEndpoint } from '../endpoints/types.ts';
import { Ledger } from '../ledger/ledger.ts';
import type { ProbeGroup } from '../probes/families/types.ts';
import type { LoadedProbeSet } from '../probes/load.ts';
import { startFakeVllm } from '../testing/fake-vllm.ts';
import { type LoadRun, percentiles, type RecordedRequest } from './load.ts';

/**
 * Probe groups for `exchanges` exchanges: the probe sets' own plan, re-drawn with the next seed until
 * there are enough (every exchange id stays unique because the seed is part of the group's draw).
 */
export function* groupsFor(
  sets: readonly LoadedProbeSet[],
  exchanges: number,
  seed: number,
): Generator<ProbeGroup> {
  let left = exchanges;
  for (let s = seed; left > 0; s++) {
    let any = false;
    for (const g of planGroups(sets, s)()) {
      if (left <= 0) return;
      any = true;
      const samples = g.samples.slice(0, left).map((x) => ({ ...x, sample: x.sample + (s - seed) * 1000 }));
      left -= samples.length;
      yield { ...g, samples };
    }
    if (!any) return;
  }
}

/**
 * The full audit request path against one endpoint (used as both base and delivered): the differential
 * runner sends every sample to both, scores each reply under both (tokenize + prompt_logprobs), runs the
 * family detectors, and queues each finished group's exchanges for the evidence ledger's group commit, with
 * the HTTP attempts, as `probate audit` records them (`queueExchanges`). Requests are every HTTP attempt the
 * endpoints made; at most `concurrency` are in flight (each endpoint's limiter gets half).
 */
export async function auditPathRun(opts: {
  root: string;
  model: string;
  concurrency: number;
  exchanges: number;
  sets: readonly LoadedProbeSet[];
  seed: number;
}): Promise<LoadRun & { exchanges: number; ledger_records: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'probate-bench-audit-'));
  const ledger = Ledger.open(join(dir, 'ledger.sqlite'));
  const durations: number[] = [];
  let requests = 0;
  let errors = 0;
  let recording = false;
  // As in `probate audit`: every HTTP attempt is evidence, queued for the ledger's next transaction.
  const observer = (r: AttemptRecord) => {
    if (recording) ledger.queueAttempt(r);
    requests++;
    if (!r.ok) errors++;
    durations.push(r.durationMs);
  };
  const ref = `vllm:${opts.root}#${opts.model}`;
  const per = Math.max(1, Math.floor(opts.concurrency / 2));
  const open = () => openEndpoint(ref, { concurrency: per, fingerprint: false, observer });
  const endpoints: ModelEndpoint[] = [];
  try {
    const base = await open();
    endpoints.push(base);
    const delivered = await open();
    endpoints.push(delivered);
    for (const ep of endpoints)
      await ep.chat({
        messages: [{ role: 'user', content: 'warm up' }],
        params: { maxTokens: 4, temperature: 0 },
      });
    requests = 0;
    errors = 0;
    durations.length = 0;
    let tokens = 0;
    let records = 0;
    recording = true;
    const t0 = performance.now();
    const run = await runDifferential({
      base,
      delivered,
      groups: groupsFor(opts.sets, opts.exchanges, opts.seed),
      concurrency: opts.concurrency,
      write: (exs: Exchange[]) => {
        for (const e of exs) tokens += (e.base.completionTokens ?? 0) + (e.delivered.completionTokens ?? 0);
        queueExchanges(ledger, exs);
        records += exs.length;
      },
    });
    ledger.flush();
    const seconds = (performance.now() - t0) / 1000;
    return {
      requests,
      errors: errors + run.failed,
      seconds: Number(seconds.toFixed(4)),
      requests_per_s: Number((requests / seconds).toFixed(1)),
      output_tokens_per_s: Number((tokens / seconds).toFixed(1)),
      latency_ms: percentiles(durations),
      exchanges: run.exchanges,
      ledger_records: records,
    };
  } finally {
    await Promise.all(endpoints.map((e) => e.close()));
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The HTTP requests one audit-path run sends, in order (method, path, JSON body), recorded by an in-process
 * vLLM-shaped server of the same kind as the benchmark's: what autocannon replays to measure the same work
 * without the audit (src/bench/load.ts, `autocannonRun`). The warm-up requests are left out.
 */
export async function auditPathRequests(opts: {
  exchanges: number;
  sets: readonly LoadedProbeSet[];
  seed: number;
  concurrency: number;
}): Promise<RecordedRequest[]> {
  const fake = await startFakeVllm({ reasoningField: 'reasoning' });
  try {
    await auditPathRun({ ...opts, root: fake.url.replace(/\/v1$/, ''), model: 'delivered' });
    return fake.requests
      .filter((r) => r.method === 'POST' && !isWarmUp(r.body))
      .map((r) => ({ method: r.method, path: r.path, body: JSON.stringify(r.body) }));
  } finally {
    await fake.close();
  }
}

function isWarmUp(body: Record<string, unknown>): boolean {
  const messages = body.messages as Array<{ content?: unknown }> | undefined;
  return messages?.length === 1 && messages[0]?.content === 'warm up';
}
