import { z } from 'zod';
import type { ChatMessage } from '../types.ts';

/** The most alternatives per token a request may ask for (vLLM's default --max-logprobs). */
export const MAX_LOGPROBS = 20;

const stop = z.union([z.string(), z.array(z.string())]).nullish();

/** Sampling fields shared by /v1/completions and /v1/chat/completions (vLLM's names and ranges). */
const sampling = {
  model: z.string().optional(),
  n: z.number().int().min(1).max(128).default(1),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  top_k: z.number().int().min(-1).nullish(),
  seed: z.number().int().nullish(),
  stop,
  stop_token_ids: z.array(z.number().int().nonnegative()).nullish(),
  ignore_eos: z.boolean().default(false),
  stream: z.boolean().default(false),
  stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullish(),
};

const promptLogprobs = z.number().int().min(0).max(MAX_LOGPROBS).nullish();

export const completionRequest = z
  .object({
    ...sampling,
    prompt: z.union([
      z.string(),
      z.array(z.string()).min(1),
      z.array(z.number().int().nonnegative()).min(1),
      z.array(z.array(z.number().int().nonnegative()).min(1)).min(1),
    ]),
    max_tokens: z.number().int().min(0).nullish(),
    logprobs: z.number().int().min(0).max(MAX_LOGPROBS).nullish(),
    echo: z.boolean().default(false),
    prompt_logprobs: promptLogprobs,
  })
  .loose();
export type CompletionBody = z.infer<typeof completionRequest>;

const textPart = z.object({ type: z.literal('text'), text: z.string() }).loose();

const message = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant']),
    content: z.union([z.string(), z.array(textPart), z.null()]).default(''),
  })
  .loose();

const jsonSchema = z.record(z.string(), z.unknown());

export const chatRequest = z
  .object({
    ...sampling,
    messages: z.array(message).min(1),
    max_completion_tokens: z.number().int().min(1).nullish(),
    max_tokens: z.number().int().min(1).nullish(),
    logprobs: z.boolean().default(false),
    top_logprobs: z.number().int().min(0).max(MAX_LOGPROBS).nullish(),
    response_format: z
      .discriminatedUnion('type', [
        z.object({ type: z.literal('text') }).loose(),
        z.object({ type: z.literal('json_object') }).loose(),
        z
          .object({
            type: z.literal('json_schema'),
            json_schema: z.object({ name: z.string().optional(), schema: jsonSchema.optional() }).loose(),
          })
          .loose(),
      ])
      .nullish(),
    structured_outputs: z
      .object({
        json: z.union([jsonSchema, z.string()]).nullish(),
        choice: z.array(z.string()).min(1).nullish(),
        regex: z.string().nullish(),
        grammar: z.string().nullish(),
      })
      .loose()
      .nullish(),
    chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
    add_generation_prompt: z.boolean().default(true),
    continue_final_message: z.boolean().default(false),
    include_reasoning: z.boolean().default(true),
    prompt_logprobs: promptLogprobs,
  })
  .loose();
export type ChatBody = z.infer<typeof chatRequest>;

export const tokenizePromptRequest = z
  .object({
    model: z.string().optional(),
    prompt: z.string(),
    add_special_tokens: z.boolean().default(true),
    return_token_strs: z.boolean().default(false),
  })
  .loose();

export const tokenizeChatRequest = z
  .object({
    model: z.string().optional(),
    messages: z.array(message).min(1),
    add_special_tokens: z.boolean().default(false),
    add_generation_prompt: z.boolean().default(true),
    continue_final_message: z.boolean().default(false),
    chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
    return_token_strs: z.boolean().default(false),
  })
  .loose();

export const detokenizeRequest = z
  .object({ model: z.string().optional(), tokens: z.array(z.number().int().nonnegative()) })
  .loose();

/** A request message as the engine's ChatMessage: text parts joined (as vLLM does for text-only models). */
export function toChatMessage(m: z.infer<typeof message>): ChatMessage {
  const content =
    m.content === null
      ? ''
      : typeof m.content === 'string'
        ? m.content
        : m.content.map((p) => p.text).join('');
  return { role: m.role === 'developer' ? 'system' : m.role, content };
}
