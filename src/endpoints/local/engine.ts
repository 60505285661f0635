import { basename, resolve } from 'node:path';
import { computeFingerprint } from '../fingerprint.ts';
import { splitReasoning } from '../http/reasoning.ts';
import {
  type ChatMessage,
  type ChatRequest,
  type Completion,
  type CompletionRequest,
  EndpointError,
  type ModelEndpoint,
  type ModelIdentity,
  type ScoreRequest,
  type ScoreResult,
  type StructuredOutput,
  type TokenLogprob,
} from '../types.ts';
import { type ModelFolder, readModelFolder, weightDigests } from './folder.ts';
import { choiceConstraint, jsonSchemaConstraint } from './json-guide.ts';
import { OnnxDecoder } from './onnx.ts';
import { Prng, type ScoredToken } from './sampling.ts';
import { Scheduler, type SequenceResult } from './scheduler.ts';
import { SampleText, type TextDelta } from './text.ts';
import { type ChatRenderOptions, LocalTokenizer } from './tokenizer.ts';

export interface LocalEngineOptions {
  /**
   * onnxruntime intra-op threads (default 1: a step of these small models is too short to split, and on a
   * shared CPU a second thread mostly waits for the first).
   */
  threads?: number;
  /** Model id reported in identity (default: the folder's name). */
  name?: string;
  /** 'split' (default): chat() moves `<think>…</think>` into `reasoning`; 'inline' leaves it in the text. */
  reasoning?: 'split' | 'inline';
  /** Most sequences decoded in one batch (default 64). */
  maxBatch?: number;
}

/** Everything one generation call can ask for, in token space (what `probate serve` maps requests onto). */
export interface GenerateOptions {
  promptIds: number[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  seed?: number;
  n?: number;
  stop?: string[];
  stopTokenIds?: number[];
  ignoreEos?: boolean;
  logprobs?: number;
  promptLogprobs?: number;
  /** JSON-schema-guided decoding: only tokens that keep the output a valid prefix are allowed. */
  jsonSchema?: Record<string, unknown>;
  /** The output must be exactly one of these strings. */
  choice?: string[];
  /** Ends every sample early (a streaming client went away). */
  signal?: AbortSignal;
  /**
   * Streaming: each sample's new text as it grows (never a partial character or stop string), and a last
   * call with `finished` when that sample ends.
   */
  onDelta?: (sample: number, delta: TextDelta, finished?: GeneratedSample) => void;
}

export interface GeneratedSample {
  text: string;
  tokens: ScoredToken[];
  finishReason: 'stop' | 'length';
  /** The stop string or stop token id that ended the sample; null for EOS or length (as vLLM). */
  stopReason: string | number | null;
  /** Tokens generated, the stop token included (vLLM's completion_tokens). */
  generatedTokens: number;
}

export interface GenerateResult {
  promptTokens: number;
  samples: GeneratedSample[];
  promptLogprobs?: (ScoredToken | null)[];
}

/** The embedded CPU engine: a local HF ONNX model folder behind the ModelEndpoint interface. */
export class LocalEngine implements ModelEndpoint {
  readonly ref: string;
  readonly modelId: string;
  private identityPromise: Promise<ModelIdentity> | undefined;

  private constructor(
    readonly folder: ModelFolder,
    readonly tokenizer: LocalTokenizer,
    private readonly decoder: OnnxDecoder,
    private readonly scheduler: Scheduler,
    private readonly opts: LocalEngineOptions,
  ) {
    this.ref = `local:${folder.dir}`;
    this.modelId = opts.name ?? basename(resolve(folder.dir));
  }

  static async open(dir: string, opts: LocalEngineOptions = {}): Promise<LocalEngine> {
    const folder = readModelFolder(dir);
    const threads = opts.threads ?? 1;
    const [tokenizer, decoder] = await Promise.all([
      LocalTokenizer.load(dir),
      OnnxDecoder.load(folder, threads),
    ]);
    // Without position_ids the graph derives positions from the cache length, so left padding would shift
    // them: such a model runs one sequence at a time.
    const maxBatch = decoder.hasPositionIds ? (opts.maxBatch ?? 64) : 1;
    return new LocalEngine(folder, tokenizer, decoder, new Scheduler(decoder, maxBatch), opts);
  }

  get maxModelLen(): number {
    return this.folder.maxModelLen;
  }

  /** Sequences being decoded and waiting (for /metrics). */
  get load(): { running: number; waiting: number } {
    return { running: this.scheduler.active, waiting: this.scheduler.waiting };
  }

  tokenize(text: string, addSpecialTokens = true): number[] {
    return this.tokenizer.encode(text, addSpecialTokens);
  }

  detokenize(ids: number[]): string {
    return this.tokenizer.decode(ids, false);
  }

  renderChat(messages: ChatMessage[], opts: ChatRenderOptions = {}): string {
    return this.tokenizer.renderChat(messages, opts);
  }

  private checkContext(promptTokens: number, extra = 1): void {
    if (promptTokens + extra > this.maxModelLen) {
      throw new EndpointError(
        'context_length',
        `This model's maximum context length is ${this.maxModelLen} tokens. However, your request has ` +
          `${promptTokens} input tokens and needs at least ${extra} more.`,
      );
    }
  }

  /** Generates `n` samples from token ids; all samples of all concurrent calls share the running batch. */
  async generate(o: GenerateOptions): Promise<GenerateResult> {
    const promptTokens = o.promptIds.length;
    if (promptTokens === 0) throw new EndpointError('engine', 'the prompt has no tokens');
    this.checkContext(promptTokens, o.maxTokens === 0 ? 0 : 1);
    const maxTokens = Math.min(o.maxTokens ?? this.maxModelLen, this.maxModelLen - promptTokens);
    const defaults = this.folder.defaults;
    const sampler = {
      temperature: o.temperature ?? defaults.temperature ?? 1,
      topP: o.topP ?? defaults.topP ?? 1,
      topK: o.topK !== undefined && o.topK > 0 ? o.topK : (defaults.topK ?? 0),
    };
    const stopIds = new Set([...(o.ignoreEos ? [] : this.folder.eosTokenIds), ...(o.stopTokenIds ?? [])]);
    const stops = (o.stop ?? []).filter((s) => s.length > 0);
    const runs = Array.from({ length: o.n ?? 1 }, (_, i) => {
      const text = new SampleText(this.tokenizer, stops);
      const result = this.scheduler.generate({
        promptIds: o.promptIds,
        maxTokens,
        sampler,
        rng: Prng.forSample(o.seed, i),
        stopIds,
        logprobs: o.logprobs,
        promptLogprobs: i === 0 ? o.promptLogprobs : undefined,
        constraint: o.jsonSchema
          ? jsonSchemaConstraint(o.jsonSchema, this.tokenizer, stopIds)
          : o.choice
            ? choiceConstraint(o.choice, this.tokenizer, stopIds)
            : undefined,
        onToken: (token) => {
          const stopped = text.push(token) || Boolean(o.signal?.aborted);
          if (o.onDelta && !stopped) {
            const delta = text.delta(false);
            if (delta.text || delta.tokens.length) o.onDelta(i, delta);
          }
          return stopped;
        },
      });
      return result.then((r) => {
        const sample = this.toSample(r, text);
        o.onDelta?.(i, text.delta(true), sample);
        return { sample, promptLogprobs: r.promptLogprobs };
      });
    });
    const done = await Promise.all(runs);
    const samples = done.map((d) => d.sample);
    return { promptTokens, samples, promptLogprobs: done[0]?.promptLogprobs };
  }

  private toSample(r: SequenceResult, text: SampleText): GeneratedSample {
    const { text: out, tokens } = text.result();
    const stopString = text.stopString;
    return {
      text: out,
      tokens,
      finishReason: stopString !== undefined ? 'stop' : r.finish,
      stopReason:
        stopString ??
        (r.stopTokenId !== undefined && this.isRequestStop(r.stopTokenId) ? r.stopTokenId : null),
      generatedTokens: r.tokens.length + (r.stopTokenId !== undefined ? 1 : 0),
    };
  }

  private isRequestStop(id: number): boolean {
    return !this.folder.eosTokenIds.includes(id);
  }

  toTokenLogprobs(tokens: ScoredToken[]): TokenLogprob[] {
    return tokens.map((t) => ({
      token: this.tokenizer.tokenText(t.id),
      bytes: [...this.tokenizer.tokenBytes(t.id)],
      logprob: t.logprob,
      top: t.top.map((a) => ({ token: this.tokenizer.tokenText(a.id), logprob: a.logprob })),
    }));
  }

  private toCompletions(res: GenerateResult, logprobs: boolean, split: boolean): Completion[] {
    return res.samples.map((s) => {
      const parts = split ? splitReasoning(s.text) : { text: s.text };
      return {
        text: parts.text,
        reasoning: parts.reasoning,
        finishReason: s.finishReason,
        logprobs: logprobs ? this.toTokenLogprobs(s.tokens) : undefined,
        usage: { promptTokens: res.promptTokens, completionTokens: s.generatedTokens },
      };
    });
  }

  private wrapped<T>(work: () => Promise<T>): Promise<T> {
    return work().catch((err: unknown) => {
      if (err instanceof EndpointError) throw err;
      throw new EndpointError('engine', (err as Error).message.split('\n')[0] ?? 'engine failure');
    });
  }

  chat(req: ChatRequest): Promise<Completion[]> {
    return this.wrapped(async () => {
      const prompt = this.renderChat(req.messages, {
        addGenerationPrompt: !req.continueFinalMessage,
        continueFinalMessage: req.continueFinalMessage,
        kwargs: req.chatTemplateKwargs,
      });
      const res = await this.generate({
        ...this.fromParams(req.params, req.structuredOutput),
        promptIds: this.tokenizer.encode(prompt, false),
      });
      return this.toCompletions(res, req.params.logprobs !== undefined, this.opts.reasoning !== 'inline');
    });
  }

  complete(req: CompletionRequest): Promise<Completion[]> {
    return this.wrapped(async () => {
      const res = await this.generate({
        ...this.fromParams(req.params),
        promptIds: this.tokenize(req.prompt),
      });
      return this.toCompletions(res, req.params.logprobs !== undefined, false);
    });
  }

  private fromParams(
    p: ChatRequest['params'],
    structured?: StructuredOutput,
  ): Omit<GenerateOptions, 'promptIds'> {
    return {
      maxTokens: p.maxTokens,
      temperature: p.temperature,
      topP: p.topP,
      topK: p.topK,
      seed: p.seed,
      n: p.n,
      stop: p.stop,
      logprobs: p.logprobs,
      jsonSchema: structured?.schema,
    };
  }

  /** Teacher-forced log-probabilities of each continuation; all requests go through batched forward passes. */
  score(reqs: ScoreRequest[]): Promise<ScoreResult[]> {
    return this.wrapped(() =>
      Promise.all(
        reqs.map(async (req) => {
          const context =
            typeof req.context === 'string'
              ? this.tokenize(req.context)
              : this.tokenizer.encode(this.renderChat(req.context, { addGenerationPrompt: true }), false);
          const ids = [...context, ...this.tokenizer.encode(req.continuation, false)];
          this.checkContext(ids.length, 0);
          const scored = await this.scheduler.score(ids, context.length);
          const tokens = scored.map((t) => ({ token: this.tokenizer.tokenText(t.id), logprob: t.logprob }));
          return { tokens, total: tokens.reduce((sum, t) => sum + t.logprob, 0) };
        }),
      ),
    );
  }

  identity(): Promise<ModelIdentity> {
    this.identityPromise ??= (async () => ({
      ref: this.ref,
      kind: 'local' as const,
      modelId: this.modelId,
      maxModelLen: this.maxModelLen,
      weightDigests: await weightDigests(this.folder.dir),
      fingerprint: await computeFingerprint(this),
    }))();
    return this.identityPromise;
  }

  async close(): Promise<void> {
    await this.decoder.close();
  }
}
