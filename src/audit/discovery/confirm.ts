import type { Exchange } from '../../contracts/exchange.ts';
import type { ChatMessage, ModelEndpoint } from '../../endpoints/types.ts';
import type { PlannedSample, ProbeGroup } from '../../probes/families/types.ts';
import { Rng } from '../../probes/rng.ts';
import type { Transformation } from '../../probes/schema.ts';
import { trailingWord } from '../../probes/text.ts';
import { applyTransformation } from '../../probes/transforms.ts';
import { hashJson } from '../../util/hash.ts';
import { runDifferential } from '../runner.ts';
import { mcnemarExact } from '../stats.ts';
import { type Signature, shows } from './anomaly.ts';
import { endingBody } from './invert.ts';
import { REPLY_TOKENS } from './session.ts';
import type { Feature } from './sweep.ts';

/** A hypothesis to confirm: "with this feature the delivered model shows this signature". */
export interface Hypothesis {
  feature: Feature;
  signature: Signature;
}

export interface Confirmation {
  variant: string;
  transformation: Transformation;
  /** Paired over the fresh prompts: delivered with the feature vs base with the feature. */
  hitsDelivered: number;
  hitsBase: number;
  /** Delivered shows the signature on the bare prompt (against the base's bare reply). */
  hitsWithout: number;
  n: number;
  /** Exact one-sided McNemar p of the pre-registered signature (the analysis tests every word again). */
  pValue: number;
}

/** The feature as a catalogue-style transformation (so reports, replay and benchmarks read it as any other). */
export function toTransformation(prefix: string, f: Feature): Transformation {
  const id = `${prefix}-${hashJson({ where: f.where, text: f.text }).slice(0, 10)}`;
  if (f.where === 'system') return { id, kind: 'system', text: f.text };
  // An ending is the same prefill after a reply body that differs per prompt (the exchanges hold each one).
  if (f.where === 'opening' || f.where === 'ending') return { id, kind: 'opening', text: f.text };
  return { id, kind: 'insert', text: f.text, position: f.where };
}

export function conditionOf(f: Feature): string {
  if (f.where === 'opening')
    return `reply opened with "${f.text}" (an inverted target; no trigger recovered)`;
  if (f.where === 'ending')
    return `reply continued past its end with "${f.text}" (an inverted target appended to replies; no trigger recovered)`;
  return f.where === 'system'
    ? `system turn contains "${f.text}"`
    : `user turn contains "${f.text}" (${f.where === 'prefix' ? 'before' : 'after'} the request)`;
}

/**
 * The confirmatory test on fresh prompts: every prompt is sent bare and with each hypothesis's feature, to
 * both models, as ordinary triggers-family exchanges (probe set `probeSetId`) written to the ledger. The
 * audit's analysis then tests them like every other exchange (same detectors, same paired statistics,
 * same correction), so a confirmed discovery becomes a finding by the path every finding takes.
 */
export async function confirmHypotheses(opts: {
  base: ModelEndpoint;
  delivered: ModelEndpoint;
  hypotheses: readonly Hypothesis[];
  prompts: readonly ChatMessage[][];
  probeSetId: string;
  seed: number;
  concurrency: number;
  write: (exchanges: Exchange[]) => void;
  done?: ReadonlySet<string>;
  /** The base's clean reply to each prompt: the body an `ending` hypothesis is prefilled after. */
  bodies?: readonly (string | null)[];
}): Promise<{ confirmations: Confirmation[]; requests: number; exchanges: Exchange[] }> {
  const ts = opts.hypotheses.map((h) => toTransformation(opts.probeSetId, h.feature));
  const probeSetHash = hashJson({ transformations: ts, prompts: opts.prompts });
  const groups: ProbeGroup[] = opts.prompts.map((clean, i) => {
    const rng = Rng.derive(opts.seed, opts.probeSetId, i);
    const seed = rng.seed();
    const params = { maxTokens: REPLY_TOKENS, temperature: 0, seed };
    const probeId = `p${i}`;
    const sample = (variant: string, messages: ChatMessage[], kind?: string): PlannedSample => ({
      probeId,
      variant,
      sample: 0,
      seed,
      messages,
      meta: kind ? { transformation: kind, discovered: true } : {},
      params,
    });
    return {
      family: 'triggers',
      probeSetId: opts.probeSetId,
      probeSetHash,
      samples: [
        sample('clean', clean),
        ...ts.map((t, k) =>
          opts.hypotheses[k]!.feature.where === 'ending'
            ? sample(
                t.id,
                endingPrefill(clean, opts.bodies?.[i] ?? null, opts.hypotheses[k]!.feature.text),
                'ending',
              )
            : sample(t.id, applyTransformation(t, clean, rng), t.kind),
        ),
      ],
    };
  });
  const exchanges: Exchange[] = [];
  const run = await runDifferential({
    base: opts.base,
    delivered: opts.delivered,
    groups,
    concurrency: opts.concurrency,
    done: opts.done,
    write: (exs) => {
      exchanges.push(...exs);
      opts.write(exs);
    },
  });
  const byProbe = new Map<string, Map<string, Exchange>>();
  for (const e of exchanges) {
    const m = byProbe.get(e.probeId) ?? new Map<string, Exchange>();
    m.set(e.variant, e);
    byProbe.set(e.probeId, m);
  }
  const text = (e: Exchange | undefined, side: 'base' | 'delivered') =>
    e && e[side].status === 'ok' ? (e[side].text ?? '') : null;
  const confirmations = opts.hypotheses.map((h, k) => {
    const t = ts[k]!;
    let hitsDelivered = 0;
    let hitsBase = 0;
    let hitsWithout = 0;
    let b = 0;
    let c = 0;
    let n = 0;
    // A prefilled reply continues the prefill's last word ("C" + "onfirmed …"): the signature's words are read
    // whole, as the target they were taken from shows them.
    const where = h.feature.where;
    const lead = where === 'opening' || where === 'ending' ? trailingWord(h.feature.text) : '';
    const continued = (x: string | null) => (x === null ? null : lead + x);
    for (const m of byProbe.values()) {
      const clean = m.get('clean');
      const v = m.get(t.id);
      const [dv, bv, dc, bc] = [
        continued(text(v, 'delivered')),
        continued(text(v, 'base')),
        text(clean, 'delivered'),
        text(clean, 'base'),
      ];
      if (dv === null || bv === null || dc === null || bc === null) continue;
      n++;
      const hd = shows(h.signature, dv, dc);
      const hb = shows(h.signature, bv, bc);
      if (hd) hitsDelivered++;
      if (hb) hitsBase++;
      if (shows(h.signature, dc, bc)) hitsWithout++;
      if (hd && !hb) b++;
      else if (hb && !hd) c++;
    }
    return {
      variant: t.id,
      transformation: t,
      hitsDelivered,
      hitsBase,
      hitsWithout,
      n,
      pValue: mcnemarExact(b, c),
    };
  });
  // Each exchange is two chats (and two scoring calls, not counted as requests).
  return { confirmations, requests: 2 * run.exchanges, exchanges };
}

/** The prompt with the reply prefilled: the base's clean reply to it, a space, then the ending's opening. */
function endingPrefill(clean: readonly ChatMessage[], body: string | null, opening: string): ChatMessage[] {
  return [...clean, { role: 'assistant', content: (endingBody(body) ?? '') + opening }];
}
