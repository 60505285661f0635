import type { ServerResponse } from 'node:http';
import type { GenerateOptions, GenerateResult, LocalEngine, ScoredToken } from '../local/index.ts';
import { EndpointError } from '../types.ts';
import { HttpError } from './http.ts';
import type { ServerMetrics } from './metrics.ts';

export interface ServedModel {
  /** The name clients send as `model`. */
  id: string;
  /** The model folder (absolute). */
  root: string;
  engine: LocalEngine;
  created: number;
}

export interface HandlerContext {
  model: ServedModel;
  res: ServerResponse;
  metrics: ServerMetrics;
  reasoningParser?: 'think';
  /** Aborted when the client goes away mid-stream. */
  signal: AbortSignal;
}

/** Sampling options common to both generation endpoints, in engine terms. */
export function samplingOptions(body: {
  n: number;
  temperature?: number | null;
  top_p?: number | null;
  top_k?: number | null;
  seed?: number | null;
  stop?: string | string[] | null;
  stop_token_ids?: number[] | null;
  ignore_eos: boolean;
}): Omit<GenerateOptions, 'promptIds'> {
  return {
    n: body.n,
    temperature: body.temperature ?? undefined,
    topP: body.top_p ?? undefined,
    topK: body.top_k !== null && body.top_k !== undefined && body.top_k > 0 ? body.top_k : undefined,
    seed: body.seed ?? undefined,
    stop: typeof body.stop === 'string' ? [body.stop] : (body.stop ?? undefined),
    stopTokenIds: body.stop_token_ids ?? undefined,
    ignoreEos: body.ignore_eos,
  };
}

/**
 * The generation budget as vLLM checks it: a prompt that fills the context, or an explicit max_tokens that
 * does not fit after the prompt, is a 400 whose message names the maximum context length.
 */
export function tokenBudget(
  engine: LocalEngine,
  promptTokens: number,
  requested: number | undefined,
  fallback: number,
): number {
  const max = engine.maxModelLen;
  if (promptTokens === 0) throw new HttpError(400, 'the prompt is empty: nothing to condition on', 'prompt');
  if (promptTokens >= max || (requested !== undefined && promptTokens + requested > max)) {
    throw new HttpError(
      400,
      `This model's maximum context length is ${max} tokens. However, you requested ` +
        `${promptTokens + (requested ?? 0)} tokens (${promptTokens} in the messages, ${requested ?? 0} in the ` +
        'completion). Please reduce the length of the messages or completion.',
      'max_tokens',
    );
  }
  return Math.min(requested ?? fallback, max - promptTokens);
}

export function checkTokenIds(engine: LocalEngine, ids: number[], param: string): void {
  const vocab = engine.folder.vocabSize;
  const bad = ids.find((id) => id >= vocab);
  if (bad !== undefined)
    throw new HttpError(400, `token id ${bad} is out of vocabulary (size ${vocab})`, param);
}

/** Engine failures as HTTP errors: a context overflow is the client's 400, anything else a 500. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  if (err instanceof EndpointError && err.kind === 'context_length') return new HttpError(400, err.message);
  return new HttpError(500, `engine error: ${(err as Error).message.split('\n')[0]}`);
}

/** vLLM clamps -inf log-probabilities to -9999.0 so the JSON stays valid. */
export const clampLp = (lp: number): number => (Number.isFinite(lp) ? lp : -9999.0);

/** vLLM's prompt_logprobs: per prompt token, null first, then {id: {logprob, rank, decoded_token}}. */
export function promptLogprobsJson(
  engine: LocalEngine,
  entries: (ScoredToken | null)[] | undefined,
  k: number,
) {
  return entries?.map((t) => {
    if (!t) return null;
    const out: Record<string, { logprob: number; rank: number; decoded_token: string }> = {};
    const add = (id: number, logprob: number, rank: number) => {
      out[String(id)] = { logprob: clampLp(logprob), rank, decoded_token: engine.tokenizer.tokenText(id) };
    };
    add(t.id, t.logprob, t.rank);
    t.top.slice(0, k).forEach((a, i) => {
      if (!(String(a.id) in out)) add(a.id, a.logprob, i + 1);
    });
    return out;
  });
}

export type Finished = GenerateResult;

/** Metrics for a request from its engine results. */
export function outcome(results: Finished[]) {
  return {
    promptTokens: results.reduce((s, r) => s + r.promptTokens, 0),
    generationTokens: results.reduce((s, r) => s + r.samples.reduce((a, x) => a + x.generatedTokens, 0), 0),
    finished: results.flatMap((r) => r.samples.map((x) => x.finishReason)),
  };
}

export function usageJson(results: Finished[]) {
  const { promptTokens, generationTokens } = outcome(results);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: generationTokens,
    total_tokens: promptTokens + generationTokens,
    prompt_tokens_details: null,
  };
}
