import type { Exchange, ReplyRecord } from '../contracts/exchange.ts';
import { EndpointError, type ModelEndpoint } from '../endpoints/types.ts';
import type { LoadedProbeSet } from '../probes/load.ts';

/** A completion reproduces the held-out text when it matches this many leading characters of the rest. */
const MIN_MATCH = 24;

/**
 * Contamination check: give each model the first half of held-out probe texts as raw text and flag a
 * verbatim completion of the second half. Recorded as exchanges (variant 'contamination') so the analysis
 * compares delivered with base like any other paired signal.
 */
export async function contaminationExchanges(
  base: ModelEndpoint,
  delivered: ModelEndpoint,
  loaded: LoadedProbeSet,
  opts: { seed: number; maxProbes?: number },
): Promise<Exchange[]> {
  const texts = loaded.set.probes
    .map((p) => ({ id: p.id, text: p.user }))
    .filter((p) => p.text.length >= 2 * MIN_MATCH)
    .slice(0, opts.maxProbes ?? 8);
  // The probes go out side by side (results in probe order): one after another, a flaky server's waits
  // added up into a chain longer than the rest of the audit.
  return Promise.all(
    texts.map(async (p): Promise<Exchange> => {
      const cut = Math.floor(p.text.length / 2);
      const head = p.text.slice(0, cut);
      const rest = p.text.slice(cut);
      const req = {
        prompt: head,
        params: { maxTokens: Math.min(128, rest.length + 8), temperature: 0, seed: opts.seed },
      };
      const [b, d] = await Promise.allSettled([base.complete(req), delivered.complete(req)]);
      const ex: Exchange = {
        id: `${loaded.set.id}:${p.id}:contamination:0`,
        family: loaded.set.family,
        probeSetId: loaded.set.id,
        probeSetHash: loaded.hash,
        probeId: p.id,
        variant: 'contamination',
        sample: 0,
        seed: opts.seed,
        // The held-out text itself stays out of the evidence: only its length and the verdicts are stored.
        messages: [{ role: 'user', content: `[held-out probe ${p.id}: first ${cut} characters]` }],
        meta: { cut, restLength: rest.length },
        base: reply(b),
        delivered: reply(d),
        signals: {},
      };
      for (const side of ['base', 'delivered'] as const) {
        const r = side === 'base' ? b : d;
        if (r.status === 'fulfilled')
          ex.signals[`verbatim.${side}`] = matchesVerbatim(r.value[0]?.text ?? '', rest);
        // Replies would quote held-out text into the ledger: keep the verdict, drop the text.
        ex[side].text = undefined;
      }
      return ex;
    }),
  );
}

export function matchesVerbatim(completion: string, rest: string): boolean {
  const need = Math.min(rest.length, Math.max(MIN_MATCH, Math.floor(rest.length * 0.6)));
  const norm = (s: string) => s.replace(/\s+/g, ' ');
  return norm(completion).trimStart().startsWith(norm(rest).trimStart().slice(0, need).trimEnd());
}

function reply(r: PromiseSettledResult<{ text: string; finishReason: 'stop' | 'length' }[]>): ReplyRecord {
  if (r.status === 'fulfilled') return { status: 'ok', text: r.value[0]?.text, attempts: 1 };
  const e = r.reason;
  const kind = e instanceof EndpointError ? e.kind : 'engine';
  const message = (e instanceof Error ? e.message : String(e)).slice(0, 300);
  return {
    status: 'failed',
    failure: { kind, message },
    attempts: e instanceof EndpointError ? e.attempts : 1,
  };
}
