import { z } from 'zod';
import { UserError } from '../../util/errors.ts';
import { HfEndpoint } from '../http/hf.ts';
import { doctorByOpening, type EndpointKindDef, modelName } from './types.ts';

export interface HfRef {
  kind: 'hf';
  model: string;
  ref: string;
}

/** hf: falls back to the conventional HF_TOKEN variable when no --api-key-env is named. */
const HF_DEFAULT_ENV = 'HF_TOKEN';

/** `hf:MODEL`: Hugging Face Inference Providers. */
export const hfKind: EndpointKindDef<HfRef> = {
  prefix: 'hf',
  form: 'hf:MODEL',
  split: (rest) => ({ model: rest }),
  fields: z.object({ model: modelName('hf:') }),
  redact: (f) => `hf:${f.model}`,
  async open(ref, ctx) {
    const apiKey = ctx.apiKey ?? (ctx.env[HF_DEFAULT_ENV] || undefined);
    // Without a token every hf: request is a 401: say so now, not as a run of failed exchanges.
    if (!apiKey)
      throw new UserError(
        `${ref.ref}: no API key: set ${HF_DEFAULT_ENV} or name the variable holding it with --api-key-env`,
      );
    return new HfEndpoint({
      kind: 'hf',
      model: ref.model,
      ref: ref.ref,
      accessToken: apiKey,
      observer: ctx.observer,
      concurrency: ctx.concurrency,
      retry: ctx.retry,
      timeouts: ctx.timeouts,
      maxReplyBytes: ctx.maxReplyBytes,
    });
  },
  doctor(ref, ctx) {
    return doctorByOpening(() => hfKind.open(ref, { ...ctx, fingerprint: false }));
  },
};
