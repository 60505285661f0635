import type { Completion, FinishReason, SamplingParams, TokenLogprob } from '../types.ts';
import { HttpEndpointError } from './errors.ts';
import { splitReasoning } from './reasoning.ts';
import type { ChatResponse, CompletionResponse } from './schemas.ts';

/**
 * vLLM clamps −inf logprobs to −9999.0. probate keeps that floor everywhere (values at or below it, and
 * null/non-finite ones, become exactly LOGPROB_FLOOR) so sums stay finite and JSON-serialisable; a token
 * at the floor means "impossible under this model".
 */
export const LOGPROB_FLOOR = -9999;

export function clampLogprob(value: number | null | undefined): number {
  if (value === null || value === undefined || !Number.isFinite(value) || value <= LOGPROB_FLOOR) {
    return LOGPROB_FLOOR;
  }
  return value;
}

export function finishReason(reason: string | null | undefined): FinishReason {
  return reason === 'length' ? 'length' : 'stop';
}

/** Sampling fields common to /v1/completions and /v1/chat/completions. */
export function samplingFields(p: SamplingParams): Record<string, unknown> {
  return {
    max_tokens: p.maxTokens,
    temperature: p.temperature,
    top_p: p.topP,
    top_k: p.topK,
    seed: p.seed,
    n: p.n ?? 1,
    stop: p.stop,
  };
}

function checkCount<T extends { index: number }>(choices: T[], n: number): T[] {
  const sorted = [...choices].sort((a, b) => a.index - b.index);
  if (sorted.length !== n) {
    throw new HttpEndpointError('invalid_response', `expected ${n} choices, got ${sorted.length}`);
  }
  return sorted;
}

/**
 * Per-sample usage: the server reports totals for the whole request, so with n > 1 a sample's completion
 * tokens come from its logprobs when present, else the even share of the total.
 */
function perSampleTokens(total: number, n: number, own: number | undefined): number {
  if (n === 1) return total;
  return own ?? Math.round(total / n);
}

type ChatChoice = {
  index: number;
  content: string;
  reasoning?: string | null;
  reasoning_content?: string | null;
  finish_reason?: string | null;
  logprobs?: Array<{
    token: string;
    logprob: number;
    bytes?: number[] | null;
    top_logprobs?: Array<{ token: string; logprob: number }> | null;
  }> | null;
};

export function chatChoicesToCompletions(
  choices: ChatChoice[],
  usage: { prompt_tokens: number; completion_tokens?: number | null } | null | undefined,
  n: number,
): Completion[] {
  return checkCount(choices, n).map((c) => {
    const { text, reasoning } = splitReasoning(c.content, c);
    const logprobs: TokenLogprob[] | undefined = c.logprobs?.map((t) => ({
      token: t.token,
      bytes: t.bytes ?? undefined,
      logprob: clampLogprob(t.logprob),
      top: t.top_logprobs?.map((a) => ({ token: a.token, logprob: clampLogprob(a.logprob) })),
    }));
    return {
      text,
      reasoning,
      finishReason: finishReason(c.finish_reason),
      logprobs,
      usage: {
        promptTokens: usage?.prompt_tokens ?? 0,
        completionTokens: perSampleTokens(usage?.completion_tokens ?? 0, n, logprobs?.length),
      },
    };
  });
}

export function chatResponseToCompletions(res: ChatResponse, n: number): Completion[] {
  return chatChoicesToCompletions(
    res.choices.map((c) => ({
      index: c.index,
      content: c.message.content ?? '',
      reasoning: c.message.reasoning,
      reasoning_content: c.message.reasoning_content,
      finish_reason: c.finish_reason,
      logprobs: c.logprobs?.content,
    })),
    res.usage,
    n,
  );
}

export function completionResponseToCompletions(res: CompletionResponse, n: number): Completion[] {
  return checkCount(res.choices, n).map((c) => {
    const lp = c.logprobs;
    const logprobs: TokenLogprob[] | undefined = lp
      ? lp.tokens.map((token, i) => ({
          token,
          logprob: clampLogprob(lp.token_logprobs[i]),
          top: lp.top_logprobs?.[i]
            ? Object.entries(lp.top_logprobs[i]!).map(([t, v]) => ({ token: t, logprob: clampLogprob(v) }))
            : undefined,
        }))
      : undefined;
    return {
      text: c.text,
      finishReason: finishReason(c.finish_reason),
      logprobs,
      usage: {
        promptTokens: res.usage?.prompt_tokens ?? 0,
        completionTokens: perSampleTokens(res.usage?.completion_tokens ?? 0, n, logprobs?.length),
      },
    };
  });
}
