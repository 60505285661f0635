import { z } from 'zod';
import { doctorByOpening, type EndpointKindDef } from './types.ts';

export interface LocalRef {
  kind: 'local';
  dir: string;
  ref: string;
}

/** `local:DIR`: the embedded engine over an organism folder. */
export const localKind: EndpointKindDef<LocalRef> = {
  prefix: 'local',
  form: 'local:DIR',
  split: (rest) => ({ dir: rest }),
  fields: z.object({ dir: z.string().min(1, 'expected a directory after local:') }),
  redact: (f) => `local:${f.dir}`,
  async open(ref, ctx) {
    // Loaded on demand: onnxruntime is heavy and HTTP-only runs never need it.
    const { openLocalEndpoint } = await import('../local/index.ts');
    return openLocalEndpoint(ref.dir, { threads: ctx.threads });
  },
  doctor(ref, ctx) {
    return doctorByOpening(() => localKind.open(ref, { ...ctx, fingerprint: false }));
  },
};
