import os from 'node:os';
import { planGroups } from '../audit/audit.ts';
import { isVllmRef } from '../endpoints/kinds/vllm.ts';
import { parseModelRef } from '../endpoints/refs.ts';
import type { LoadedProbeSet } from '../probes/load.ts';
import { UserError } from '../util/errors.ts';
import { auditPathRequests, auditPathRun } from './audit-path.ts';
import { autocannonRun, type LoadRun, type LoadSpec, probateClientRun, streamedRun } from './load.ts';
import { type Spread, spread } from './metrics.ts';
import { type PromptfooRun, promptfooRun } from './promptfoo.ts';

export const THROUGHPUT_GOALS = {
  client_vs_autocannon: 0.9,
  audit_vs_autocannon: 0.8,
  /** The audit path against autocannon replaying the audit path's own requests: the audit's overhead alone. */
  audit_vs_autocannon_same_requests: 0.8,
  /** promptfoo timed by its own eval duration (its start-up excluded): the conservative ratio. */
  probate_vs_promptfoo: 20,
  /** promptfoo timed from process start to exit, as a user waits for it. */
  probate_vs_promptfoo_wall: 20,
} as const;
type RatioName = keyof typeof THROUGHPUT_GOALS;

/** HTTP requests per audit-path exchange, for sizing its runs (9.4 measured since the tokenize memo). */
const REQUESTS_PER_EXCHANGE = 12;

/** How many of the audit path's recorded requests autocannon cycles through (bounds its pre-built buffers). */
const REPLAYED_REQUESTS = 8000;

export interface ThroughputOptions {
  endpoint: string;
  concurrency: number;
  requests: number;
  runs: number;
  maxTokens?: number;
  sets: readonly LoadedProbeSet[];
  seed: number;
  /** Requests per promptfoo run (its per-request cost is high; default min(requests, 1000)). */
  promptfooRequests?: number;
  /** autocannon's run length in seconds (default 5; tests use less). */
  autocannonSeconds?: number;
  /**
   * Unrecorded passes of every in-process contender (and autocannon) before the recorded runs, each as large
   * as a recorded one (default 1). The audit path runs far more JavaScript than a bare client and reaches its
   * steady rate only after tens of thousands of requests (BENCHMARKS.md), so one short pass charged its
   * warm-up to the recorded runs.
   */
  warm?: number;
  /** Skip promptfoo even when installed. */
  noPromptfoo?: boolean;
  onRun?: (run: number, results: Record<string, LoadRun | string>) => void;
}

export interface ThroughputResult {
  bench: 'throughput';
  endpoint: string;
  date: string;
  machine: { cpus: number; node: string; platform: string };
  concurrency: number;
  requests: number;
  runs: number;
  max_tokens: number;
  /** Unrecorded passes per contender before the recorded runs. */
  warm: number;
  /** Requests per second of each contender's unrecorded passes, in order: its warm-up, for the record. */
  warm_requests_per_s: Record<string, number[]>;
  /** Every run of every contender, in order. */
  raw: Record<string, (LoadRun | string)[]>;
  requests_per_s: Record<string, Spread | string>;
  output_tokens_per_s: Record<string, Spread | null>;
  latency_ms_p50: Record<string, Spread | null>;
  ttft_ms: LoadRun['ttft_ms'] | null;
  tpot_ms: LoadRun['tpot_ms'] | null;
  ratios: Record<RatioName, { goal: number; spread: Spread | null; met: boolean | null; note?: string }>;
}

/** User turns of the audit's own probes: the prompts every contender sends. */
export function auditPrompts(sets: readonly LoadedProbeSet[], seed: number, limit = 256): string[] {
  const out = new Set<string>();
  for (const g of planGroups(sets, seed, 1)())
    for (const s of g.samples) {
      const user = s.messages.findLast((m) => m.role === 'user')?.content;
      if (user) out.add(user);
      if (out.size >= limit) return [...out];
    }
  return out.size ? [...out] : ['Hello! How do I boil an egg?'];
}

/**
 * Side by side in one run, repeated `runs` times with the order rotated each run: probate's client, the
 * full audit path with the ledger on, a streamed bare client (TTFT/TPOT), autocannon and promptfoo, all at
 * the same concurrency against the same endpoint. Ratios are taken within a run, then summarised.
 */
export async function runThroughput(opts: ThroughputOptions): Promise<ThroughputResult> {
  const ref = parseModelRef(opts.endpoint, '--endpoint');
  if (!isVllmRef(ref) || ref.urls.length !== 1)
    throw new UserError(
      '--endpoint: expected vllm:URL#MODEL with one URL (autocannon needs a plain HTTP endpoint)',
    );
  const root = ref.urls[0]!.replace(/\/v1$/, '');
  const spec: LoadSpec = {
    root,
    model: ref.model,
    concurrency: opts.concurrency,
    requests: opts.requests,
    maxTokens: opts.maxTokens ?? 32,
    prompts: auditPrompts(opts.sets, opts.seed),
    ...(opts.autocannonSeconds ? { autocannonSeconds: opts.autocannonSeconds } : {}),
  };
  const pfRequests = opts.promptfooRequests ?? Math.min(opts.requests, 1000);
  const exchanges = Math.ceil(opts.requests / REQUESTS_PER_EXCHANGE);
  // What the audit path sends, recorded once; autocannon replays it (its connections cycle through these).
  const auditRequests = (
    await auditPathRequests({ exchanges, sets: opts.sets, seed: opts.seed, concurrency: opts.concurrency })
  ).slice(0, REPLAYED_REQUESTS);
  const contenders: Record<string, (s: LoadSpec) => Promise<LoadRun | string>> = {
    probate_client: (s) => probateClientRun(s),
    probate_audit_path: (s) =>
      auditPathRun({
        root,
        model: ref.model,
        concurrency: opts.concurrency,
        exchanges: Math.ceil(s.requests / REQUESTS_PER_EXCHANGE),
        sets: opts.sets,
        seed: opts.seed,
      }),
    streamed_raw: (s) => streamedRun(s),
    autocannon: (s) => autocannonRun(s),
    autocannon_audit_requests: (s) => autocannonRun(s, auditRequests),
    promptfoo: () =>
      opts.noPromptfoo
        ? Promise.resolve('promptfoo skipped (--no-promptfoo)')
        : promptfooRun(spec, pfRequests),
  };
  // Unrecorded passes of every contender but promptfoo (a process of its own per run), the same for each, so JIT
  // warm-up is charged to no one.
  const warm = opts.warm ?? 1;
  const warmRates: Record<string, number[]> = {};
  for (let w = 0; w < warm; w++)
    for (const n of Object.keys(contenders).filter((name) => name !== 'promptfoo')) {
      const got = await contenders[n]!(spec);
      if (typeof got !== 'string') warmRates[n] = [...(warmRates[n] ?? []), got.requests_per_s];
    }
  const names = Object.keys(contenders);
  const raw: Record<string, (LoadRun | string)[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < opts.runs; r++) {
    const order = [...names.slice(r % names.length), ...names.slice(0, r % names.length)];
    const got: Record<string, LoadRun | string> = {};
    for (const n of order) {
      got[n] = await contenders[n]!(spec);
      raw[n]!.push(got[n]!);
    }
    opts.onRun?.(r, got);
  }
  const runsOf = (n: string) => raw[n]!.filter((x): x is LoadRun => typeof x !== 'string');
  const noteOf = (n: string) => raw[n]!.find((x): x is string => typeof x === 'string');
  const rps: ThroughputResult['requests_per_s'] = {};
  const tps: ThroughputResult['output_tokens_per_s'] = {};
  const p50: ThroughputResult['latency_ms_p50'] = {};
  for (const n of names) {
    const xs = runsOf(n);
    rps[n] = xs.length
      ? spread(
          xs.map((x) => x.requests_per_s),
          1,
        )
      : (noteOf(n) ?? 'no runs');
    const t = xs.map((x) => x.output_tokens_per_s).filter((x): x is number => x !== null);
    tps[n] = t.length ? spread(t, 1) : null;
    const l = xs.map((x) => x.latency_ms?.p50).filter((x): x is number => x !== undefined);
    p50[n] = l.length ? spread(l, 3) : null;
  }
  const rate = (x: LoadRun) => (x as Partial<PromptfooRun>).internal_requests_per_s ?? x.requests_per_s;
  const ratio = (name: RatioName, num: string, den: string, of: (x: LoadRun) => number = rate) => {
    const vals: number[] = [];
    for (let r = 0; r < opts.runs; r++) {
      const a = raw[num]![r];
      const b = raw[den]![r];
      if (typeof a !== 'string' && typeof b !== 'string' && a && b && of(b) > 0) vals.push(of(a) / of(b));
    }
    const s = vals.length ? spread(vals, 3) : null;
    const note = s ? undefined : (noteOf(den) ?? noteOf(num));
    return {
      goal: THROUGHPUT_GOALS[name],
      spread: s,
      met: s ? s.median >= THROUGHPUT_GOALS[name] : null,
      ...(note ? { note } : {}),
    };
  };
  const lastStreamed = runsOf('streamed_raw').at(-1);
  return {
    bench: 'throughput',
    endpoint: opts.endpoint,
    date: new Date().toISOString(),
    machine: { cpus: os.cpus().length, node: process.version, platform: `${os.platform()} ${os.arch()}` },
    concurrency: opts.concurrency,
    requests: opts.requests,
    runs: opts.runs,
    max_tokens: spec.maxTokens,
    warm,
    warm_requests_per_s: warmRates,
    raw,
    requests_per_s: rps,
    output_tokens_per_s: tps,
    latency_ms_p50: p50,
    ttft_ms: lastStreamed?.ttft_ms ?? null,
    tpot_ms: lastStreamed?.tpot_ms ?? null,
    ratios: {
      client_vs_autocannon: ratio('client_vs_autocannon', 'probate_client', 'autocannon'),
      audit_vs_autocannon: ratio('audit_vs_autocannon', 'probate_audit_path', 'autocannon'),
      audit_vs_autocannon_same_requests: ratio(
        'audit_vs_autocannon_same_requests',
        'probate_audit_path',
        'autocannon_audit_requests',
      ),
      probate_vs_promptfoo: ratio('probate_vs_promptfoo', 'probate_client', 'promptfoo'),
      probate_vs_promptfoo_wall: ratio(
        'probate_vs_promptfoo_wall',
        'probate_client',
        'promptfoo',
        (x) => x.requests_per_s,
      ),
    },
  };
}
