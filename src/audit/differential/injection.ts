import { SWEEP_CONFIRM, sweepProbe } from '../../probes/families/injection-sweep.ts';
import type { ProbeGroup } from '../../probes/families/types.ts';
import { Rng } from '../../probes/rng.ts';
import type { DifferentialStage } from './stage.ts';

/**
 * Carriers the sweep caught: every generated-carrier exchange where the delivered model echoed the payload
 * and the base did not names its carrier; each such carrier (at most `carriers`) is re-probed with fresh
 * payloads, framings and filler, and the analysis tests it on its own (scope `carrier:<id>`).
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
      let samples = 0;
      for (const [carrier, h] of chosen.slice(0, maxCarriers)) {
        if (4 * (samples + perCarrier) > ctx.budget) break;
        const rng = Rng.derive(ctx.seed, 'injection-confirm', carrier);
        groups.push({
          family: 'injection',
          probeSetId: h.probeSetId,
          probeSetHash: h.probeSetHash,
          samples: Array.from({ length: perCarrier }, (_, i) => {
            const p = sweepProbe(rng, carrier);
            const seed = rng.seed();
            return {
              probeId: `sweep.${carrier}`,
              variant: SWEEP_CONFIRM,
              sample: i,
              seed,
              messages: p.messages,
              meta: { kind: SWEEP_CONFIRM, canary: p.canary, carrier, framing: p.framing },
              params: { maxTokens: 80, temperature: 0, seed, logprobs: 0 },
            };
          }),
        });
        samples += perCarrier;
      }
      return {
        groups,
        requests: 0,
        notes: { carriers: Object.fromEntries([...hits].map(([c, h]) => [c, h.count])) },
      };
    },
  };
}
