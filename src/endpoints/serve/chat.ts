import { splitReasoning } from '../http/reasoning.ts';
import type { GenerateOptions, LocalEngine, ScoredToken } from '../local/index.ts';
import { withoutPartial } from '../local/text.ts';
import {
  clampLp,
  type Finished,
  type HandlerContext,
  outcome,
  promptLogprobsJson,
  samplingOptions,
  toHttpError,
  tokenBudget,
  usageJson,
} from './context.ts';
import { HttpError, requestId, SseWriter, sendJson, unixNow } from './http.ts';
import { type ChatBody, toChatMessage } from './schemas.ts';

const TAGS = ['<think>', '</think>'];

/** What the request asks the output to be: JSON under a schema, or one of given strings. */
function structured(body: ChatBody): Pick<GenerateOptions, 'jsonSchema' | 'choice'> {
  const so = body.structured_outputs;
  if (so) {
    if (so.regex != null || so.grammar != null) {
      throw new HttpError(
        400,
        'structured_outputs: regex and grammar are not supported by probate serve',
        'structured_outputs',
      );
    }
    if (so.choice) return { choice: so.choice };
    if (so.json != null) {
      if (typeof so.json !== 'string') return { jsonSchema: so.json };
      try {
        return { jsonSchema: JSON.parse(so.json) as Record<string, unknown> };
      } catch {
        throw new HttpError(400, 'structured_outputs.json: not valid JSON', 'structured_outputs.json');
      }
    }
  }
  const rf = body.response_format;
  if (rf?.type === 'json_object') return { jsonSchema: { type: 'object' } };
  if (rf?.type === 'json_schema')
    return { jsonSchema: (rf.json_schema.schema as Record<string, unknown>) ?? {} };
  return {};
}

function chatLogprobs(engine: LocalEngine, tokens: ScoredToken[], k: number) {
  const entry = (id: number, logprob: number) => ({
    token: engine.tokenizer.tokenText(id),
    logprob: clampLp(logprob),
    bytes: [...engine.tokenizer.tokenBytes(id)],
  });
  return {
    content: tokens.map((t) => ({
      ...entry(t.id, t.logprob),
      top_logprobs: t.top.slice(0, k).map((a) => entry(a.id, a.logprob)),
    })),
  };
}

export async function handleChat(body: ChatBody, ctx: HandlerContext): Promise<void> {
  const { engine } = ctx.model;
  if (body.top_logprobs != null && !body.logprobs) {
    throw new HttpError(400, 'when using `top_logprobs`, `logprobs` must be set to true', 'top_logprobs');
  }
  if (body.continue_final_message && body.add_generation_prompt) {
    throw new HttpError(
      400,
      'Cannot set both `continue_final_message` and `add_generation_prompt` to True.',
      'continue_final_message',
    );
  }
  if (body.stream && body.prompt_logprobs != null) {
    throw new HttpError(400, 'prompt_logprobs is not available when stream is true', 'prompt_logprobs');
  }
  const messages = body.messages.map(toChatMessage);
  const prompt = engine.renderChat(messages, {
    addGenerationPrompt: body.add_generation_prompt,
    continueFinalMessage: body.continue_final_message,
    kwargs: body.chat_template_kwargs ?? undefined,
  });
  const promptIds = engine.tokenize(prompt, false);
  const maxTokens = tokenBudget(
    engine,
    promptIds.length,
    body.max_completion_tokens ?? body.max_tokens ?? undefined,
    engine.maxModelLen,
  );
  const k = body.logprobs ? (body.top_logprobs ?? 0) : undefined;
  const think = ctx.reasoningParser === 'think';
  const id = requestId('chatcmpl');
  const created = unixNow();
  const end = ctx.metrics.start(ctx.model.id);
  const sse = body.stream ? new SseWriter(ctx.res) : undefined;
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    sse?.send({ id, object: 'chat.completion.chunk', created, model: ctx.model.id, choices, ...extra });
  const sent = Array.from({ length: body.n }, () => ({ text: '', content: 0, reasoning: 0 }));
  /** Streams the growth of each part; a reasoning parser holds back a tag still being typed. */
  const emit = (
    j: number,
    text: string,
    final: boolean,
    tokens: ScoredToken[],
    done?: { finishReason: string; stopReason: unknown },
  ) => {
    const s = sent[j]!;
    s.text += text;
    const parts = think ? splitReasoning(final ? s.text : withoutPartial(s.text, TAGS)) : { text: s.text };
    const delta: Record<string, string> = {};
    const content = parts.text.slice(s.content);
    const reasoning = (parts.reasoning ?? '').slice(s.reasoning);
    if (content) delta.content = content;
    if (reasoning && body.include_reasoning) delta.reasoning = reasoning;
    s.content = Math.max(s.content, parts.text.length);
    s.reasoning = Math.max(s.reasoning, parts.reasoning?.length ?? 0);
    const logprobs = k !== undefined && tokens.length ? chatLogprobs(engine, tokens, k) : null;
    if (Object.keys(delta).length || logprobs || done) {
      chunk([
        {
          index: j,
          delta,
          logprobs,
          finish_reason: done?.finishReason ?? null,
          stop_reason: done ? done.stopReason : null,
        },
      ]);
    }
  };
  try {
    if (sse)
      chunk(
        sent.map((_, j) => ({
          index: j,
          delta: { role: 'assistant', content: '' },
          logprobs: null,
          finish_reason: null,
        })),
      );
    const result: Finished = await engine.generate({
      ...samplingOptions(body),
      ...structured(body),
      promptIds,
      maxTokens,
      logprobs: k,
      promptLogprobs: body.prompt_logprobs ?? undefined,
      signal: ctx.signal,
      onDelta: sse ? (j, delta, done) => emit(j, delta.text, Boolean(done), delta.tokens, done) : undefined,
    });
    end(outcome([result]));
    if (sse) {
      if (body.stream_options?.include_usage) chunk([], { usage: usageJson([result]) });
      sse.done();
      return;
    }
    const choices = result.samples.map((s, j) => {
      const parts = think ? splitReasoning(s.text) : { text: s.text, reasoning: undefined };
      return {
        index: j,
        message: {
          role: 'assistant',
          content: parts.text,
          reasoning: think && body.include_reasoning ? (parts.reasoning ?? null) : null,
          tool_calls: [],
        },
        logprobs: k !== undefined ? chatLogprobs(engine, s.tokens, k) : null,
        finish_reason: s.finishReason,
        stop_reason: s.stopReason,
      };
    });
    sendJson(ctx.res, 200, {
      id,
      object: 'chat.completion',
      created,
      model: ctx.model.id,
      choices,
      usage: usageJson([result]),
      prompt_logprobs:
        body.prompt_logprobs != null
          ? (promptLogprobsJson(engine, result.promptLogprobs, body.prompt_logprobs ?? 0) ?? null)
          : null,
      system_fingerprint: null,
      service_tier: null,
      kv_transfer_params: null,
    });
  } catch (err) {
    end();
    if (!sse) throw err;
    sse.fail(toHttpError(err));
  }
}
