import { z } from 'zod';
import { HfEndpoint } from '../http/hf.ts';
import { redactUrl } from '../redact.ts';
import { type EndpointKindDef, httpUrl, modelName, splitModel } from './types.ts';
import { doctorVllmServer } from './vllm.ts';

export interface HfEndpointRef {
  kind: 'hf-endpoint';
  url: string;
  model: string;
  ref: string;
}

/** `hf-endpoint:URL#MODEL`: a dedicated (TGI/vLLM) endpoint spoken to with @huggingface/inference. */
export const hfEndpointKind: EndpointKindDef<HfEndpointRef> = {
  prefix: 'hf-endpoint',
  form: 'hf-endpoint:URL#MODEL',
  split(rest) {
    const [url, model] = splitModel(rest);
    return { url, model };
  },
  fields: z.object({ url: httpUrl, model: modelName('#') }),
  redact: (f) => `hf-endpoint:${redactUrl(f.url)}#${f.model}`,
  async open(ref, ctx) {
    return new HfEndpoint({
      kind: 'hf-endpoint',
      model: ref.model,
      endpointUrl: ref.url,
      ref: ref.ref,
      accessToken: ctx.apiKey,
      observer: ctx.observer,
      concurrency: ctx.concurrency,
      retry: ctx.retry,
      timeouts: ctx.timeouts,
      maxReplyBytes: ctx.maxReplyBytes,
    });
  },
  // Dedicated endpoints run TGI or vLLM: their OpenAI-compatible API tells the doctor more than the client.
  doctor: (ref, ctx) => doctorVllmServer([ref.url], ref.model, ref.ref, 'hf-endpoint', ctx),
};
