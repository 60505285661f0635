/**
 * Goodput of one audit under faults, side by side in each run: a clean single server, the same server with
 * the flaky profile (503 + Retry-After 1 in 7, a 3 s stall in 13, a body cut in 11, a stream error event in
 * 5), three healthy replicas with a batch capacity, and the same three with one killed a third of the way
 * in. Every replica is its own process. Writes bench/results/faults.json (rendered by bench/render.ts).
 *
 *   nice -n 10 node --import tsx bench/faults.ts [--runs 3] [--samples 2] [--concurrency N (default: as probate audit)]
 *     [--http-concurrency 16] [--latency-ms 40] [--server-latency-ms 0,50] [--slots 4] [--out bench/results/faults.json]
 */
import os from 'node:os';
import { type ReplicaProcess, runScenario, type ScenarioResult, startReplica } from '../src/bench/faults.ts';
import { writeJson } from '../src/bench/output.ts';
import { loadProbeDirs } from '../src/probes/load.ts';
import { type FakeVllmOptions, FLAKY_PROFILE } from '../src/testing/fake-vllm.ts';
import { header, numberArg, spread, stringArg, usageError } from './common.ts';

const runs = numberArg('runs', 3);
const samples = numberArg('samples', 2);
const concurrency = numberArg('concurrency', 0);
const httpConcurrency = numberArg('http-concurrency', 16);
const latencyMs = numberArg('latency-ms', 40);
const slots = numberArg('slots', 4);
// The clean and flaky server's own latency per generation, each a clean/flaky pair in every run. 0 answers at
// once: the harshest ratio, since a Retry-After second is then large next to the whole clean audit (and no
// client that honours Retry-After can finish a request refused k times in under k seconds). 50 ms makes the
// clean audit take about as long as on the independent server the issue measured (6.1 s).
const serverLatencies = stringArg('server-latency-ms', '0,50')
  .split(',')
  .map((x) => Number(x));
if (serverLatencies.some((x) => !Number.isFinite(x) || x < 0))
  usageError('--server-latency-ms: expected comma-separated milliseconds ≥ 0');
const suffix = (ms: number) => (ms ? `@${ms}ms` : '');
const out = stringArg('out', 'bench/results/faults.json');
const only = stringArg('only', '');
const script = new URL('./faults-server.ts', import.meta.url).pathname;
const sets = loadProbeDirs(['probes']).sets;

async function withReplicas(
  opts: FakeVllmOptions[],
  body: (urls: string[], procs: ReplicaProcess[]) => Promise<ScenarioResult>,
): Promise<ScenarioResult> {
  const procs = await Promise.all(opts.map((o) => startReplica(script, o)));
  try {
    return await body(
      procs.map((p) => p.url),
      procs,
    );
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}

const common = { sets, samples, concurrency, httpConcurrency, stream: true };
const capacity: FakeVllmOptions = { latencyMs, slots, reasoningField: 'reasoning' };
const scenarios: Record<string, (run: number) => Promise<ScenarioResult>> = {
  ...Object.fromEntries(
    serverLatencies.flatMap((ms) => [
      [
        `clean${suffix(ms)}`,
        () =>
          withReplicas([{ latencyMs: ms }], (urls) =>
            runScenario({ ...common, scenario: `clean${suffix(ms)}`, urls }),
          ),
      ],
      [
        `flaky${suffix(ms)}`,
        (run: number) =>
          withReplicas([{ latencyMs: ms, profile: { ...FLAKY_PROFILE, seed: 16 + run } }], (urls) =>
            runScenario({ ...common, scenario: `flaky${suffix(ms)}`, urls }),
          ),
      ],
    ]),
  ),
  healthy3: () =>
    withReplicas([capacity, capacity, capacity], (urls) =>
      runScenario({ ...common, scenario: 'healthy3', urls }),
    ),
  killed3: () => killedRun(plannedAnswers),
};
// The kill point needs the exchange count: a healthy run's count is the same audit's.
const names = Object.keys(scenarios).filter((n) => !only || only.split(',').includes(n));
const raw: Record<string, ScenarioResult[]> = Object.fromEntries(names.map((n) => [n, []]));
let plannedExchanges = 0;
// Answered attempts of a complete audit (the same in every scenario): the kill comes at a third of them.
let plannedAnswers = 0;
for (let run = 0; run < runs; run++) {
  const order = [...names.slice(run % names.length), ...names.slice(0, run % names.length)];
  for (const n of order) {
    const r = n === 'killed3' ? await killedRun(plannedAnswers) : await scenarios[n]!(run);
    plannedExchanges ||= r.exchanges;
    plannedAnswers ||= r.attempts.ok;
    raw[n]!.push(r);
    process.stderr.write(
      `run ${run + 1} ${n}: ${r.seconds} s, ${r.exchanges} exchanges (${r.failed} failed), ${r.exchanges_per_s}/s, attempts ok ${r.attempts.ok} failed ${r.attempts.failed} hedges ${r.attempts.hedges}, ledger ${r.ledger_verified ? 'verified' : 'NOT verified'}${r.killed_at !== undefined ? `, replica killed at ${r.killed_at}` : ''}\n`,
    );
  }
}

function killedRun(planned: number): Promise<ScenarioResult> {
  return withReplicas([capacity, capacity, capacity], async (urls, procs) => {
    let killedAt: number | undefined;
    const r = await runScenario({
      ...common,
      scenario: 'killed3',
      urls,
      onAnswered: (answered) => {
        if (killedAt === undefined && planned > 0 && answered >= planned / 3) {
          killedAt = answered;
          procs[1]!.kill();
        }
      },
    });
    return { ...r, killed_at: killedAt };
  });
}

const pairs = (a: string, b: string, f: (x: ScenarioResult, y: ScenarioResult) => number) => {
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) if (raw[a]?.[i] && raw[b]?.[i]) xs.push(f(raw[a]![i]!, raw[b]![i]!));
  return xs.length ? spread(xs, 3) : null;
};
const killedThroughput = pairs('killed3', 'healthy3', (k, h) => k.exchanges_per_s / h.exchanges_per_s);
const complete = (n: string) =>
  (raw[n] ?? []).every((r) => r.failed === 0 && r.ledger_verified && r.exchanges === plannedExchanges);
const result = {
  ...header('faults', 'bench/faults.ts'),
  load: { uptime: os.loadavg().map((x) => Number(x.toFixed(2))) },
  settings: {
    runs,
    samples,
    concurrency,
    httpConcurrency,
    latencyMs,
    serverLatencies,
    slots,
    stream: true,
    profile: FLAKY_PROFILE,
  },
  raw,
  seconds: Object.fromEntries(
    names.map((n) => [
      n,
      spread(
        raw[n]!.map((r) => r.seconds),
        2,
      ),
    ]),
  ),
  exchanges_per_s: Object.fromEntries(
    names.map((n) => [
      n,
      spread(
        raw[n]!.map((r) => r.exchanges_per_s),
        1,
      ),
    ]),
  ),
  complete: Object.fromEntries(names.map((n) => [n, complete(n)])),
  ratios: {
    ...Object.fromEntries(
      serverLatencies.map((ms) => {
        const ratio = pairs(`flaky${suffix(ms)}`, `clean${suffix(ms)}`, (f, c) => f.seconds / c.seconds);
        return [
          `flaky_vs_clean_wall${suffix(ms)}`,
          {
            goal: '≤ 3×',
            spread: ratio,
            met: ratio ? ratio.median <= 3 && complete(`flaky${suffix(ms)}`) : null,
          },
        ];
      }),
    ),
    killed_vs_healthy_throughput: {
      goal: '≥ 0.6×',
      spread: killedThroughput,
      met: killedThroughput ? killedThroughput.median >= 0.6 && complete('killed3') : null,
    },
  },
};
writeJson(out, result);
process.stdout.write(`${JSON.stringify(result.ratios, null, 2)}\n`);
