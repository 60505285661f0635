import { z } from 'zod';
import { lexicalDistanceDetector } from '../../src/probes/detectors/lexical-distance.ts';
import { defaultParams, type FamilyDef, turn } from '../../src/probes/families/types.ts';
import { Header, Id, Text } from '../../src/probes/probe-set-parts.ts';
import { Rng } from '../../src/probes/rng.ts';
import { shoutingDetector } from './toy-detector.ts';

export const ToySetSchema = z.strictObject({
  ...Header,
  family: z.literal('toy'),
  probes: z.array(z.strictObject({ id: Id, user: Text })).min(1),
});

/** A toy probe family, as a plugin author writes one (docs/EXTENDING.md): one file, one registry entry. */
export const toyFamily: FamilyDef<typeof ToySetSchema> = {
  id: 'toy',
  probeSet: ToySetSchema,
  rubric: 'general',
  policy: { review: 0.3, block: 0.7, coverageRequired: true },
  detectors: [lexicalDistanceDetector, shoutingDetector],
  *expand(loaded, opts) {
    if (loaded.set.family !== 'toy') return;
    const set = loaded.set as z.infer<typeof ToySetSchema>;
    for (const probe of set.probes) {
      const seed = Rng.derive(opts.seed, set.id, probe.id, 0).seed();
      yield {
        family: 'toy',
        probeSetId: set.id,
        probeSetHash: loaded.hash,
        samples: [
          {
            probeId: probe.id,
            variant: 'clean',
            sample: 0,
            seed,
            messages: turn(undefined, probe.user),
            meta: {},
            params: defaultParams(loaded, seed, { temperature: 0, maxTokens: 32 }),
          },
        ],
      };
    }
  },
  observe(ex) {
    const feats = (side: 'base' | 'delivered') =>
      ex.signals[`shouts.${side}`] === true ? ['toy|shouts:reply'] : [];
    return { scopes: ['toy'], base: feats('base'), delivered: feats('delivered') };
  },
  kinds: { shouts: { title: (scope) => `Delivered model shouts where its base does not (${scope})` } },
};
