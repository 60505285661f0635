import { z } from 'zod';

/**
 * zod schemas for vLLM's OpenAI-compatible responses. All objects are loose: vLLM dumps whole models with
 * extra null fields that change between versions; only what probate reads is checked.
 */

const logprobNumber = z.number().nullable();

export const usageSchema = z
  .looseObject({ prompt_tokens: z.number().int(), completion_tokens: z.number().int().nullish() })
  .nullish();

const finishReason = z.string().nullish();

export const completionLogprobsSchema = z
  .looseObject({
    tokens: z.array(z.string()),
    token_logprobs: z.array(logprobNumber),
    top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).nullish(),
  })
  .nullish();

/** `prompt_logprobs`: one entry per prompt token, the first null; keys are token ids as strings. */
export const promptLogprobsSchema = z
  .array(
    z
      .record(
        z.string(),
        z.looseObject({
          logprob: z.number(),
          rank: z.number().nullish(),
          decoded_token: z.string().nullish(),
        }),
      )
      .nullable(),
  )
  .nullish();

export const completionResponseSchema = z.looseObject({
  choices: z.array(
    z.looseObject({
      index: z.number().int(),
      text: z.string(),
      finish_reason: finishReason,
      logprobs: completionLogprobsSchema,
      prompt_logprobs: promptLogprobsSchema,
    }),
  ),
  usage: usageSchema,
});
export type CompletionResponse = z.infer<typeof completionResponseSchema>;

/** A teacher-forcing reply as `readScoreReply` gives it (src/endpoints/http/prompt-logprobs.ts). */
export const scoreReplySchema = z.object({
  reply: completionResponseSchema,
  entries: z.number().int().optional(),
  continuation: z.array(z.object({ token: z.string(), logprob: z.number() })).optional(),
  missing: z.number().int().optional(),
});

const chatTokenLogprob = z.looseObject({
  token: z.string(),
  logprob: z.number(),
  bytes: z.array(z.number()).nullish(),
  top_logprobs: z.array(z.looseObject({ token: z.string(), logprob: z.number() })).nullish(),
});

export const chatResponseSchema = z.looseObject({
  choices: z.array(
    z.looseObject({
      index: z.number().int(),
      message: z.looseObject({
        content: z.string().nullish(),
        reasoning: z.string().nullish(),
        reasoning_content: z.string().nullish(),
      }),
      finish_reason: finishReason,
      logprobs: z.looseObject({ content: z.array(chatTokenLogprob).nullish() }).nullish(),
    }),
  ),
  usage: usageSchema,
});
export type ChatResponse = z.infer<typeof chatResponseSchema>;

/** One SSE chunk of a streamed chat completion. */
export const chatChunkSchema = z.looseObject({
  choices: z.array(
    z.looseObject({
      index: z.number().int(),
      delta: z
        .looseObject({
          content: z.string().nullish(),
          reasoning: z.string().nullish(),
          reasoning_content: z.string().nullish(),
        })
        .nullish(),
      finish_reason: finishReason,
      logprobs: z.looseObject({ content: z.array(chatTokenLogprob).nullish() }).nullish(),
    }),
  ),
  usage: usageSchema,
});
export const chatStreamSchema = z.array(chatChunkSchema);

export const completionChunkSchema = z.looseObject({
  choices: z.array(z.looseObject({ index: z.number().int(), text: z.string(), finish_reason: finishReason })),
  usage: usageSchema,
});
export const completionStreamSchema = z.array(completionChunkSchema);

export const modelsSchema = z.looseObject({
  data: z.array(
    z.looseObject({
      id: z.string(),
      root: z.string().nullish(),
      parent: z.string().nullish(),
      max_model_len: z.number().int().nullish(),
    }),
  ),
});
export type ModelsResponse = z.infer<typeof modelsSchema>;

export const versionSchema = z.looseObject({ version: z.string() });

export const tokenizeSchema = z.looseObject({
  tokens: z.array(z.number().int()),
  count: z.number().int().nullish(),
  max_model_len: z.number().int().nullish(),
});
