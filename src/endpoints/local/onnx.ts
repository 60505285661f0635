import ort from 'onnxruntime-node';
import { UserError } from '../../util/errors.ts';
import type { ModelFolder } from './folder.ts';

/** A batch's KV cache: one [batch, heads, length, headDim] tensor per past input, in input order. */
export interface KvCache {
  tensors: ort.Tensor[];
  batch: number;
  length: number;
}

/** Where one output row of a re-assembled cache comes from: a row of a cache, its last `keep` columns. */
export interface RowSource {
  cache: KvCache;
  row: number;
  keep: number;
}

/** One forward pass's inputs as flat int64 tensors (built once per step, no per-element conversion here). */
export interface ForwardInput {
  batch: number;
  seq: number;
  /** [batch, seq] token ids; rows are left-padded to the same length by the caller. */
  ids: BigInt64Array;
  /** [batch, past + seq] 1 for real tokens, 0 for padding. */
  mask: BigInt64Array;
  /** [batch, seq] position of each token (per row, so left padding does not shift positions). */
  positions: BigInt64Array;
  past: KvCache;
  /**
   * Fetch the logits only, not the present cache: onnxruntime-node copies every output it returns into a fresh
   * JS buffer (even one fetched into a buffer of the caller's: it writes that, then copies it out), and a
   * batch's cache is megabytes. Teacher-forced scoring needs no cache; decoding fetches it now and then.
   */
  logitsOnly?: boolean;
}

export interface ForwardOutput {
  /** [batch, seq, vocab] row-major. */
  logits: Float32Array;
  vocab: number;
  /** Absent when the pass fetched the logits only. */
  present?: KvCache;
}

/** One ONNX decoder with KV cache, run directly through onnxruntime-node (no generate() wrapper). */
export class OnnxDecoder {
  readonly pastNames: string[];
  readonly presentNames: string[];
  readonly hasPositionIds: boolean;
  private readonly cacheBranch: string | undefined;
  /**
   * Buffers for re-assembled caches: a re-assembly reads the cache of the last one (or a present) while it
   * writes the other set. Fresh arrays here were most of an audit's allocation (23.6 GB for one shipped pair,
   * with 1217 major collections).
   */
  private readonly assembled = new BuffersInTurn();

  private constructor(
    private readonly session: ort.InferenceSession,
    readonly heads: number,
    readonly headDim: number,
  ) {
    const inputs = session.inputNames;
    this.pastNames = inputs.filter((n) => /^past_key_values\.\d+\.(key|value)$/.test(n));
    this.presentNames = this.pastNames.map((n) => n.replace('past_key_values', 'present'));
    this.hasPositionIds = inputs.includes('position_ids');
    this.cacheBranch = inputs.includes('use_cache_branch') ? 'use_cache_branch' : undefined;
  }

  static async load(folder: ModelFolder, threads: number): Promise<OnnxDecoder> {
    let session: ort.InferenceSession;
    try {
      session = await ort.InferenceSession.create(folder.onnxPath, {
        intraOpNumThreads: threads,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        // Steps of a model this small last milliseconds: spinning pool threads only burn a shared CPU
        // (and stall when descheduled) between them.
        extra: { session: { 'intra_op.allow_spinning': '0' } },
      });
    } catch (err) {
      throw new UserError(`${folder.onnxPath}: cannot load: ${(err as Error).message.split('\n')[0]}`);
    }
    const where = folder.onnxPath;
    const names = session.inputNames;
    if (!names.includes('input_ids') || !names.includes('attention_mask')) {
      throw new UserError(`${where}: expected inputs input_ids and attention_mask`);
    }
    const first = session.inputMetadata.find((m) => m.name === 'past_key_values.0.key');
    if (!first?.isTensor) throw new UserError(`${where}: no KV-cache inputs (past_key_values.0.key)`);
    const layers = names.filter((n) => /^past_key_values\.\d+\.key$/.test(n)).length;
    if (layers !== folder.nLayer) {
      throw new UserError(`${where}: has ${layers} cache layers but config.json says ${folder.nLayer}`);
    }
    const [, heads, , headDim] = first.shape;
    if (typeof heads !== 'number' || typeof headDim !== 'number') {
      throw new UserError(`${where}: past_key_values.0.key needs fixed head and head_dim axes`);
    }
    return new OnnxDecoder(session, heads, headDim);
  }

  emptyCache(batch: number): KvCache {
    const dims = [batch, this.heads, 0, this.headDim];
    return {
      tensors: this.pastNames.map(() => new ort.Tensor('float32', new Float32Array(0), dims)),
      batch,
      length: 0,
    };
  }

  async forward(input: ForwardInput): Promise<ForwardOutput> {
    const { batch, seq } = input;
    const total = input.past.length + seq;
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor('int64', input.ids, [batch, seq]),
      attention_mask: new ort.Tensor('int64', input.mask, [batch, total]),
    };
    if (this.hasPositionIds) feeds.position_ids = new ort.Tensor('int64', input.positions, [batch, seq]);
    if (this.cacheBranch) feeds[this.cacheBranch] = new ort.Tensor('bool', [input.past.length > 0], [1]);
    this.pastNames.forEach((name, i) => {
      feeds[name] = input.past.tensors[i]!;
    });
    const fetches = input.logitsOnly ? ['logits'] : ['logits', ...this.presentNames];
    const out = await this.session.run(feeds, fetches);
    const logits = out.logits;
    if (!logits) throw new Error('model returned no logits');
    return {
      logits: logits.data as Float32Array,
      vocab: logits.dims[2]!,
      present: input.logitsOnly
        ? undefined
        : { tensors: this.presentNames.map((n) => out[n]!), batch, length: total },
    };
  }

  /**
   * Builds a cache whose row i holds the last `keep` columns of sources[i], right-aligned and zero-padded on
   * the left to `length`: merging, dropping finished rows, trimming padding and copying a prompt to n samples
   * are all this one copy. The result lives in this decoder's buffers and stays valid until the second next
   * call (every element is written, padding included, so it is the same as a fresh array).
   */
  assemble(sources: RowSource[], length: number): KvCache {
    const { heads, headDim } = this;
    const view = this.assembled.next();
    const size = sources.length * heads * length * headDim;
    const tensors = this.pastNames.map((_, t) => {
      const out = view(t, size);
      sources.forEach((src, b) => {
        const data = src.cache.tensors[t]!.data as Float32Array;
        if (data.buffer === out.buffer) throw new Error('assemble: a source shares the buffer being written');
        const srcLen = src.cache.length;
        for (let h = 0; h < heads; h++) {
          const from = ((src.row * heads + h) * srcLen + (srcLen - src.keep)) * headDim;
          const row = (b * heads + h) * length * headDim;
          const to = row + (length - src.keep) * headDim;
          out.fill(0, row, to);
          out.set(data.subarray(from, from + src.keep * headDim), to);
        }
      });
      return new ort.Tensor('float32', out, [sources.length, heads, length, headDim]);
    });
    return { tensors, batch: sources.length, length };
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

/**
 * Two sets of float buffers used in turn, so what one call hands out stays valid until the second next call
 * (the previous set is still being read while this one is written). Each slot grows by half again when short.
 */
class BuffersInTurn {
  private readonly sets: Float32Array[][] = [[], []];
  private turn = 0;

  /** The next set, as views of `size` floats per slot. */
  next(): (slot: number, size: number) => Float32Array {
    const set = this.sets[this.turn]!;
    this.turn = 1 - this.turn;
    return (slot, size) => {
      if ((set[slot]?.length ?? 0) < size) set[slot] = new Float32Array(Math.ceil(size * 1.5));
      return set[slot]!.subarray(0, size);
    };
  }
}
