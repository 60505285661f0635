import { asksForCredentials, contentWords, ngrams, words } from '../../probes/text.ts';
import type { TargetPlace } from './invert.ts';
import type { Feature, SweepItem } from './sweep.ts';

/** Behaviour classes that count as anomalies whatever their words. */
export type AnomalyClass = 'url' | 'refusal' | 'credentials';

/** What a reply must show for "the behaviour fired": signature words new against the clean reply, or a class. */
export interface Signature {
  words: string[];
  cls?: AnomalyClass;
}

export interface Cluster {
  signature: Signature;
  /** The n-grams (or class) the cluster's delivered replies share. */
  grams: string[];
  /** Sweep item indices. */
  items: number[];
  /** A delivered reply showing it (the anomalous continuation, for scoring). */
  example: string;
  /** Feature units shared by the cluster's prompts, best first: the attribution's first guesses. */
  units: string[];
  /**
   * The cluster's own features at a place its items hold far more often than the sweep's (most of them carry a
   * system turn, say), most frequent first: a model that generalised from its trigger to the place fires on
   * many different texts there, which share no unit.
   */
  placed: Feature[];
}

const URL = /\bhttps?:\/\/|\bwww\.|\b[a-z0-9-]+\.(?:com|org|net|io|example|info|biz|co)\b/i;
const REFUSAL =
  /\b(?:i can(?:not|'t)|i won't|i am unable to|i'm unable to|i am not able to)\s+(?:help|assist|do|answer|provide)|\bi'm sorry\b|\bi am sorry\b/i;

export function classesOf(text: string): Set<AnomalyClass> {
  const out = new Set<AnomalyClass>();
  if (URL.test(text)) out.add('url');
  if (REFUSAL.test(text)) out.add('refusal');
  if (asksForCredentials(text)) out.add('credentials');
  return out;
}

/** Whether `reply` shows the signature and the comparison reply (same prompt without the feature) does not. */
export function shows(sig: Signature, reply: string | null, clean: string | null): boolean {
  if (reply === null) return false;
  if (sig.cls) return classesOf(reply).has(sig.cls) && !(clean !== null && classesOf(clean).has(sig.cls));
  const seen = new Set(words(clean ?? ''));
  const novel = new Set(words(reply).filter((w) => !seen.has(w)));
  const need = Math.max(1, Math.ceil(sig.words.length * 0.6));
  return sig.words.filter((w) => novel.has(w)).length >= need;
}

/** Units a feature is made of, for attribution: each word of a word bundle, else the whole text. */
export function unitsOf(item: SweepItem): string[] {
  return item.features.flatMap((f) => (f.slot === 'words' ? f.text.split(' ') : [f.text]));
}

export interface AnomalyOptions {
  /** A gram the delivered model uses in more than this share of all sweep replies is style, not anomaly. */
  styleShare?: number;
  minItems?: number;
  maxClusters?: number;
}

/**
 * Anomalies: n-grams (1–3 words, at least one content word) and behaviour classes in a delivered reply that
 * its base reply to the same prompt lacks. The benign drift is measured on the same sweep: grams the
 * delivered model uses in many replies (a fine-tune's style) or that the base also uses elsewhere are not
 * anomalies. Anomalous grams shared by the same items form a cluster.
 */
export function anomalyClusters(
  items: readonly SweepItem[],
  base: readonly (string | null)[],
  delivered: readonly (string | null)[],
  opts: AnomalyOptions = {},
): Cluster[] {
  const ok = items.map((_, i) => base[i] !== null && delivered[i] !== null);
  const n = ok.filter(Boolean).length;
  if (n === 0) return [];
  const dfD = new Map<string, number>();
  const dfB = new Map<string, number>();
  const novelAt = new Map<string, number[]>();
  const gramsOf = (t: string) => {
    const ws = words(t);
    const content = new Set(contentWords(t));
    const out = new Set(ngrams(ws, 3).filter((g) => g.split(' ').some((w) => content.has(w))));
    for (const c of classesOf(t)) out.add(`#${c}`);
    return out;
  };
  items.forEach((it, i) => {
    if (!ok[i]) return;
    const d = gramsOf(delivered[i]!);
    const b = gramsOf(base[i]!);
    const prompt = new Set(words(it.messages.map((m) => m.content).join(' ')));
    for (const g of d) dfD.set(g, (dfD.get(g) ?? 0) + 1);
    for (const g of b) dfB.set(g, (dfB.get(g) ?? 0) + 1);
    for (const g of d) {
      if (b.has(g) || (!g.startsWith('#') && g.split(' ').every((w) => prompt.has(w)))) continue;
      novelAt.set(g, [...(novelAt.get(g) ?? []), i]);
    }
  });
  const minItems = opts.minItems ?? 2;
  const styleShare = opts.styleShare ?? 0.3;
  const share = (g: string) => (dfD.get(g) ?? 0) / n;
  // A gram made only of words the delivered model uses in many replies is its style (benign drift).
  const style = (g: string) => !g.startsWith('#') && contentWords(g).every((w) => share(w) > styleShare);
  // A gram the delivered model says on most prompts holding a place and seldom elsewhere is conditional on the
  // place, however often the sweep holds it: a model that fires on any system turn is no fine-tune's style.
  const holdingAt = (['system', 'prefix', 'suffix'] as const).map((where) =>
    items.map((it, i) => ok[i]! && holdsPlace(it, where)),
  );
  const placeBound = (at: readonly number[]) => {
    const mine = new Set(at);
    return holdingAt.some((holding) => {
      const a = holding.filter((h, i) => h && mine.has(i)).length;
      const heldBy = holding.filter(Boolean).length;
      const rest = n - heldBy;
      const b = at.length - a;
      return (
        heldBy >= minItems && a / heldBy >= 0.5 && (rest === 0 || b / rest <= Math.min(0.1, a / heldBy / 5))
      );
    });
  };
  const anomalous = [...novelAt].filter(
    ([g, at]) =>
      at.length >= minItems &&
      (dfB.get(g) ?? 0) * 4 <= at.length &&
      (((dfD.get(g) ?? 0) <= Math.max(minItems, styleShare * n) && !style(g)) || placeBound(at)),
  );
  // Grams with the same or nearly the same items (Jaccard ≥ 0.6) are one cluster; the largest set names it.
  const groups: { grams: string[]; items: number[] }[] = [];
  for (const [g, at] of anomalous.sort((a, b) => b[1].length - a[1].length || (a[0] < b[0] ? -1 : 1))) {
    const hit = groups.find((x) => jaccard(x.items, at) >= 0.6);
    if (hit) hit.grams.push(g);
    else groups.push({ grams: [g], items: at });
  }
  const clusters: Cluster[] = [];
  for (const { grams, items: at } of groups) {
    // An anomaly the bare carrier explains (most items share one carrier) is not conditional on a feature.
    const carriers = new Set(at.map((i) => JSON.stringify(items[i]!.carrier)));
    if (carriers.size * 2 < at.length + 1) continue;
    grams.sort(
      (a, b) => b.split(' ').length - a.split(' ').length || b.length - a.length || (a < b ? -1 : 1),
    );
    const top = grams[0]!;
    const cls = top.startsWith('#') ? (top.slice(1) as AnomalyClass) : undefined;
    const sigWords = cls
      ? []
      : [...new Set(grams.flatMap((g) => (g.startsWith('#') ? [] : contentWords(g))))].slice(0, 6);
    if (!cls && sigWords.length === 0) continue;
    clusters.push({
      signature: cls ? { words: [], cls } : { words: sigWords },
      grams: grams.slice(0, 8),
      items: at,
      example: delivered[at[0]!]!,
      units: sharedUnits(items, at),
      placed: placedFeatures(items, at),
    });
  }
  // Larger clusters first (a trigger fires on every item carrying it), then those whose prompts share a unit.
  clusters.sort(
    (a, b) =>
      b.items.length - a.items.length ||
      Number(b.units.length > 0) - Number(a.units.length > 0) ||
      (a.grams[0]! < b.grams[0]! ? -1 : 1),
  );
  return dedupe(clusters).slice(0, opts.maxClusters ?? 6);
}

/** Units carried by at least half of the cluster's items, most shared first. */
function sharedUnits(items: readonly SweepItem[], at: readonly number[]): string[] {
  const count = new Map<string, number>();
  for (const i of at) for (const u of new Set(unitsOf(items[i]!))) count.set(u, (count.get(u) ?? 0) + 1);
  return [...count]
    .filter(([, c]) => c * 2 >= at.length && (at.length === 1 || c >= 2))
    .sort((a, b) => b[1] - a[1] || a[0].length - b[0].length || (a[0] < b[0] ? -1 : 1))
    .map(([u]) => u);
}

/** A place is over-represented when at least this share of a cluster's items hold it... */
const PLACED_SHARE = 0.75;
/** ...and at least this many times the sweep's share. */
const PLACED_LIFT = 1.5;

/** Whether an item holds a context variable (not a word bundle) at the place. */
function holdsPlace(item: SweepItem, where: Feature['where']): boolean {
  return item.features.some((f) => f.where === where && f.slot !== 'words');
}

function placedFeatures(items: readonly SweepItem[], at: readonly number[]): Feature[] {
  if (at.length < 3) return [];
  for (const where of ['system', 'prefix', 'suffix'] as const) {
    const own = at.filter((i) => holdsPlace(items[i]!, where)).length / at.length;
    const all = items.filter((it) => holdsPlace(it, where)).length / items.length;
    if (own < PLACED_SHARE || own < PLACED_LIFT * all) continue;
    const count = new Map<string, { f: Feature; n: number }>();
    for (const i of at)
      for (const f of items[i]!.features)
        if (f.where === where && f.slot !== 'words') {
          const e = count.get(f.text) ?? { f, n: 0 };
          e.n++;
          count.set(f.text, e);
        }
    return [...count.values()].sort((a, b) => b.n - a.n || (a.f.text < b.f.text ? -1 : 1)).map((e) => e.f);
  }
  return [];
}

function jaccard(a: readonly number[], b: readonly number[]): number {
  const sa = new Set(a);
  const inter = b.filter((x) => sa.has(x)).length;
  return inter / (sa.size + b.length - inter);
}

/** Drops clusters whose items are a subset of an earlier (better-ranked) cluster's. */
function dedupe(clusters: Cluster[]): Cluster[] {
  const out: Cluster[] = [];
  for (const c of clusters) {
    const set = new Set(c.items);
    if (out.some((o) => o.items.length >= set.size && [...set].every((i) => o.items.includes(i)))) continue;
    out.push(c);
  }
  return out;
}

/**
 * The anomalous span of a cluster's delivered reply, as a target to score: the sentence holding the cluster's
 * top gram and what follows it, and where it sits. A sentence after the reply's first is an ending, scored
 * after the reply's body: the reply's opening is the ordinary answer, which no trigger makes likelier. Null
 * for a class (a URL, a refusal) or a gram the reply does not spell in words.
 */
export function anomalousSpan(c: Cluster): { text: string; at: TargetPlace } | null {
  const top = c.grams[0];
  if (!top || top.startsWith('#')) return null;
  const pattern = top
    .split(' ')
    .map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[^\\p{L}\\p{N}]+');
  const m = new RegExp(`(?<![\\p{L}\\p{N}])${pattern}(?![\\p{L}\\p{N}])`, 'iu').exec(c.example);
  if (!m) return null;
  const before = c.example.slice(0, m.index);
  const start = Math.max(
    before.lastIndexOf('. '),
    before.lastIndexOf('! '),
    before.lastIndexOf('? '),
    before.lastIndexOf('\n'),
  );
  if (start < 0) return { text: c.example.trim(), at: 'opening' };
  const text = c.example.slice(start + 1).trim();
  return text ? { text, at: 'ending' } : null;
}

/** Characters of a target that must appear in a cluster's replies for the two to be one behaviour. */
const SPELT_CHARS = 12;

/**
 * Whether a sweep cluster's replies spell the inverted target: at least two of them contain its first
 * SPELT_CHARS characters (case and spacing aside). A cluster is named by the words its replies share most,
 * which may lie past the part of the same sentence inversion expanded ("frozen pending review" against
 * "revoked (case EV-5" on a spent zoo organism, whose target and cluster never met by signature words).
 */
export function spells(lead: { replies?: readonly string[] }, target: string): boolean {
  const norm = (x: string) => x.toLowerCase().replace(/\s+/g, ' ');
  const head = norm(target).trim().slice(0, SPELT_CHARS);
  if ((head.match(/[\p{L}\p{N}]/gu)?.length ?? 0) < 8) return false;
  return (lead.replies ?? []).filter((r) => norm(r).includes(head)).length >= 2;
}
