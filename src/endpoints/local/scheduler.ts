import { EndpointError } from '../types.ts';
import type { KvCache, OnnxDecoder, RowSource } from './onnx.ts';
import {
  greedyFromLogits,
  logSoftmax,
  type Prng,
  pickToken,
  rankOf,
  type SamplerSettings,
  type ScoredToken,
  scoreAt,
  topK,
} from './sampling.ts';

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

/**
 * A sequence in the running batch: `length` real tokens are in the cache from column `start` on, `fed` were
 * fed since the cache was last fetched (not in it yet), `next` is still to be fed. A finished row stays in the
 * batch (`done`, its columns frozen, its output ignored) until the cache is next re-assembled: compacting
 * copies the whole cache, so it waits until it pays.
 */
interface Row extends Pending {
  length: number;
  start: number;
  fed: number[];
  next: number;
  done: boolean;
  out: SequenceResult;
}

const SCORE_BATCH = 16;

/**
 * A decoding step fetches the KV cache (the presents) only every CACHE_EVERY steps; in between it feeds the
 * tokens since the last fetch again, as one chunk on the fetched cache, and fetches the logits only.
 * onnxruntime-node copies every output it returns into a fresh buffer: a batch's whole cache at every step
 * was most of an audit's memory traffic, and every 64 MB of those buffers started a major collection. A
 * chunk of k tokens costs k tokens of compute; the cache it no longer copies is hundreds of positions.
 */
const CACHE_EVERY = 4;

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
  /** The next step fetches the cache whatever the lag: a re-assembly (trim or admission) waits for it. */
  private fetchNext = false;
  private running = false;
  /** Log-probabilities of one row, reused row after row (allocating one per row per step churns the GC). */
  private scratch = new Float64Array(0);

  constructor(
    private readonly model: OnnxDecoder,
    private readonly maxBatch: number,
  ) {}

  /** Rows being decoded now (for metrics). */
  get active(): number {
    return this.live;
  }

  /** Tokens each live row has fed since `cache` was fetched (the same for all: they decode in step). */
  private get lag(): number {
    return this.rows.find((r) => !r.done)?.fed.length ?? 0;
  }

  private get live(): number {
    let n = 0;
    for (const r of this.rows) if (!r.done) n++;
    return n;
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
        if (this.pending.length && this.live < this.maxBatch) {
          if (this.lag > 0) this.fetchNext = true;
          else {
            const admitted = this.pending.splice(0, this.maxBatch - this.live);
            await this.guard(admitted, (batch) => this.admit(batch));
          }
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
      for (const item of new Set([...items, ...this.rows.filter((r) => !r.done)])) item.reject(failure);
      this.rows = [];
      this.cache = undefined;
      this.fetchNext = false;
    }
  }

  private async runScores(jobs: ScoreJob[]): Promise<void> {
    jobs.sort((a, b) => a.ids.length - b.ids.length);
    for (let i = 0; i < jobs.length; i += SCORE_BATCH) {
      const chunk = jobs.slice(i, i + SCORE_BATCH);
      const { logits, vocab, width } = await this.prefill(
        chunk.map((j) => j.ids),
        true,
      );
      chunk.forEach((job, b) => {
        const pad = width - job.ids.length;
        const tokens: ScoredToken[] = [];
        for (let t = Math.max(job.from, 1); t < job.ids.length; t++) {
          tokens.push(
            scoreAt(logits, (b * width + pad + t - 1) * vocab, vocab, job.ids[t]!, 0, this.buffer(vocab)),
          );
        }
        job.resolve(tokens);
      });
    }
  }

  /** One forward pass over left-padded prompts from an empty cache (`logitsOnly`: no cache wanted back). */
  private async prefill(prompts: number[][], logitsOnly = false) {
    const batch = prompts.length;
    const width = Math.max(...prompts.map((p) => p.length));
    const ids = new BigInt64Array(batch * width);
    const positions = new BigInt64Array(batch * width);
    const mask = new BigInt64Array(batch * width);
    prompts.forEach((p, b) => {
      const pad = width - p.length;
      for (let s = 0; s < width; s++) {
        ids[b * width + s] = BigInt(p[Math.max(0, s - pad)]!);
        positions[b * width + s] = BigInt(Math.max(0, s - pad));
      }
      mask.fill(1n, b * width + pad, (b + 1) * width);
    });
    const past = this.model.emptyCache(batch);
    const out = await this.model.forward({ batch, seq: width, ids, mask, positions, past, logitsOnly });
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
      const k = p.req.promptLogprobs;
      if (k !== undefined) {
        out.promptLogprobs = prompt.map((id, t) =>
          t === 0
            ? null
            : scoreAt(logits, (g * width + pad + t - 1) * vocab, vocab, id, k, this.buffer(vocab)),
        );
      }
      const row: Row = { ...p, length: prompt.length, start: 0, fed: [], next: -1, done: false, out };
      if (p.req.maxTokens <= 0) p.resolve(out);
      else if (this.choose(row, logits, (g * width + width - 1) * vocab, vocab)) {
        joined.push({ row, source: { cache: present!, row: g, keep: prompt.length } });
      }
    });
    if (joined.length) this.compact(joined);
  }

  /** Re-assembles the cache from the live rows (and `joined` new ones): the one place the cache is copied. */
  private compact(joined: { row: Row; source: RowSource }[] = []): void {
    if (this.lag > 0) throw new Error('compact: the cache lags behind its rows');
    const sources: RowSource[] = [];
    const rows: Row[] = [];
    this.rows.forEach((r, i) => {
      if (r.done) return;
      rows.push(r);
      sources.push({ cache: this.cache!, row: i, keep: r.length });
    });
    for (const j of joined) {
      rows.push(j.row);
      sources.push(j.source);
    }
    this.rows = rows;
    if (!rows.length) {
      this.cache = undefined;
      return;
    }
    const length = Math.max(...rows.map((r) => r.length));
    for (const r of rows) r.start = length - r.length;
    this.cache = this.model.assemble(sources, length);
  }

  /**
   * One decode step for every running row: the tokens each row fed since the cache was fetched and its next
   * one, as one chunk (see CACHE_EVERY). A row that finishes keeps its place, masked out, until a quarter of
   * the batch has finished (or new rows join): then the cache is fetched and trimmed to the rest.
   */
  private async step(): Promise<void> {
    const cache = this.cache!;
    const batch = this.rows.length;
    const seq = this.lag + 1;
    const fetch = seq >= CACHE_EVERY || this.fetchNext;
    const total = cache.length + seq;
    const ids = new BigInt64Array(batch * seq);
    const positions = new BigInt64Array(batch * seq);
    const mask = new BigInt64Array(batch * total);
    this.rows.forEach((r, b) => {
      if (r.done) {
        // Its last real column stays visible so no attention row is empty; the output is ignored.
        mask.fill(1n, b * total + r.start, b * total + r.start + r.length);
        return;
      }
      r.fed.push(r.next);
      r.fed.forEach((id, j) => {
        ids[b * seq + j] = BigInt(id);
        positions[b * seq + j] = BigInt(r.length + j);
      });
      mask.fill(1n, b * total + r.start, (b + 1) * total);
    });
    const out = await this.model.forward({
      batch,
      seq,
      ids,
      mask,
      positions,
      past: cache,
      logitsOnly: !fetch,
    });
    let finished = 0;
    this.rows.forEach((row, b) => {
      if (row.done) {
        finished++;
        return;
      }
      if (fetch) {
        row.length += seq;
        row.fed = [];
      }
      if (!this.choose(row, out.logits, (b * seq + seq - 1) * out.vocab, out.vocab)) {
        row.done = true;
        finished++;
      }
    });
    if (fetch) {
      this.cache = out.present;
      this.fetchNext = false;
    }
    // A trim waits for the cache to catch up with the live rows (none left: nothing to wait for).
    if (finished * 4 >= batch) {
      if (this.lag === 0) this.compact();
      else this.fetchNext = true;
    }
  }

  private buffer(vocab: number): Float64Array {
    if (this.scratch.length !== vocab) this.scratch = new Float64Array(vocab);
    return this.scratch;
  }

  /** Picks the row's next token from logits; resolves the row and returns false when it is finished. */
  private choose(row: Row, logits: Float32Array, offset: number, vocab: number): boolean {
    const { req, out } = row;
    let id: number;
    let logprob: number;
    let lp: Float64Array | undefined;
    if (req.sampler.temperature === 0 && !req.constraint && req.logprobs === undefined) {
      // Plain greedy needs only the best token's log-probability: no per-token array.
      ({ id, logprob } = greedyFromLogits(logits, offset, vocab));
    } else {
      lp = logSoftmax(logits, offset, vocab, this.buffer(vocab));
      const allowed = req.constraint ? (t: number) => req.constraint!.allowed(t) : undefined;
      id = pickToken(lp, req.sampler, req.rng, allowed);
      logprob = id < 0 ? Number.NaN : lp[id]!;
    }
    if (id < 0) return this.finish(row, 'stop');
    if (req.stopIds.has(id)) {
      out.stopTokenId = id;
      return this.finish(row, 'stop');
    }
    const k = req.logprobs ?? 0;
    const token: ScoredToken = {
      id,
      logprob,
      rank: req.logprobs === undefined || !lp ? 0 : rankOf(lp, id),
      top: k > 0 && lp ? topK(lp, k).map((t) => ({ id: t.id, logprob: t.value })) : [],
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
