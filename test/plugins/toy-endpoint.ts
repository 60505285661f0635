import { z } from 'zod';
import { doctorByOpening, type EndpointKindDef } from '../../src/endpoints/kinds/types.ts';
import { ToyModel } from '../../src/testing/toy-model.ts';
import { TOY_RULES } from '../../src/testing/toy-zoo.ts';

interface ToyRef {
  kind: 'toy';
  organism: string;
  ref: string;
}

/** A toy endpoint kind, as a plugin author writes one (docs/EXTENDING.md): one file, one table entry. */
export const toyEndpointKind: EndpointKindDef<ToyRef> = {
  prefix: 'toy',
  form: 'toy:ORGANISM',
  split: (rest) => ({ organism: rest }),
  fields: z.object({
    organism: z
      .string()
      .refine((name) => name in TOY_RULES, 'expected a toy organism (src/testing/toy-zoo.ts)'),
  }),
  redact: (f) => `toy:${f.organism}`,
  open: async (ref) => new ToyModel(ref.organism, TOY_RULES[ref.organism]),
  doctor(ref, ctx) {
    return doctorByOpening(() => toyEndpointKind.open(ref, ctx));
  },
};
