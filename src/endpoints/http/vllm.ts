import type { z } from 'zod';
import { computeFingerprint } from '../fingerprint.ts';
import type {
  ChatRequest,
  Completion,
  CompletionRequest,
  ModelEndpoint,
  ModelIdentity,
  ScoreRequest,
  ScoreResult,
} from '../types.ts';
import {
  capabilitiesFor,
  type ServerCapabilities,
  type StructuredField,
  structuredFields,
} from './capabilities.ts';
import {
  chatChoicesToCompletions,
  chatResponseToCompletions,
  completionResponseToCompletions,
  samplingFields,
} from './convert.ts';
import { HttpEndpointError } from './errors.ts';
import {
  chatResponseSchema,
  chatStreamSchema,
  completionResponseSchema,
  completionStreamSchema,
  type ModelsResponse,
  modelsSchema,
  versionSchema,
} from './schemas.ts';
import { scoreByPromptLogprobs, TokenizeMemo } from './score.ts';
import { HttpTransport } from './transport.ts';
import type { RequestSpec, TransportOptions } from './transport-options.ts';

export interface VllmOptions extends Omit<TransportOptions, 'roots' | 'endpoint'> {
  /** Base URLs as written (`http://host:8000/v1`), one per replica. */
  urls: string[];
  model: string;
  /** Redacted reference. */
  ref: string;
  kind?: 'vllm' | 'hf-endpoint';
  /** Use SSE for chat/complete (an error event with HTTP 200 fails the exchange). */
  stream?: boolean;
  /** Overrides the version-derived structured-output field (e.g. from `probate doctor`). */
  structuredField?: StructuredField;
  /** Compute the greedy-reply fingerprint in identity(). Default true. */
  fingerprint?: boolean;
}

/** Server root for a base URL: `http://h:8000/v1` → `http://h:8000` (version, tokenize live at the root). */
export function serverRoot(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/v1$/, '');
}

/** A model behind one or more vLLM (or vLLM-compatible) servers. */
export class VllmEndpoint implements ModelEndpoint {
  readonly ref: string;
  readonly transport: HttpTransport;
  readonly samplesInFlight: number;
  private readonly opts: VllmOptions;
  private caps?: Promise<ServerCapabilities>;
  private ident?: Promise<ModelIdentity>;
  private templateKwargsRefused = false;
  private readonly tokenized: TokenizeMemo;

  constructor(opts: VllmOptions) {
    this.opts = opts;
    this.ref = opts.ref;
    this.transport = new HttpTransport({ ...opts, roots: opts.urls.map(serverRoot), endpoint: opts.ref });
    this.tokenized = new TokenizeMemo(this.transport);
    // Enough queued that a limit's worth of requests can sleep out a Retry-After while others keep it full.
    this.samplesInFlight = 16 * this.transport.limiter.limit;
  }

  /** `GET /version` decides field names; a server without it (404) is treated as version-unknown. */
  capabilities(): Promise<ServerCapabilities> {
    this.caps ??= this.transport
      .request({ method: 'GET', path: '/version', schema: versionSchema })
      .then(
        (v) => v.version,
        (err: unknown) => {
          if (err instanceof HttpEndpointError && err.kind === 'http') return undefined;
          throw err;
        },
      )
      .then((version) => capabilitiesFor(version, this.opts.structuredField));
    this.caps.catch(() => {
      this.caps = undefined; // a failed detection is retried on next use, not cached
    });
    return this.caps;
  }

  models(): Promise<ModelsResponse> {
    return this.transport.request({ method: 'GET', path: '/v1/models', schema: modelsSchema });
  }

  identity(): Promise<ModelIdentity> {
    this.ident ??= this.loadIdentity();
    this.ident.catch(() => {
      this.ident = undefined;
    });
    return this.ident;
  }

  private async loadIdentity(): Promise<ModelIdentity> {
    const [caps, models] = await Promise.all([this.capabilities(), this.models()]);
    const entry = models.data.find((m) => m.id === this.opts.model);
    if (!entry) {
      const served = models.data.map((m) => m.id).join(', ') || 'none';
      throw new HttpEndpointError('http', `model "${this.opts.model}" is not served (served: ${served})`, {
        status: 404,
      });
    }
    return {
      ref: this.ref,
      kind: this.opts.kind ?? 'vllm',
      modelId: entry.id,
      serverVersion: caps.version,
      root: entry.root ?? undefined,
      parent: entry.parent ?? null,
      maxModelLen: entry.max_model_len ?? undefined,
      fingerprint: this.opts.fingerprint === false ? undefined : await computeFingerprint(this),
    };
  }

  async chat(req: ChatRequest): Promise<Completion[]> {
    if (!req.chatTemplateKwargs || this.templateKwargsRefused) return this.chatOnce(req, false);
    try {
      return await this.chatOnce(req, true);
    } catch (err) {
      // A compatible server without vLLM's `chat_template_kwargs` extra: ask without it from now on (the
      // refused attempt stays recorded).
      if (
        !(err instanceof HttpEndpointError && err.status === 400 && /chat_template_kwargs/.test(err.message))
      )
        throw err;
      this.templateKwargsRefused = true;
      return this.chatOnce(req, false);
    }
  }

  private async chatOnce(req: ChatRequest, withKwargs: boolean): Promise<Completion[]> {
    const n = req.params.n ?? 1;
    const caps = await this.capabilities();
    const body: Record<string, unknown> = {
      model: this.opts.model,
      messages: req.messages,
      ...samplingFields(req.params),
      chat_template_kwargs: withKwargs ? req.chatTemplateKwargs : undefined,
    };
    if (req.params.logprobs !== undefined) {
      body.logprobs = true;
      body.top_logprobs = req.params.logprobs;
    }
    if (req.continueFinalMessage) {
      // Both true is a 400 on vLLM: prefilling the assistant turn means no new generation prompt.
      body.continue_final_message = true;
      body.add_generation_prompt = false;
    }
    if (req.structuredOutput) {
      Object.assign(
        body,
        structuredFields(caps.structuredField, req.structuredOutput.name, req.structuredOutput.schema),
      );
    }
    if (!this.opts.stream) {
      const res = await this.post('/v1/chat/completions', body, chatResponseSchema, (r) => tokensOf(r.usage));
      return chatResponseToCompletions(res, n);
    }
    const events = await this.post(
      '/v1/chat/completions',
      { ...body, stream: true, stream_options: { include_usage: true } },
      chatStreamSchema,
      (evs) => tokensOf(evs.at(-1)?.usage),
      true,
    );
    return chatChoicesToCompletions(aggregateChat(events), events.findLast((e) => e.usage)?.usage, n);
  }

  async complete(req: CompletionRequest): Promise<Completion[]> {
    const n = req.params.n ?? 1;
    const body: Record<string, unknown> = {
      model: this.opts.model,
      prompt: req.prompt,
      ...samplingFields(req.params),
      logprobs: req.params.logprobs,
    };
    if (!this.opts.stream) {
      const res = await this.post('/v1/completions', body, completionResponseSchema, (r) =>
        tokensOf(r.usage),
      );
      return completionResponseToCompletions(res, n);
    }
    const events = await this.post(
      '/v1/completions',
      { ...body, stream: true, stream_options: { include_usage: true } },
      completionStreamSchema,
      (evs) => tokensOf(evs.at(-1)?.usage),
      true,
    );
    const texts = new Map<number, { index: number; text: string; finish_reason?: string | null }>();
    for (const ev of events) {
      for (const c of ev.choices) {
        const acc = texts.get(c.index) ?? { index: c.index, text: '' };
        acc.text += c.text;
        acc.finish_reason = c.finish_reason ?? acc.finish_reason;
        texts.set(c.index, acc);
      }
    }
    return completionResponseToCompletions(
      { choices: [...texts.values()], usage: events.findLast((e) => e.usage)?.usage },
      n,
    );
  }

  score(reqs: ScoreRequest[]): Promise<ScoreResult[]> {
    return Promise.all(
      reqs.map((r) => scoreByPromptLogprobs(this.transport, this.opts.model, r, this.tokenized)),
    );
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  private post<T>(
    path: string,
    body: Record<string, unknown>,
    schema: z.ZodType<T>,
    cost: (value: T) => number,
    stream = false,
  ): Promise<T> {
    const spec: RequestSpec<T> = { method: 'POST', path, body, schema, cost, stream };
    return this.transport.request(spec);
  }
}

function tokensOf(usage: { completion_tokens?: number | null } | null | undefined): number {
  return (usage?.completion_tokens ?? 0) + 1;
}

type ChatStream = z.infer<typeof chatStreamSchema>;

/** Concatenates streamed deltas per choice index. */
function aggregateChat(events: ChatStream) {
  const acc = new Map<
    number,
    {
      index: number;
      content: string;
      reasoning: string | null;
      finish_reason?: string | null;
      logprobs: NonNullable<NonNullable<ChatStream[number]['choices'][number]['logprobs']>['content']>;
    }
  >();
  for (const ev of events) {
    for (const c of ev.choices) {
      const a = acc.get(c.index) ?? { index: c.index, content: '', reasoning: null, logprobs: [] };
      a.content += c.delta?.content ?? '';
      const r = c.delta?.reasoning ?? c.delta?.reasoning_content;
      if (typeof r === 'string') a.reasoning = (a.reasoning ?? '') + r;
      a.finish_reason = c.finish_reason ?? a.finish_reason;
      a.logprobs.push(...(c.logprobs?.content ?? []));
      acc.set(c.index, a);
    }
  }
  return [...acc.values()].map((a) => ({ ...a, logprobs: a.logprobs.length ? a.logprobs : undefined }));
}
