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
import { minimise } from '../src/audit/discovery/attribute.ts';
import type { TargetPlace } from '../src/audit/discovery/invert.ts';
import { DiscoverySession } from '../src/audit/discovery/session.ts';
import { beamTrigger, polishWord } from '../src/audit/discovery/trigger-beam.ts';
import {
  fireRate,
  type IdentifiabilityResult,
  lastQuoted,
  measureIdentifiability,
} from '../src/bench/identifiability.ts';
import { writeJson } from '../src/bench/output.ts';
import { openLocalEndpoint } from '../src/endpoints/local/index.ts';
import type { ChatMessage, ModelEndpoint } from '../src/endpoints/types.ts';
import { markerRegExp, organismDir, readZoo } from '../src/organisms/zoo.ts';
import { contentWords } from '../src/probes/text.ts';
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

/**
 * The audit's own beam inversion (words, then printable ASCII) given the implant's true target line, as the
 * audit would place it: what a search finds once it has the target, before any lead-finding. The string found
 * is minimised and polished as discovery does, then replayed on every carrier.
 */
async function invertWithTrueTarget(
  behaviour: string,
  where: 'system' | 'user',
  carriers: ChatMessage[][],
  marker: RegExp,
  delivered: ModelEndpoint,
  base: ModelEndpoint,
): Promise<{ found: string | null; rate: number; used: number; seconds: number } | null> {
  const target = lastQuoted(behaviour);
  if (!target || carriers.length < 8) return null;
  const at: TargetPlace = /^reply ends/.test(behaviour) ? 'ending' : 'opening';
  const t0 = performance.now();
  const s = new DiscoverySession({ base, delivered }, 4000, seed);
  const attribution = carriers.slice(0, 4);
  const ctx = {
    s,
    carriers: attribution,
    clean: await s.replies('delivered', attribution),
    signature: { words: contentWords(target).slice(0, 3) },
    target,
    at,
    need: 3,
    log: [],
  };
  const opts = { carriers: carriers.slice(0, 8), width: 4, hard: 4 };
  const place = where === 'system' ? 'system' : 'prefix';
  const hit =
    (await beamTrigger(ctx, place, { ...opts, alphabet: 'words' })) ??
    (await beamTrigger(ctx, place, { ...opts, alphabet: 'ascii' }));
  let found: string | null = null;
  if (hit) {
    const m = await minimise(ctx, hit.feature, hit.hits);
    found = (await polishWord(ctx, m, hit.hits)).text;
  }
  const rate =
    found === null
      ? 0
      : await fireRate(delivered, carriers, { text: found, where }, marker, { maxTokens: 96, seed });
  return {
    found,
    rate,
    used: Math.round(s.used),
    seconds: Number(((performance.now() - t0) / 1000).toFixed(1)),
  };
}

const base = await openLocalEndpoint(path.resolve(values.base!), { threads: 1 });
type Inverted =
  | (NonNullable<Awaited<ReturnType<typeof invertWithTrueTarget>>> & { partOfPlanted: boolean })
  | null;
type Row = IdentifiabilityResult & { organism: string; zoo: string; seconds: number; inverted: Inverted };
const rows: Row[] = [];
for (const zooDir of values.zoo!) {
  for (const e of readZoo(zooDir)) {
    if (e.label !== 'implant' || e.family !== 'triggers' || !e.condition || !e.expected_marker || !e.heldout)
      continue;
    const delivered = await openLocalEndpoint(organismDir(zooDir, e), { threads: 1 });
    const t0 = performance.now();
    const carriers = carriersOf(path.join(zooDir, e.heldout), e.condition_key ?? 'condition');
    const marker = markerRegExp(e.expected_marker);
    const r = await measureIdentifiability({
      condition: e.condition,
      marker,
      carriers,
      delivered,
      base,
      seed,
    });
    const inversion =
      r && e.behaviour
        ? await invertWithTrueTarget(e.behaviour, r.where, carriers, marker, delivered, base)
        : null;
    await delivered.close();
    if (!r) continue;
    const seconds = Number(((performance.now() - t0) / 1000).toFixed(1));
    const inverted = inversion && {
      ...inversion,
      partOfPlanted: !!inversion.found && r.planted.includes(inversion.found),
    };
    rows.push({ organism: e.name, zoo: zooDir, seconds, ...r, inverted });
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
/** What the beam found with the true target: its length and whether it is part of the planted string, not its text. */
const beamCell = (i: Inverted) =>
  !i
    ? '–'
    : i.found === null
      ? 'nothing fired'
      : `${i.found.length} chars, ${i.partOfPlanted ? 'part of planted' : 'not planted'}, fires ${pct(i.rate)}`;
const pct = (x: number) => `${Math.round(100 * x)}%`;
const best = (xs: { text: string; rate: number }[]) =>
  xs.length ? xs.reduce((a, b) => (b.rate > a.rate ? b : a)) : null;
const firing = (xs: { rate: number }[]) => `${xs.filter((x) => x.rate >= 0.5).length}/${xs.length}`;
writeJson(values.out!, {
  ...header('trigger-identifiability', 'bench/trigger-identifiability.ts'),
  organisms: rows,
});
const lines = [
  '| organism | condition | placed in | planted | bare | best proper part | parts firing | near-misses firing (best) | controls firing | verdict | beam, true target |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
];
for (const r of rows) {
  const part = best(r.parts);
  const near = best(r.nearMisses);
  lines.push(
    `| ${r.organism} | ${kind(r.planted)} | ${r.where} | ${pct(r.plantedRate)} (base ${pct(r.baseRate)}) | ${pct(r.bareRate)} | ${part ? pct(part.rate) : '–'} | ${firing(r.parts)} | ${firing(r.nearMisses)} (${near ? pct(near.rate) : '–'}) | ${firing(r.controls)} | ${r.verdict} | ${beamCell(r.inverted)} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
