import type { Exchange, FamilyId, ReplyRecord, SignalValue } from '../contracts/exchange.ts';
import {
  type ChatMessage,
  type Completion,
  EndpointError,
  type FailureKind,
  type ModelEndpoint,
} from '../endpoints/types.ts';
import { detectSignals } from '../probes/detectors/types.ts';
import { FAMILY_REGISTRY } from '../probes/families/index.ts';
import type { FamilyDef, PlannedSample, ProbeGroup } from '../probes/families/types.ts';
import { runPool } from './pool.ts';

export interface RunnerOptions {
  base: ModelEndpoint;
  delivered: ModelEndpoint;
  groups: Iterable<ProbeGroup>;
  concurrency: number;
  /** Receives each finished group's exchanges at once (one ledger transaction: groups are atomic). */
  write: (exchanges: Exchange[]) => void;
  /** Resume: ids of exchanges already in the ledger. */
  done?: ReadonlySet<string>;
  onProgress?: (p: { done: number; failed: number }) => void;
  /** After this many samples in a row with a failed side, the rest are recorded as failed, not attempted. */
  maxConsecutiveFailures?: number;
  registry?: Readonly<Record<FamilyId, FamilyDef>>;
}

/**
 * The runner's samples in flight when the user does not say: what the slower-to-fill endpoint asks for
 * (`ModelEndpoint.samplesInFlight`), and never fewer than 32.
 */
export function defaultSamplesInFlight(...endpoints: ModelEndpoint[]): number {
  return Math.max(32, ...endpoints.map((e) => e.samplesInFlight ?? 32));
}

export function exchangeId(g: ProbeGroup, s: PlannedSample): string {
  return `${g.probeSetId}:${s.probeId}:${s.variant}:${s.sample}`;
}

/**
 * The differential runner: every planned sample goes to both models with the same messages and sampling
 * parameters; each reply is scored under the other model (teacher-forced log-likelihood ratio); family
 * detectors add their signals; finished exchanges stream out. Failures are recorded, never dropped.
 *
 * `concurrency` counts samples in flight, not groups: a group's samples run side by side, so one sample
 * waiting out a server's Retry-After or a stall does not hold its siblings back (a group's samples in a
 * row made the slowest group's chain of waits the audit's wall time). A group is still written at once,
 * in plan order, when its last sample finishes; its detectors run then, each variant against the clean
 * sample before it.
 */
export async function runDifferential(opts: RunnerOptions): Promise<{ exchanges: number; failed: number }> {
  const registry = opts.registry ?? FAMILY_REGISTRY;
  const limit = opts.maxConsecutiveFailures ?? 25;
  const state = { exchanges: 0, failed: 0, streak: 0, abort: undefined as ReplyRecord['failure'] };
  const finish = (group: ProbeGroup, def: FamilyDef, exchanges: Exchange[]) => {
    let clean: Exchange | undefined;
    for (const [i, ex] of exchanges.entries()) {
      const s = group.samples[i]!;
      if (s.variant === 'clean') clean = ex;
      Object.assign(
        ex.signals,
        detectSignals(def.detectors, ex, { clean: s.variant === 'clean' ? undefined : clean }),
      );
    }
    opts.write(exchanges);
    opts.onProgress?.({ done: state.exchanges, failed: state.failed });
  };
  const onExchange = (ex: Exchange) => {
    state.exchanges++;
    if (ex.base.status !== 'ok' || ex.delivered.status !== 'ok') {
      state.failed++;
      state.streak++;
      if (state.streak >= limit && !state.abort) {
        const last = ex.delivered.failure ?? ex.base.failure;
        state.abort = {
          kind: last?.kind ?? 'engine',
          message: `not attempted: ${limit} samples failed in a row (last: ${last?.message ?? 'unknown'})`,
        };
      }
    } else state.streak = 0;
  };
  await runPool(
    plannedSamples(opts, registry),
    opts.concurrency,
    async ({ group, def, index, results, left }) => {
      const s = group.samples[index]!;
      const ex = state.abort ? notAttempted(group, s, state.abort) : await runSample(opts, group, s);
      onExchange(ex);
      results[index] = ex;
      if (--left.count === 0) finish(group, def, results);
    },
  );
  return { exchanges: state.exchanges, failed: state.failed };
}

interface PlannedItem {
  group: ProbeGroup;
  def: FamilyDef;
  index: number;
  /** Shared by the group's items: its exchanges by plan position, and how many are still to finish. */
  results: Exchange[];
  left: { count: number };
}

/** The samples still to run, group by group, pulled lazily (only the groups in flight exist at once). */
function* plannedSamples(
  opts: RunnerOptions,
  registry: Readonly<Record<FamilyId, FamilyDef>>,
): Generator<PlannedItem> {
  for (const group of opts.groups) {
    if (group.samples.every((s) => opts.done?.has(exchangeId(group, s)))) continue;
    const def = registry[group.family];
    if (!def) throw new Error(`no family '${group.family}' in the registry the groups were planned with`);
    const results: Exchange[] = new Array(group.samples.length);
    const left = { count: group.samples.length };
    for (let index = 0; index < group.samples.length; index++) yield { group, def, index, results, left };
  }
}

async function runSample(opts: RunnerOptions, group: ProbeGroup, s: PlannedSample): Promise<Exchange> {
  // A conversation that ends with an assistant turn is a prefill (an `opening` transformation): continued.
  const continueFinalMessage = s.messages.at(-1)?.role === 'assistant' ? true : undefined;
  const req = {
    messages: s.messages,
    params: s.params,
    chatTemplateKwargs: s.chatTemplateKwargs,
    continueFinalMessage,
  };
  const [b, d] = await Promise.allSettled([opts.base.chat(req), opts.delivered.chat(req)]);
  const base = toReply(b);
  const delivered = toReply(d);
  const ex: Exchange = {
    id: exchangeId(group, s),
    family: group.family,
    probeSetId: group.probeSetId,
    probeSetHash: group.probeSetHash,
    probeId: s.probeId,
    variant: s.variant,
    sample: s.sample,
    seed: s.seed,
    messages: s.messages,
    meta: s.meta,
    base: base.reply,
    delivered: delivered.reply,
    signals: {},
  };
  if (base.completion && delivered.completion) {
    Object.assign(ex.signals, await crossSignals(opts, s.messages, base.completion, delivered.completion));
    ex.base.logprobSum = numberOrUndefined(ex.signals['self.base']);
    ex.delivered.logprobSum = numberOrUndefined(ex.signals['self.delivered']);
  }
  return ex;
}

/** The reply as the model produced it, reasoning included: what the other model is asked to score. */
export function fullReply(c: Completion): string {
  return c.reasoning !== undefined ? `<think>${c.reasoning}</think>${c.text}` : c.text;
}

/**
 * Teacher-forced scores: each reply under both models in one batched call per model. `llr.X` is the mean
 * per-token log-likelihood ratio of X's reply, own model over the other: large when the other model finds
 * the reply very unlikely. `conf.X` is the reply's mean token log-probability under its own model.
 */
async function crossSignals(
  opts: RunnerOptions,
  messages: ChatMessage[],
  b: Completion,
  d: Completion,
): Promise<Record<string, SignalValue>> {
  const reqs = [
    { context: messages, continuation: fullReply(b) },
    { context: messages, continuation: fullReply(d) },
  ];
  // The replies' lexical distance is a detector (src/probes/detectors/lexical-distance.ts).
  const out: Record<string, SignalValue> = {};
  try {
    const [underBase, underDelivered] = await Promise.all([
      opts.base.score(reqs),
      opts.delivered.score(reqs),
    ]);
    const [bb, bd] = underBase;
    const [db, dd] = underDelivered;
    if (!bb || !bd || !db || !dd)
      throw new EndpointError('invalid_response', 'score returned too few results');
    const nb = Math.max(1, bb.tokens.length);
    const nd = Math.max(1, dd.tokens.length);
    Object.assign(out, {
      'self.base': round(bb.total),
      'self.delivered': round(dd.total),
      'llr.base': round((bb.total - db.total) / nb),
      'llr.delivered': round((dd.total - bd.total) / nd),
      'conf.base': round(bb.total / nb),
      'conf.delivered': round(dd.total / nd),
    });
  } catch (err) {
    // Scores are supporting signals: their failure is recorded on the exchange, the replies still count.
    out['score.failed'] = err instanceof Error ? err.message.slice(0, 200) : String(err);
  }
  return out;
}

function toReply(r: PromiseSettledResult<Completion[]>): { reply: ReplyRecord; completion?: Completion } {
  if (r.status === 'fulfilled') {
    const c = r.value[0];
    if (!c) return { reply: failedReply('invalid_response', 'endpoint returned no completion', 1) };
    return {
      completion: c,
      reply: {
        status: 'ok',
        text: c.text,
        reasoning: c.reasoning,
        finishReason: c.finishReason,
        completionTokens: c.usage.completionTokens,
        attempts: 1,
        cached: c.cached,
      },
    };
  }
  const err = r.reason;
  if (err instanceof EndpointError) return { reply: failedReply(err.kind, err.message, err.attempts) };
  return { reply: failedReply('engine', err instanceof Error ? err.message : String(err), 1) };
}

function failedReply(kind: FailureKind, message: string, attempts: number): ReplyRecord {
  return { status: 'failed', failure: { kind, message: message.slice(0, 500) }, attempts };
}

function notAttempted(
  group: ProbeGroup,
  s: PlannedSample,
  failure: NonNullable<ReplyRecord['failure']>,
): Exchange {
  const reply: ReplyRecord = { status: 'failed', failure, attempts: 0 };
  return {
    id: exchangeId(group, s),
    family: group.family,
    probeSetId: group.probeSetId,
    probeSetHash: group.probeSetHash,
    probeId: s.probeId,
    variant: s.variant,
    sample: s.sample,
    seed: s.seed,
    messages: s.messages,
    meta: s.meta,
    base: reply,
    delivered: { ...reply },
    signals: {},
  };
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

function numberOrUndefined(v: SignalValue | undefined): number | undefined {
  return typeof v === 'number' ? v : undefined;
}
