import type { LocalEngine, ScoredToken } from '../local/index.ts';
import {
  checkTokenIds,
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
import type { CompletionBody } from './schemas.ts';

interface Prompt {
  text: string;
  ids: number[];
}

function prompts(engine: LocalEngine, p: CompletionBody['prompt']): Prompt[] {
  const fromIds = (ids: number[]): Prompt => {
    checkTokenIds(engine, ids, 'prompt');
    return { text: engine.detokenize(ids), ids };
  };
  if (typeof p === 'string') return [{ text: p, ids: engine.tokenize(p) }];
  if (p.every((x) => typeof x === 'string'))
    return (p as string[]).map((t) => ({ text: t, ids: engine.tokenize(t) }));
  if (p.every((x) => typeof x === 'number')) return [fromIds(p as number[])];
  return (p as number[][]).map(fromIds);
}

/** OpenAI completions logprobs: tokens, token_logprobs, top_logprobs (dicts), text_offset. */
function logprobsJson(engine: LocalEngine, ids: number[], entries: (ScoredToken | null)[], k: number) {
  const offsets: number[] = [];
  for (let i = 0; i < ids.length; i++) offsets.push(engine.detokenize(ids.slice(0, i)).length);
  return {
    tokens: ids.map((id) => engine.tokenizer.tokenText(id)),
    token_logprobs: entries.map((t) => (t ? clampLp(t.logprob) : null)),
    top_logprobs: entries.map((t) => {
      if (!t) return null;
      const top: Record<string, number> = {};
      for (const a of t.top.slice(0, k)) top[engine.tokenizer.tokenText(a.id)] = clampLp(a.logprob);
      top[engine.tokenizer.tokenText(t.id)] = clampLp(t.logprob);
      return top;
    }),
    text_offset: offsets,
  };
}

export async function handleCompletions(body: CompletionBody, ctx: HandlerContext): Promise<void> {
  const { engine } = ctx.model;
  if (body.stream && body.prompt_logprobs != null) {
    throw new HttpError(400, 'prompt_logprobs is not available when stream is true', 'prompt_logprobs');
  }
  const list = prompts(engine, body.prompt);
  const requested = body.max_tokens ?? undefined;
  const budgets = list.map((p) => tokenBudget(engine, p.ids.length, requested, 16));
  const k = body.logprobs ?? undefined;
  const echoK = body.echo && k !== undefined ? k : undefined;
  const needPrompt =
    body.prompt_logprobs != null || echoK !== undefined
      ? Math.max(body.prompt_logprobs ?? 0, echoK ?? 0)
      : undefined;
  const id = requestId('cmpl');
  const created = unixNow();
  const n = body.n;
  const end = ctx.metrics.start(ctx.model.id);
  const sse = body.stream ? new SseWriter(ctx.res) : undefined;
  const chunk = (index: number, text: string, extra: Record<string, unknown> = {}) =>
    sse?.send({
      id,
      object: 'text_completion',
      created,
      model: ctx.model.id,
      choices: [{ index, text, logprobs: null, finish_reason: null, stop_reason: null, ...extra }],
    });
  try {
    if (body.echo) {
      list.forEach((p, i) => {
        for (let j = 0; j < n; j++) chunk(i * n + j, p.text);
      });
    }
    const results: Finished[] = await Promise.all(
      list.map((p, i) =>
        engine.generate({
          ...samplingOptions(body),
          promptIds: p.ids,
          maxTokens: budgets[i],
          logprobs: k,
          promptLogprobs: needPrompt ?? undefined,
          signal: ctx.signal,
          onDelta: sse
            ? (j, delta, done) => {
                const lp =
                  k !== undefined && delta.tokens.length
                    ? logprobsJson(
                        engine,
                        delta.tokens.map((t) => t.id),
                        delta.tokens,
                        k,
                      )
                    : null;
                if (delta.text || lp) chunk(i * n + j, delta.text, { logprobs: lp });
                if (done)
                  chunk(i * n + j, '', { finish_reason: done.finishReason, stop_reason: done.stopReason });
              }
            : undefined,
        }),
      ),
    );
    end(outcome(results));
    if (sse) {
      if (body.stream_options?.include_usage) {
        sse.send({
          id,
          object: 'text_completion',
          created,
          model: ctx.model.id,
          choices: [],
          usage: usageJson(results),
        });
      }
      sse.done();
      return;
    }
    const choices = results.flatMap((r, i) => {
      const p = list[i]!;
      const promptLogprobs = promptLogprobsJson(engine, r.promptLogprobs, body.prompt_logprobs ?? 0);
      return r.samples.map((s, j) => {
        const ids = [...(body.echo ? p.ids : []), ...s.tokens.map((t) => t.id)];
        const entries = [...(body.echo ? (r.promptLogprobs ?? []) : []), ...s.tokens];
        return {
          index: i * n + j,
          text: (body.echo ? p.text : '') + s.text,
          logprobs: k !== undefined ? logprobsJson(engine, ids, entries, k) : null,
          finish_reason: s.finishReason,
          stop_reason: s.stopReason,
          prompt_logprobs: body.prompt_logprobs != null ? (promptLogprobs ?? null) : null,
        };
      });
    });
    sendJson(ctx.res, 200, {
      id,
      object: 'text_completion',
      created,
      model: ctx.model.id,
      choices,
      usage: usageJson(results),
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
