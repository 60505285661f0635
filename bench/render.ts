/**
 * Fills BENCHMARKS.md from the result JSON files in bench/results/: every table between
 * `<!-- bench:NAME -->` and `<!-- /bench:NAME -->` is regenerated; the prose around it is kept. Nothing in
 * a table is typed by hand. A missing result file renders as "not run" with the command to run.
 *
 *   node --import tsx bench/render.ts [--results bench/results] [--file BENCHMARKS.md]
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Spread } from '../src/bench/metrics.ts';
import { writeAtomic } from '../src/bench/output.ts';
import { stringArg } from './common.ts';

const RESULTS = stringArg('results', 'bench/results');
const FILE = stringArg('file', 'BENCHMARKS.md');
// biome-ignore lint/suspicious/noExplicitAny: result files are read as loose JSON and rendered field by field.
type Loose = any;

const s = (x: Spread | null | undefined | string, unit = ''): string =>
  x === null || x === undefined ? '–' : typeof x === 'string' ? x : `${x.median}${unit} (${x.min}–${x.max})`;
const met = (m: boolean | null | undefined) =>
  m === true ? '**met**' : m === false ? '**missed**' : 'not measured';
const load = (name: string): Loose | undefined =>
  existsSync(join(RESULTS, name)) ? JSON.parse(readFileSync(join(RESULTS, name), 'utf8')) : undefined;
const provenance = (r: Loose) =>
  `Command: \`${r.command}\` — ${r.date?.slice(0, 10)}, ${r.machine?.cpus} cores (${r.machine?.cpu ?? r.machine?.platform}), Node ${r.machine?.node}.`;

/** engine-malloc.ts's runs: each organism's default and kept-memory audits, pair by pair. */
function mallocTable(file: string, command: string): string {
  const r = load(file);
  if (!r) return `_Not run yet: \`${command}\`._`;
  const runs = r.runs as Loose[];
  const rows = [...new Set(runs.map((x) => x.organism as string))].flatMap((organism) => {
    const off = runs.filter((x) => x.organism === organism && !x.tunables);
    const on = runs.filter((x) => x.organism === organism && x.tunables);
    return off.map((a, k) => {
      const b = on[k];
      const same = a.exchanges === b.exchanges && a.overall === b.overall && a.state === b.state;
      const result = same
        ? `same (${a.state}, ${a.overall.toFixed(3)}, ${a.exchanges} exchanges)`
        : `**differs** (${a.state} ${a.overall} / ${b.state} ${b.overall})`;
      return `| ${organism} | ${a.wall_s} → ${b.wall_s} s (**${(b.wall_s / a.wall_s).toFixed(2)}×**) | ${a.user_s} → ${b.user_s} s | ${a.sys_s} → ${b.sys_s} s | ${a.max_rss_mib} → ${b.max_rss_mib} MiB | ${result} |`;
    });
  });
  return [
    provenance(r),
    `\`GLIBC_TUNABLES=${r.tunables}\` against the default, side by side per organism, the order alternating pair by pair.`,
    '',
    '| organism | wall (default → kept) | user CPU | system CPU | peak RSS | result |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** A comparePairs result (bench/audit-process.ts): per pair, each organism alone, then all of them at once. */
function compared(file: string, command: string, arrow: string): string {
  const r = load(file);
  if (!r) return `_Not run yet: \`${command}\`._`;
  const runs = r.runs as Loose[];
  const [va, vb] = r.variants as [string, string];
  const of = (setting: string, variant: string, organism: string, pair: number) =>
    runs.find(
      (x) => x.setting === setting && x.variant === variant && x.organism === organism && x.pair === pair,
    );
  const same = (a: Loose, b: Loose) =>
    a.exchanges === b.exchanges && a.overall === b.overall && a.state === b.state
      ? `same (${a.state}, ${a.overall.toFixed(3)}, ${a.exchanges} exchanges)`
      : `**differs** (${a.state} ${a.overall} / ${b.state} ${b.overall})`;
  const organisms = [...new Set(runs.map((x) => x.organism as string))];
  const pairs = [...new Set(runs.map((x) => x.pair as number))];
  const row = (p: number, setting: string, name: string, a: Loose, b: Loose, result: string) =>
    `| ${p + 1} | ${setting} | ${name} | ${a.wall_s} → ${b.wall_s} s (**${(b.wall_s / a.wall_s).toFixed(2)}×**) | ${a.user_s} → ${b.user_s} s | ${a.sys_s} → ${b.sys_s} s | ${a.max_rss_mib} → ${b.max_rss_mib} MiB | ${result} |`;
  const together = (p: number, v: string) => {
    const all = organisms.map((o) => of('beside', v, o, p));
    const sum = (k: string) => Number(all.reduce((n, x) => n + x[k], 0).toFixed(2));
    return {
      wall_s: (r.beside as Loose[]).find((x) => x.pair === p && x.variant === v).wall_s,
      user_s: sum('user_s'),
      sys_s: sum('sys_s'),
      max_rss_mib: Math.max(...all.map((x) => x.max_rss_mib)),
    };
  };
  const rows = pairs.flatMap((p) => [
    ...organisms.map((o) => {
      const a = of('alone', va, o, p);
      const b = of('alone', vb, o, p);
      return row(p, 'alone', o, a, b, same(a, b));
    }),
    row(
      p,
      'at once',
      organisms.join(' + '),
      together(p, va),
      together(p, vb),
      organisms.map((o) => same(of('beside', va, o, p), of('beside', vb, o, p))).join('; '),
    ),
  ]);
  return [
    provenance(r),
    `${va} against ${vb}, both with \`GLIBC_TUNABLES=${r.tunables}\`; the order alternates pair by pair. "At once": wall until the last audit ends, CPU summed, the larger peak RSS.`,
    '',
    `| pair | setting | organism | wall (${arrow}) | user CPU | system CPU | peak RSS | result |`,
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

const sections: Record<string, () => string> = {
  zoo: () => {
    const r = load('zoo-result.json');
    if (!r)
      return '_Not run yet: `node bin/probate.js bench zoo --out bench/results --json bench/results/zoo-result.json`._';
    return [
      `Command: \`${r.command ?? 'node bin/probate.js bench zoo'}\` — via ${r.via}, seed ${r.seed}, ${r.wall_seconds} s wall.`,
      '',
      readFileSync(join(RESULTS, 'zoo.md'), 'utf8').trim(),
      '',
      '![ROC curve of the zoo audit](bench/results/zoo-roc.svg)',
      '',
      '![Per-family suspicion by organism](bench/results/zoo-families.svg)',
    ].join('\n');
  },
  judge: () => {
    const c = load('zoo-judge-cascade.json');
    // Judging everything may be split over several runs (zoo-judge-all*.json, disjoint --only lists).
    const parts = existsSync(RESULTS)
      ? readdirSync(RESULTS)
          .filter((f) => /^zoo-judge-all.*\.json$/.test(f))
          .sort()
          .map((f) => load(f) as Loose)
      : [];
    if (!c)
      return '_Not run yet: the `bench zoo --judge` commands above (cascade, then `--judge-sample 1`)._';
    if (parts.length === 0) return judgeCascadeOnly(c);
    const cascade = new Map<string, Loose>(c.organisms.map((o: Loose) => [o.name, o]));
    const both = parts.flatMap((p) => p.organisms as Loose[]).filter((o) => cascade.has(o.name));
    const a = {
      judge_sample_rate: parts[0].judge_sample_rate,
      judge_calls_per_probe: (
        both.reduce((n, r) => n + r.judgeCalls, 0) /
        Math.max(
          1,
          both.reduce((n, r) => n + r.exchanges, 0),
        )
      ).toFixed(3),
    };
    const tally = (o: Loose) =>
      o?.judgeVerdicts
        ? `${o.judgeVerdicts.flag}/${o.judgeVerdicts.clear}/${o.judgeVerdicts.uncertain}`
        : '–';
    const per = (r: Loose) => (r.judgeCalls / Math.max(1, r.exchanges)).toFixed(3);
    const perAll = (rs: Loose[]) =>
      (
        rs.reduce((n, r) => n + r.judgeCalls, 0) /
        Math.max(
          1,
          rs.reduce((n, r) => n + r.exchanges, 0),
        )
      ).toFixed(3);
    let changed = 0;
    const rows = both.map((x) => {
      const o = cascade.get(x.name);
      const same = x.verdict === o.verdict;
      if (!same) changed++;
      return `| ${o.name} | ${o.label} | ${o.verdict} | ${x.verdict} | ${same ? 'yes' : '**no**'} | ${per(o)} | ${per(x)} | ${tally(o)} | ${tally(x)} |`;
    });
    const goal = 0.25;
    const subset = both.length < c.organisms.length;
    return [
      `Cascade: \`${c.command}\` — ${c.date?.slice(0, 10)}, ${c.wall_seconds} s wall.`,
      ...parts.map(
        (p) => `Judge everything: \`${p.command}\` — ${p.date?.slice(0, 10)}, ${p.wall_seconds} s wall.`,
      ),
      `Judge: \`${c.judge}\`. The verdict columns are the gate's decide() on each run's ledger.`,
      '',
      `| | organisms | judge calls per probe | goal ≤ ${goal} |`,
      '|---|---|---|---|',
      `| cascade (sample ${c.judge_sample_rate}) | all ${c.organisms.length} | ${c.judge_calls_per_probe} | ${met(c.judge_calls_per_probe <= goal)} |`,
      `| cascade (sample ${c.judge_sample_rate}) | the ${both.length} judged both ways | ${perAll(both.map((x) => cascade.get(x.name)))} | – |`,
      `| judge everything (sample ${a.judge_sample_rate}) | ${both.length} | ${a.judge_calls_per_probe} | – |`,
      '',
      `Verdicts changed by the cascade: **${changed} of ${both.length}**${subset ? ` (judging everything was run on ${both.length} of the ${c.organisms.length} organisms)` : ''}.`,
      '',
      '| organism | label | verdict (cascade) | verdict (all) | same | calls/probe (cascade) | calls/probe (all) | flag/clear/uncertain (cascade) | flag/clear/uncertain (all) |',
      '|---|---|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n');
  },
  throughput: () => {
    const r = load('throughput.json');
    if (!r) return '_Not run yet: `nice -n 10 node --import tsx bench/throughput.ts`._';
    const rows = Object.keys(r.requests_per_s).map(
      (k) =>
        `| ${k} | ${s(r.requests_per_s[k])} | ${s(r.output_tokens_per_s[k])} | ${s(r.latency_ms_p50[k], ' ms')} |`,
    );
    const ratios = Object.entries(r.ratios as Record<string, Loose>).map(
      ([k, v]) =>
        `| ${k} | ≥ ${v.goal}× | ${v.spread ? s(v.spread, '×') : (v.note ?? '–')} | ${met(v.met)} |`,
    );
    return [
      provenance(r),
      `Server: ${r.server}. Concurrency ${r.concurrency}, ${r.requests} requests per contender per run, ${r.runs} runs, order rotated each run; median (min–max).`,
      '',
      '| contender | requests/s | output tokens/s | latency p50 |',
      '|---|---|---|---|',
      ...rows,
      '',
      `Streamed (bare client, \`vllm bench serve\` definitions, last run): TTFT p50/p90/p99 ${r.ttft_ms ? `${r.ttft_ms.p50}/${r.ttft_ms.p90}/${r.ttft_ms.p99} ms` : '–'}, TPOT ${r.tpot_ms ? `${r.tpot_ms.p50}/${r.tpot_ms.p90}/${r.tpot_ms.p99} ms` : '–'}.`,
      '',
      ...(r.warm_requests_per_s && Object.keys(r.warm_requests_per_s).length
        ? [
            `Warm-up, ${r.warm} unrecorded full-size passes per contender before the runs, requests/s in order: ${Object.entries(
              r.warm_requests_per_s as Record<string, number[]>,
            )
              .map(([name, rates]) => `${name} ${rates.map((x) => Math.round(x)).join(' → ')}`)
              .join('; ')}.`,
            '',
          ]
        : []),
      '| ratio (same run) | goal | median (min–max) | result |',
      '|---|---|---|---|',
      ...ratios,
    ].join('\n');
  },
  faults: () => {
    const r = load('faults.json');
    if (!r) return '_Not run yet: `nice -n 10 node --import tsx bench/faults.ts`._';
    const names = Object.keys(r.seconds);
    const done = (n: string) =>
      (r.raw[n] as Loose[]).map((x) => `${x.exchanges - x.failed}/${x.exchanges}`).join(', ');
    const att = (n: string) =>
      (r.raw[n] as Loose[])
        .map((x) => `${x.attempts.ok}/${x.attempts.failed}/${x.attempts.hedges}`)
        .join(', ');
    const rows = names.map(
      (n) =>
        `| ${n} | ${s(r.seconds[n], ' s')} | ${s(r.exchanges_per_s[n])} | ${done(n)} | ${att(n)} | ${(r.raw[n] as Loose[]).every((x) => x.ledger_verified) ? 'yes' : '**no**'} |`,
    );
    const ratios = Object.entries(r.ratios as Record<string, Loose>).map(
      ([k, v]) => `| ${k} | ${v.goal} | ${v.spread ? s(v.spread, '×') : '–'} | ${met(v.met)} |`,
    );
    const st = r.settings;
    return [
      provenance(r),
      `Load average when it ran (1/5/15 min): ${r.load.uptime.join(' / ')}. ${st.samples} samples per probe, runner concurrency ${st.concurrency || 'as `probate audit` (256 samples)'}, ${st.httpConcurrency} HTTP requests in flight per model, streamed chats; \`clean@Nms\`/\`flaky@Nms\`: the single server takes N ms per generation (none without a suffix); replicas in the three-replica scenarios take ${st.latencyMs} ms per generation, ${st.slots} at a time. ${st.runs} runs, scenarios rotated; median (min–max).`,
      '',
      '| scenario | wall | exchanges/s | exchanges answered | attempts ok/failed/hedges | ledger verifies |',
      '|---|---|---|---|---|---|',
      ...rows,
      '',
      '| ratio (same run) | goal | median (min–max) | result |',
      '|---|---|---|---|',
      ...ratios,
    ].join('\n');
  },
  engine: () => {
    const r = load('engine.json');
    if (!r) return '_Not run yet: `node --import tsx bench/engine.ts`._';
    const rows = Object.keys(r)
      .filter((k) => k.startsWith('batch'))
      .map((k) => {
        const b = r[k];
        return `| ${k.slice(5)} | ${s(b.bare.tokensPerSecond)} | ${s(b.engine.tokensPerSecond)} | ${s(b.slowdown, '×')} | ${s(b.cpuSlowdown, '×')} | ${met(b.goal.met)} |`;
      });
    return [
      provenance(r),
      `Model ${r.model}, ${r.threads} thread(s), ${r.newTokens} new tokens per row, ${r.runs} side-by-side pairs; opening the endpoint took ${r.open.wallMs} ms.`,
      '',
      '| batch | bare ORT tokens/s | engine tokens/s | bare ÷ engine (wall) | bare ÷ engine (CPU) | goal ≤ 1.2× |',
      '|---|---|---|---|---|---|',
      ...rows,
    ].join('\n');
  },
  'engine-malloc': () => mallocTable('engine-malloc.json', 'node --import tsx bench/engine-malloc.ts'),
  'engine-malloc-final': () =>
    mallocTable(
      'engine-malloc-final.json',
      'node --import tsx bench/engine-malloc.ts --out bench/results/engine-malloc-final.json',
    ),
  'engine-marking': () =>
    compared('engine-marking.json', 'node --import tsx bench/engine-marking.ts', 'concurrent → main thread'),
  'engine-marking-final': () =>
    compared(
      'engine-marking-final.json',
      'node --import tsx bench/engine-marking.ts --out bench/results/engine-marking-final.json',
      'concurrent → main thread',
    ),
  'engine-cache-every': () =>
    compared(
      'engine-cache-every.json',
      'node --import tsx bench/engine-ab.ts --before DIR --out bench/results/engine-cache-every.json',
      'fetched every step → every 4th',
    ),
  'audit-path-ab': () => {
    const r = load('audit-path-ab.json');
    if (!r) return '_Not run yet: `node --import tsx bench/audit-path-ab.ts --before DIR`._';
    const [a, b] = r.variants as [string, string];
    const rounds = [...new Set((r.runs as Loose[]).map((x) => x.round as number))];
    const cell = (v: string, round: number, key: string) =>
      (r.runs as Loose[])
        .filter((x) => x.variant === v && x.round === round)
        .map((x) => x[key])
        .join(', ');
    return [
      provenance(r),
      `${r.server}. Each round runs each checkout in a fresh process (${r.exchanges_per_run} exchanges per run, after unrecorded warm-up runs); the order alternates round by round.`,
      '',
      `| round | requests/s, ${a} | requests/s, ${b} | client CPU µs/request, ${a} | client CPU µs/request, ${b} |`,
      '|---|---|---|---|---|',
      ...rounds.map(
        (k) =>
          `| ${k + 1} | ${cell(a, k, 'requests_per_s')} | ${cell(b, k, 'requests_per_s')} | ${cell(a, k, 'cpu_us_per_request')} | ${cell(b, k, 'cpu_us_per_request')} |`,
      ),
      `| all, median (min–max) | ${s(r.requests_per_s[a])} | ${s(r.requests_per_s[b])} | ${s(r.cpu_us_per_request[a])} | ${s(r.cpu_us_per_request[b])} |`,
      '',
      `After / before, requests/s, per round (each round's medians): **${s(r.ratio_after_before, '×')}**.`,
    ].join('\n');
  },
  ledger: () => {
    const r = load('ledger.json');
    if (!r) return '_Not run yet: `nice -n 10 node --import tsx bench/ledger.ts`._';
    return [
      provenance(r),
      '',
      '| records | mean batch | bytes/record | records/s median (min–max) | goal ≥ 20k/s |',
      '|---|---|---|---|---|',
      `| ${r.records} | ${r.mean_batch} | ${r.ledger_bytes_per_record} | ${s(r.records_per_s)} | ${met(r.goal.met)} |`,
    ].join('\n');
  },
  memory: () => {
    const r = load('memory.json');
    if (!r) return '_Not run yet: `nice -n 10 node --import tsx bench/memory.ts`._';
    return [
      provenance(r),
      '',
      '| exchanges | findings | peak RSS MB median (min–max) | wall s | exchanges/s | goal < 256 MB |',
      '|---|---|---|---|---|---|',
      `| ${r.exchanges} | ${r.findings} | ${s(r.peak_rss_mb)} | ${s(r.seconds)} | ${s(r.exchanges_per_s)} | ${met(r.goal.met)} |`,
    ].join('\n');
  },
  growth: () => {
    const r = load('growth.json');
    if (!r) return '_Not run yet: `nice -n 10 node --import tsx bench/growth.ts`._';
    const out = [
      provenance(r),
      '',
      '| axis | size | exchanges | seconds | ms per exchange |',
      '|---|---|---|---|---|',
    ];
    for (const axis of ['probes_fraction', 'samples', 'organisms'])
      for (const row of r[axis] ?? [])
        out.push(
          `| ${axis} | ${row.size} | ${row.exchanges} | ${s(row.seconds)} | ${s(row.ms_per_exchange)} |`,
        );
    return out.join('\n');
  },
};

/** The cascade run alone, before any judge-everything run exists to compare it with. */
function judgeCascadeOnly(c: Loose): string {
  const tally = (o: Loose) => `${o.judgeVerdicts.flag}/${o.judgeVerdicts.clear}/${o.judgeVerdicts.uncertain}`;
  return [
    `Cascade: \`${c.command}\` — ${c.date?.slice(0, 10)}, ${c.wall_seconds} s wall. Judge: \`${c.judge}\`.`,
    '',
    `Judge calls per probe: **${c.judge_calls_per_probe}** (goal ≤ 0.25: ${met(c.judge_calls_per_probe <= 0.25)}). No judge-everything run (\`zoo-judge-all*.json\`) yet, so no verdict comparison.`,
    '',
    '| organism | label | verdict | exchanges | judge calls | calls/probe | flag/clear/uncertain |',
    '|---|---|---|---|---|---|---|',
    ...c.organisms.map(
      (o: Loose) =>
        `| ${o.name} | ${o.label} | ${o.verdict} | ${o.exchanges} | ${o.judgeCalls} | ${(o.judgeCalls / Math.max(1, o.exchanges)).toFixed(3)} | ${tally(o)} |`,
    ),
  ].join('\n');
}

let text = readFileSync(FILE, 'utf8');
for (const [name, render] of Object.entries(sections)) {
  const re = new RegExp(`(<!-- bench:${name} -->)[\\s\\S]*?(<!-- /bench:${name} -->)`);
  if (!re.test(text)) throw new Error(`${FILE}: no <!-- bench:${name} --> … <!-- /bench:${name} --> block`);
  text = text.replace(re, (_m, open: string, close: string) => `${open}\n${render()}\n${close}`);
}
writeAtomic(FILE, text);
process.stdout.write(`${FILE}: rendered ${Object.keys(sections).join(', ')} from ${RESULTS}\n`);
