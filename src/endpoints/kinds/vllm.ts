import { z } from 'zod';
import { diagnoseVllm } from '../http/doctor.ts';
import { VllmEndpoint } from '../http/vllm.ts';
import { redactUrl } from '../redact.ts';
import type { EndpointKindDef, ModelRef } from './types.ts';
import { httpUrl, modelName, splitModel } from './types.ts';

export interface VllmRef {
  kind: 'vllm';
  /** Replicas: several URLs serving one model. */
  urls: string[];
  model: string;
  ref: string;
}

export const isVllmRef = (ref: ModelRef): ref is VllmRef => ref.kind === 'vllm';

/** `vllm:URL[,URL...]#MODEL`: a vLLM(-compatible) server, or replicas of one. */
export const vllmKind: EndpointKindDef<VllmRef> = {
  prefix: 'vllm',
  form: 'vllm:URL[,URL...]#MODEL',
  split(rest) {
    const [urls, model] = splitModel(rest);
    return { urls: urls.split(',').map((u) => u.trim()), model };
  },
  fields: z.object({ urls: z.array(httpUrl).min(1), model: modelName('#') }),
  redact: (f) => `vllm:${f.urls.map(redactUrl).join(',')}#${f.model}`,
  async open(ref, ctx) {
    return new VllmEndpoint({
      urls: ref.urls,
      model: ref.model,
      ref: ref.ref,
      apiKey: ctx.apiKey,
      observer: ctx.observer,
      concurrency: ctx.concurrency,
      timeouts: ctx.timeouts,
      maxReplyBytes: ctx.maxReplyBytes,
      retry: ctx.retry,
      stream: ctx.stream,
      structuredField: ctx.structuredField,
      fingerprint: ctx.fingerprint,
    });
  },
  doctor: (ref, ctx) => doctorVllmServer(ref.urls, ref.model, ref.ref, 'vllm', ctx),
};

/**
 * Pre-flights a vLLM-compatible server through its own API (models, structured-output fields, reasoning
 * fields), which the generic doctor cannot see; two attempts per request, no fingerprint.
 */
export async function doctorVllmServer(
  urls: string[],
  model: string,
  ref: string,
  kind: 'vllm' | 'hf-endpoint',
  ctx: { apiKey?: string; timeouts?: VllmEndpointTimeouts; maxReplyBytes?: number },
) {
  const ep = new VllmEndpoint({
    urls,
    model,
    ref,
    kind,
    apiKey: ctx.apiKey,
    retry: { maxAttempts: 2 },
    timeouts: ctx.timeouts,
    maxReplyBytes: ctx.maxReplyBytes,
    fingerprint: false,
  });
  try {
    return await diagnoseVllm(ep, model);
  } finally {
    await ep.close();
  }
}

type VllmEndpointTimeouts = ConstructorParameters<typeof VllmEndpoint>[0]['timeouts'];
