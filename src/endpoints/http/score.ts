import type { ScoreRequest, ScoreResult } from '../types.ts';
import { clampLogprob } from './convert.ts';
import { HttpEndpointError } from './errors.ts';
import { readScoreReply } from './prompt-logprobs.ts';
import { type CompletionResponse, scoreReplySchema, tokenizeSchema } from './schemas.ts';
import type { HttpTransport } from './transport.ts';

/**
 * Teacher forcing on vLLM. The context and the continuation are tokenized separately through the
 * server's own `/tokenize` (a chat context with `messages` + `add_generation_prompt`, so the template and
 * the assistant opener are the model's; the continuation without special tokens), then their concatenated
 * token ids go to `/v1/completions` as `prompt` with `max_tokens: 1, prompt_logprobs: 0`. The prefix length
 * is known exactly, so no guessing where the continuation starts; the continuation is scored in its
 * standalone tokenization (which may differ from a joint one only at the seam).
 */
export async function scoreByPromptLogprobs(
  transport: HttpTransport,
  model: string,
  req: ScoreRequest,
  tokenized: TokenizeMemo,
): Promise<ScoreResult> {
  const [prefix, cont] = await Promise.all([
    typeof req.context === 'string'
      ? tokenized.get({ model, prompt: req.context, add_special_tokens: true })
      : tokenized.get({
          model,
          messages: req.context,
          add_generation_prompt: true,
          add_special_tokens: false,
        }),
    tokenized.get({ model, prompt: req.continuation, add_special_tokens: false }),
  ]);
  if (cont.tokens.length === 0) return { tokens: [], total: 0 };
  const ids = [...prefix.tokens, ...cont.tokens];
  const res = await transport.request({
    method: 'POST',
    path: '/v1/completions',
    body: { model, prompt: ids, max_tokens: 1, temperature: 0, prompt_logprobs: 0 },
    schema: scoreReplySchema,
    // Methods, not arrow functions: tsx names every arrow function bound to a name as it is made.
    cost() {
      return ids.length / 64 + 1;
    },
    // The context's entries are counted, not read, and the continuation's read in place.
    decode(bytes) {
      return readScoreReply(bytes, ids, prefix.tokens.length);
    },
  });
  const tokens = res.continuation
    ? checked(res.entries, res.missing, ids, res.continuation)
    : fromEntries(res.reply.choices[0]?.prompt_logprobs, ids, prefix.tokens.length);
  return { tokens, total: tokens.reduce((s, t) => s + t.logprob, 0) };
}

function checked(
  entries: number | undefined,
  missing: number | undefined,
  ids: readonly number[],
  continuation: ScoreResult['tokens'],
): ScoreResult['tokens'] {
  if (entries !== ids.length) throw entryCount(ids.length, entries);
  if (missing !== undefined) throw lacksToken(missing, ids);
  return continuation.map((t) => ({ token: t.token, logprob: clampLogprob(t.logprob) }));
}

/** The continuation's tokens from a reply parsed whole. */
function fromEntries(
  entries: NonNullable<CompletionResponse['choices'][number]['prompt_logprobs']> | null | undefined,
  ids: readonly number[],
  skip: number,
): ScoreResult['tokens'] {
  if (!entries || entries.length !== ids.length) throw entryCount(ids.length, entries?.length);
  const tokens: ScoreResult['tokens'] = [];
  for (let i = skip; i < ids.length; i++) {
    const entry = entries[i]?.[String(ids[i])];
    if (!entry) throw lacksToken(i, ids);
    tokens.push({ token: entry.decoded_token ?? '', logprob: clampLogprob(entry.logprob) });
  }
  return tokens;
}

function entryCount(expected: number, got: number | undefined): HttpEndpointError {
  return new HttpEndpointError(
    'invalid_response',
    `prompt_logprobs: expected ${expected} entries, got ${got ?? 'none'}`,
  );
}

function lacksToken(i: number, ids: readonly number[]): HttpEndpointError {
  return new HttpEndpointError('invalid_response', `prompt_logprobs[${i}] lacks token id ${ids[i]}`);
}

/**
 * `/tokenize` replies of one transport, shared while they are recent: an audit scores both models' replies
 * under each model with the same context, so every context would otherwise be tokenized twice per endpoint.
 * Concurrent asks for the same body share one request; a failed request is forgotten, not cached.
 */
export class TokenizeMemo {
  private readonly replies = new Map<string, Promise<{ tokens: number[] }>>();

  constructor(
    private readonly transport: HttpTransport,
    private readonly capacity = 512,
  ) {}

  get(body: Record<string, unknown>): Promise<{ tokens: number[] }> {
    const key = JSON.stringify(body);
    const known = this.replies.get(key);
    if (known) return known;
    // The key is the body as sent: serialised once.
    const reply = this.transport.request({
      method: 'POST',
      path: '/tokenize',
      body,
      json: key,
      schema: tokenizeSchema,
    });
    this.replies.set(key, reply);
    reply.catch(() => {
      if (this.replies.get(key) === reply) this.replies.delete(key);
    });
    // Oldest first out: a Map iterates in insertion order.
    if (this.replies.size > this.capacity) this.replies.delete(this.replies.keys().next().value!);
    return reply;
  }
}
