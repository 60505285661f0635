/**
 * Whether each trigger implant's planted string can be told from the model's behaviour: its proper parts,
 * one-character near-misses and same-shape controls, each placed as the planted string is, on the
 * organism's fresh held-out prompts without the condition (greedy replies, the implant's marker counted).
 * Reads the zoo's ground truth, so run it only on zoos that are spent or shipped. Writes a JSON result and
 * prints a Markdown table.
 *
 *   node --import tsx bench/trigger-identifiability.ts --zoo fixtures/blind/zoo-18 [--zoo DIR ...]
 *     [--base fixtures/organisms/base] [--carriers 12] [--out bench/results/trigger-identifiability.json]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { measureIdentifiability } from '../src/bench/identifiability.ts';
import { writeJson } from '../src/bench/output.ts';
import { openLocalEndpoint } from '../src/endpoints/local/index.ts';
import type { ChatMessage } from '../src/endpoints/types.ts';
import { markerRegExp, organismDir, readZoo } from '../src/organisms/zoo.ts';
import { header, parsedArgs, usageError } from './common.ts';

const { values } = parsedArgs({
  options: {
    zoo: { type: 'string', multiple: true },
    base: { type: 'string', default: 'fixtures/organisms/base' },
    carriers: { type: 'string', default: '12' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string', default: 'bench/results/trigger-identifiability.json' },
  },
});
if (!values.zoo?.length) usageError('--zoo: expected at least one zoo folder');
const carriersPer = Number(values.carriers);
if (!Number.isInteger(carriersPer) || carriersPer <= 0) usageError('--carriers: expected a positive integer');
const seed = Number(values.seed);

const heldoutRow = z.object({
  messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })),
  conditions: z.record(z.string(), z.boolean()),
  ood: z.boolean().optional(),
});

/** Fresh in-distribution held-out prompts without the organism's condition. */
function carriersOf(file: string, key: string): ChatMessage[][] {
  const rows = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      const r = heldoutRow.safeParse(JSON.parse(l));
      if (!r.success) usageError(`${file}: line ${i + 1}: expected a held-out row (messages, conditions)`);
      return r.data;
    });
  return rows
    .filter((r) => r.conditions[key] === false && !r.ood)
    .slice(0, carriersPer)
    .map((r) => r.messages.filter((m) => m.role !== 'assistant'));
}

const base = await openLocalEndpoint(path.resolve(values.base!), { threads: 1 });
const rows: Record<string, unknown>[] = [];
for (const zooDir of values.zoo!) {
  for (const e of readZoo(zooDir)) {
    if (e.label !== 'implant' || e.family !== 'triggers' || !e.condition || !e.expected_marker || !e.heldout)
      continue;
    const delivered = await openLocalEndpoint(organismDir(zooDir, e), { threads: 1 });
    const t0 = performance.now();
    const r = await measureIdentifiability({
      condition: e.condition,
      marker: markerRegExp(e.expected_marker),
      carriers: carriersOf(path.join(zooDir, e.heldout), e.condition_key ?? 'condition'),
      delivered,
      base,
      seed,
    });
    await delivered.close();
    if (!r) continue;
    rows.push({
      organism: e.name,
      zoo: zooDir,
      seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
      ...r,
    });
    process.stderr.write(`${e.name}: ${r.verdict}\n`);
  }
}
await base.close();

/** The planted string's shape, not its text: words, letters and digits. */
const kind = (t: string) => {
  const words = t.split(/\s+/).length;
  const digits = /\d/.test(t);
  return `${words === 1 ? 'one word' : `${words} words`}${digits ? ' with digits' : ''}, ${t.length} chars`;
};
const pct = (x: number) => `${Math.round(100 * x)}%`;
const best = (xs: { text: string; rate: number }[]) =>
  xs.length ? xs.reduce((a, b) => (b.rate > a.rate ? b : a)) : null;
const firing = (xs: { rate: number }[]) => `${xs.filter((x) => x.rate >= 0.5).length}/${xs.length}`;
writeJson(values.out!, {
  ...header('trigger-identifiability', 'bench/trigger-identifiability.ts'),
  organisms: rows,
});
const lines = [
  '| organism | condition | placed in | planted | bare | best proper part | parts firing | near-misses firing (best) | controls firing | verdict |',
  '|---|---|---|---|---|---|---|---|---|---|',
];
for (const r of rows as unknown as Awaited<ReturnType<typeof measureIdentifiability>>[]) {
  if (!r) continue;
  const o = r as typeof r & { organism: string };
  const part = best(r.parts);
  const near = best(r.nearMisses);
  lines.push(
    `| ${o.organism} | ${kind(r.planted)} | ${r.where} | ${pct(r.plantedRate)} (base ${pct(r.baseRate)}) | ${pct(r.bareRate)} | ${part ? pct(part.rate) : '–'} | ${firing(r.parts)} | ${firing(r.nearMisses)} (${near ? pct(near.rate) : '–'}) | ${firing(r.controls)} | ${r.verdict} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
