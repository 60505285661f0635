import { EndpointError } from '../types.ts';
import type { KvCache, OnnxDecoder, RowSource } from './onnx.ts';
import { logSoftmax, type Prng, pickToken, rankOf, type SamplerSettings, topK } from './sampling.ts';

/** A token with its log-probability under the model's raw distribution and the top alternatives. */
export interface ScoredToken {
  id: number;
  logprob: number;
  /** 1-based rank in the model's distribution (vLLM's `rank`). */
  rank: number;
  top: { id: number; logprob: number }[];
}

/** Restricts which token may come next (structured output); sees every token chosen. */
export interface TokenConstraint {
  allowed(id: number): boolean;
  accept(id: number): void;
  /** True once the constrained value is complete: the sequence stops. */
  done(): boolean;
}

export interface SequenceRequest {
  promptIds: number[];
  /** Already capped at maxModelLen − prompt length. */
  maxTokens: number;
  sampler: SamplerSettings;
  rng: Prng;
  stopIds: ReadonlySet<number>;
  /** Alternatives per generated token (undefined: none; 0: only the chosen token's logprob). */
  logprobs?: number;
  /** Score every prompt token too, with this many alternatives. */
  promptLogprobs?: number;
  constraint?: TokenConstraint;
  /** Sees each generated token as it comes; returning true ends the sequence (a stop string matched). */
  onToken?: (token: ScoredToken) => boolean;
}

export interface SequenceResult {
  /** Generated tokens, without the stop token that ended them. */
  tokens: ScoredToken[];
  finish: 'stop' | 'length';
  /** The stop token id that ended the sequence, if one did. */
  stopTokenId?: number;
  /** One entry per prompt token; null for the first. */
  promptLogprobs?: (ScoredToken | null)[];
}

interface ScoreJob {
  ids: number[];
  /** Index of the first scored token. */
  from: number;
  resolve(tokens: ScoredToken[]): void;
  reject(err: Error): void;
}

interface Pending {
  req: SequenceRequest;
  resolve(result: SequenceResult): void;
  reject(err: Error): void;
}

/** A sequence in the running batch: `length` real tokens are in the cache, `next` is still to be fed. */
interface Row extends Pending {
  length: number;
  next: number;
  out: SequenceResult;
}

const SCORE_BATCH = 16;

function scoreAt(logits: Float32Array, offset: number, vocab: number, id: number, k: number): ScoredToken {
  const lp = logSoftmax(logits, offset, vocab);
  return {
    id,
    logprob: lp[id]!,
    rank: rankOf(lp, id),
    top: topK(lp, k).map((t) => ({ id: t.id, logprob: t.value })),
  };
}

/**
 * Continuous batching over one decoder: requests that arrive while others run join the batch at the next
 * decode step (left-padded, each row with its own positions), and leave it when they finish. Teacher-forced
 * scoring runs between steps, one forward pass per batch. Only this loop calls the model.
 */
export class Scheduler {
  private pending: Pending[] = [];
  private scoring: ScoreJob[] = [];
  private rows: Row[] = [];
  private cache: KvCache | undefined;
  private running = false;

  constructor(
    private readonly model: OnnxDecoder,
    private readonly maxBatch: number,
  ) {}

  /** Rows being decoded now (for metrics). */
  get active(): number {
    return this.rows.length;
  }

  get waiting(): number {
    return this.pending.length;
  }

  generate(req: SequenceRequest): Promise<SequenceResult> {
    return new Promise((resolve, reject) => {
      this.pending.push({ req, resolve, reject });
      this.kick();
    });
  }

  /** Log-probabilities of ids[from..] given everything before them. */
  score(ids: number[], from: number): Promise<ScoredToken[]> {
    return new Promise((resolve, reject) => {
      this.scoring.push({ ids, from, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.running) return;
    this.running = true;
    // Start on a later turn so requests issued together in this turn are admitted as one batch.
    setImmediate(() => void this.loop());
  }

  private async loop(): Promise<void> {
    try {
      while (this.scoring.length || this.pending.length || this.rows.length) {
        if (this.scoring.length) await this.guard(this.scoring.splice(0), (jobs) => this.runScores(jobs));
        if (this.pending.length && this.rows.length < this.maxBatch) {
          const admitted = this.pending.splice(0, this.maxBatch - this.rows.length);
          await this.guard(admitted, (batch) => this.admit(batch));
        }
        if (this.rows.length) await this.guard(this.rows, () => this.step());
      }
    } finally {
      this.running = false;
    }
  }

  /** A model failure fails the requests it touched (and the running batch), never the loop. */
  private async guard<T extends { reject(err: Error): void }>(
    items: T[],
    work: (items: T[]) => Promise<void>,
  ): Promise<void> {
    try {
      await work(items);
    } catch (err) {
      const failure = new EndpointError('engine', `onnxruntime: ${(err as Error).message.split('\n')[0]}`);
      for (const item of new Set([...items, ...this.rows])) item.reject(failure);
      this.rows = [];
      this.cache = undefined;
    }
  }

  private async runScores(jobs: ScoreJob[]): Promise<void> {
    jobs.sort((a, b) => a.ids.length - b.ids.length);
    for (let i = 0; i < jobs.length; i += SCORE_BATCH) {
      const chunk = jobs.slice(i, i + SCORE_BATCH);
      const { logits, vocab, width } = await this.prefill(chunk.map((j) => j.ids));
      chunk.forEach((job, b) => {
        const pad = width - job.ids.length;
        const tokens: ScoredToken[] = [];
        for (let t = Math.max(job.from, 1); t < job.ids.length; t++) {
          tokens.push(scoreAt(logits, (b * width + pad + t - 1) * vocab, vocab, job.ids[t]!, 0));
        }
        job.resolve(tokens);
      });
    }
  }

  /** One forward pass over left-padded prompts from an empty cache. */
  private async prefill(prompts: number[][]) {
    const width = Math.max(...prompts.map((p) => p.length));
    const ids: number[][] = [];
    const positions: number[][] = [];
    const mask: Uint8Array[] = [];
    for (const p of prompts) {
      const pad = width - p.length;
      ids.push([...new Array<number>(pad).fill(p[0]!), ...p]);
      positions.push(Array.from({ length: width }, (_, s) => Math.max(0, s - pad)));
      mask.push(Uint8Array.from({ length: width }, (_, s) => (s >= pad ? 1 : 0)));
    }
    const out = await this.model.forward({
      ids,
      mask,
      positions,
      past: this.model.emptyCache(prompts.length),
    });
    return { ...out, width };
  }

  /** Prefills new requests (each distinct prompt once) and merges them into the running batch. */
  private async admit(batch: Pending[]): Promise<void> {
    const keys = batch.map((p) => p.req.promptIds.join(','));
    const unique = [...new Set(keys)];
    const prompts = unique.map((k) => batch[keys.indexOf(k)]!.req.promptIds);
    const { logits, vocab, width, present } = await this.prefill(prompts);
    const joined: { row: Row; source: RowSource }[] = [];
    batch.forEach((p, i) => {
      const g = unique.indexOf(keys[i]!);
      const prompt = p.req.promptIds;
      const pad = width - prompt.length;
      const out: SequenceResult = { tokens: [], finish: 'length' };
      if (p.req.promptLogprobs !== undefined) {
        out.promptLogprobs = prompt.map((id, t) =>
          t === 0
            ? null
            : scoreAt(logits, (g * width + pad + t - 1) * vocab, vocab, id, p.req.promptLogprobs!),
        );
      }
      const row: Row = { ...p, length: prompt.length, next: -1, out };
      if (p.req.maxTokens <= 0) p.resolve(out);
      else if (this.choose(row, logits, (g * width + width - 1) * vocab, vocab)) {
        joined.push({ row, source: { cache: present, row: g, keep: prompt.length } });
      }
    });
    if (!joined.length) return;
    const sources = [
      ...this.rows.map((r, i) => ({ cache: this.cache!, row: i, keep: r.length })),
      ...joined.map((j) => j.source),
    ];
    this.rows = [...this.rows, ...joined.map((j) => j.row)];
    this.cache = this.model.assemble(sources, Math.max(...this.rows.map((r) => r.length)));
  }

  /** One decode step for every running row; finished rows leave and the cache is trimmed to the rest. */
  private async step(): Promise<void> {
    const cache = this.cache!;
    const total = cache.length + 1;
    const out = await this.model.forward({
      ids: this.rows.map((r) => [r.next]),
      positions: this.rows.map((r) => [r.length]),
      mask: this.rows.map((r) =>
        Uint8Array.from({ length: total }, (_, t) => (t >= cache.length - r.length ? 1 : 0)),
      ),
      past: cache,
    });
    const staying: RowSource[] = [];
    const rows: Row[] = [];
    this.rows.forEach((row, b) => {
      row.length++;
      if (this.choose(row, out.logits, b * out.vocab, out.vocab)) {
        rows.push(row);
        staying.push({ cache: out.present, row: b, keep: row.length });
      }
    });
    if (rows.length === this.rows.length) {
      this.cache = out.present;
    } else {
      this.rows = rows;
      this.cache = rows.length
        ? this.model.assemble(staying, Math.max(...rows.map((r) => r.length)))
        : undefined;
    }
  }

  /** Picks the row's next token from logits; resolves the row and returns false when it is finished. */
  private choose(row: Row, logits: Float32Array, offset: number, vocab: number): boolean {
    const { req, out } = row;
    const lp = logSoftmax(logits, offset, vocab);
    const allowed = req.constraint ? (id: number) => req.constraint!.allowed(id) : undefined;
    const id = pickToken(lp, req.sampler, req.rng, allowed);
    if (id < 0) return this.finish(row, 'stop');
    if (req.stopIds.has(id)) {
      out.stopTokenId = id;
      return this.finish(row, 'stop');
    }
    const k = req.logprobs ?? 0;
    const token: ScoredToken = {
      id,
      logprob: lp[id]!,
      rank: req.logprobs === undefined ? 0 : rankOf(lp, id),
      top: k > 0 ? topK(lp, k).map((t) => ({ id: t.id, logprob: t.value })) : [],
    };
    out.tokens.push(token);
    req.constraint?.accept(id);
    if (req.onToken?.(token) || req.constraint?.done()) return this.finish(row, 'stop');
    if (out.tokens.length >= req.maxTokens) return this.finish(row, 'length');
    row.next = id;
    return true;
  }

  private finish(row: Row, reason: 'stop' | 'length'): false {
    row.out.finish = reason;
    row.resolve(row.out);
    return false;
  }
}
