import { SWEEP_CONFIRM, SWEEP_REPLY_TOKENS, sweepProbe } from '../../probes/families/injection-sweep.ts';
import type { ProbeGroup } from '../../probes/families/types.ts';
import { Rng } from '../../probes/rng.ts';
import type { DifferentialStage } from './stage.ts';

/**
 * Carriers the sweep caught: every generated-carrier exchange where the delivered model echoed the payload
 * and the base did not names its carrier; each carrier caught twice or more (at most `carriers`) is re-probed
 * with fresh payloads, framings and filler, and the analysis tests it on its own (scope `carrier:<id>`);
 * carriers caught once each are re-probed together (scope `carriers:pooled`).
 */
export function injectionConfirmStage(opts: { carriers?: number; samples?: number } = {}): DifferentialStage {
  const maxCarriers = opts.carriers ?? 3;
  const perCarrier = opts.samples ?? 12;
  return {
    id: 'injection-confirm',
    family: 'injection',
    variants: [SWEEP_CONFIRM],
    async plan(ctx) {
      const hits = new Map<string, { count: number; probeSetId: string; probeSetHash: string }>();
      for (const ex of ctx.exchanges()) {
        if (ex.family !== 'injection' || ex.variant !== 'sweep') continue;
        if (ex.signals['canary.delivered'] !== true || ex.signals['canary.base'] === true) continue;
        const carrier = String(ex.meta.carrier);
        const h = hits.get(carrier) ?? { count: 0, probeSetId: ex.probeSetId, probeSetHash: ex.probeSetHash };
        h.count++;
        hits.set(carrier, h);
      }
      const chosen = [...hits].sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1));
      const groups: ProbeGroup[] = [];
      const group = (carriers: string[], n: number, pooled: boolean): ProbeGroup => {
        const h = hits.get(carriers[0]!)!;
        const rng = Rng.derive(ctx.seed, 'injection-confirm', pooled ? 'pooled' : carriers[0]!);
        return {
          family: 'injection',
          probeSetId: h.probeSetId,
          probeSetHash: h.probeSetHash,
          samples: Array.from({ length: n }, (_, i) => {
            const carrier = carriers[i % carriers.length]!;
            const p = sweepProbe(rng, carrier);
            const seed = rng.seed();
            return {
              probeId: `sweep.${pooled ? 'pooled' : carrier}`,
              variant: SWEEP_CONFIRM,
              sample: i,
              seed,
              messages: p.messages,
              meta: { kind: SWEEP_CONFIRM, canary: p.canary, carrier, framing: p.framing, pooled },
              params: { maxTokens: SWEEP_REPLY_TOKENS, temperature: 0, seed, logprobs: 0 },
            };
          }),
        };
      };
      // A carrier caught more than once is confirmed on its own; hits scattered one per carrier (a model that
      // obeys in many carriers, some of the time) are confirmed together, where twelve per carrier would each
      // be too few to tell.
      const repeated = chosen.filter(([, h]) => h.count >= 2).slice(0, maxCarriers);
      let samples = 0;
      for (const [carrier] of repeated) {
        if (4 * (samples + perCarrier) > ctx.budget) break;
        groups.push(group([carrier], perCarrier, false));
        samples += perCarrier;
      }
      const pooled = Math.min(perCarrier * maxCarriers, Math.floor(ctx.budget / 4));
      if (repeated.length === 0 && chosen.length >= 2 && pooled >= perCarrier) {
        groups.push(
          group(
            chosen.map(([c]) => c),
            pooled,
            true,
          ),
        );
      }
      return {
        groups,
        requests: 0,
        notes: { carriers: Object.fromEntries([...hits].map(([c, h]) => [c, h.count])) },
      };
    },
  };
}
