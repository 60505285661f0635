import { sha256Hex } from '../../util/hash.ts';
import { parseJsonValue } from '../../util/zod-check.ts';
import { redactSecrets } from '../redact.ts';
import type { AttemptRecord } from '../types.ts';
import { dispatchWhole } from './dispatch.ts';
import { HttpEndpointError, httpFailure, transportFailure } from './errors.ts';
import { Cancel, HedgePolicy } from './hedge.ts';
import { AdaptiveLimiter } from './limiter.ts';
import { DEFAULT_LIMITS, deadlineError, type HttpLimits, idleError, RequestDeadline } from './limits.ts';
import { type Replica, ReplicaSet } from './replicas.ts';
import { parseReply, streamEvents } from './reply.ts';
import { nextDelay, retryPolicy } from './retry.ts';
import type { RequestSpec, TransportOptions } from './transport-options.ts';

type Outcome<T> =
  | { ok: true; value: T; replica: Replica }
  | { ok: false; failure: HttpEndpointError; replica: Replica };

/** What one attempt's record says besides its outcome. */
interface AttemptBase {
  attempt: number;
  startedAt: number;
  requestHash: string;
  replica: Replica;
  hedge: boolean;
}

/** The shared parts of one logical request's attempts. */
interface Call<T> {
  spec: RequestSpec<T>;
  payload: string | undefined;
  requestHash: string;
  key: string;
  attempts: number;
}

/** A limiter slot held by one attempt; a hedge takes its primary's over (released once, by its holder). */
interface Slot {
  inFlight: number;
  released: boolean;
}

/**
 * One model's HTTP transport: undici pools per replica behind circuit breakers, least-outstanding replica
 * choice, an adaptive in-flight cap, bounded retries on 429/5xx/connection errors (elsewhere when another
 * replica admits), hedged second attempts for generations slower than their peers, and one AttemptRecord
 * per attempt, hedges and abandoned twins included. A failed exchange always ends as a thrown
 * HttpEndpointError, never as a reply.
 */
export class HttpTransport {
  readonly limiter: AdaptiveLimiter;
  readonly replicaSet: ReplicaSet;
  private readonly opts: TransportOptions;
  private readonly policy;
  private readonly hedging: HedgePolicy | undefined;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;
  private readonly limits: HttpLimits;

  constructor(opts: TransportOptions) {
    this.opts = opts;
    this.policy = retryPolicy(opts.retry);
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.random = opts.random ?? Math.random;
    this.now = opts.now ?? Date.now;
    const concurrency = Math.max(1, opts.concurrency ?? 16);
    this.limiter = new AdaptiveLimiter({ max: concurrency, now: this.now });
    this.hedging = opts.hedge === false ? undefined : new HedgePolicy(opts.hedge);
    const t = opts.timeouts ?? {};
    this.limits = {
      requestMs: t.requestMs ?? DEFAULT_LIMITS.requestMs,
      idleMs: t.bodyMs ?? DEFAULT_LIMITS.idleMs,
      connectMs: t.connectMs ?? DEFAULT_LIMITS.connectMs,
      maxReplyBytes: opts.maxReplyBytes ?? DEFAULT_LIMITS.maxReplyBytes,
      maxMetadataBytes: opts.maxMetadataBytes ?? DEFAULT_LIMITS.maxMetadataBytes,
    };
    const limits = this.limits;
    const keepAlive = Math.min(t.keepAliveMs ?? 4000, 4900);
    this.replicaSet = new ReplicaSet(
      opts.roots,
      {
        // A hedge may need a connection while every one of a replica's is busy.
        connections: concurrency + 4,
        keepAliveMs: keepAlive,
        connectMs: limits.connectMs,
        headersMs: t.headersMs ?? limits.requestMs,
        bodyMs: limits.idleMs,
      },
      { now: this.now, ...opts.breaker },
    );
  }

  /** Outstanding requests per replica (for balancing checks and doctor). */
  outstanding(): number[] {
    return this.replicaSet.replicas.map((r) => r.outstanding);
  }

  /** Runs a request with retries; every attempt reaches the observer. */
  async request<T>(spec: RequestSpec<T>): Promise<T> {
    // Serialised once: the bytes sent on every attempt are the bytes hashed (a retried stream keeps its seed).
    const payload = spec.json ?? (spec.body === undefined ? undefined : JSON.stringify(spec.body));
    const call: Call<T> = {
      spec,
      payload,
      requestHash: sha256Hex(`${spec.method} ${spec.path}\n${payload ?? ''}`),
      key: `${spec.method} ${spec.path}`,
      attempts: 0,
    };
    let avoid: Replica | undefined;
    for (let round = 1; ; round++) {
      const outcome = await this.race(call, avoid);
      if (outcome.ok) return outcome.value;
      avoid = outcome.replica;
      // Retry-After delays this request only: it waits here, holding no limiter slot.
      const delay = nextDelay(this.policy, outcome.failure, round, this.random);
      if (delay === undefined) throw outcome.failure.withAttempts(call.attempts);
      await this.sleep(delay);
    }
  }

  /**
   * One attempt, plus a hedge on another replica (or connection) if it is slower than the path's recent
   * high percentile: the first success wins and the other is abandoned (recorded as cancelled). Generations
   * only: metadata calls are cheap and not worth a second request.
   */
  private race<T>(call: Call<T>, avoid: Replica | undefined): Promise<Outcome<T>> {
    if (call.spec.cost) this.hedging?.onAttempt();
    if (!call.spec.cost || !this.hedging) return this.attempt(call, avoid);
    const hedging = this.hedging;
    return new Promise<Outcome<T>>((resolve) => {
      const race = new HedgedRace<T>(
        hedging,
        call.key,
        resolve,
        (o) => this.attempt(call, undefined, o),
        (r) => this.replicaSet.other(r),
      );
      void this.attempt(call, avoid, { signal: race.primary, onSend: race }).then((o) =>
        race.finish(o, race.twin),
      );
    });
  }

  /** One recorded attempt: a limiter slot, a replica, the request, its breaker and limiter bookkeeping. */
  private async attempt<T>(
    call: Call<T>,
    avoid: Replica | undefined,
    o: {
      signal?: Cancel;
      hedge?: boolean;
      /** A slot handed over by the primary (hedges do not queue). */
      slot?: Slot;
      target?: { replica: Replica; probe: boolean };
      onSend?: { sent(r: Replica, slot: Slot): void };
    } = {},
  ): Promise<Outcome<T>> {
    const slot = o.slot ?? { inFlight: await this.limiter.acquire(call.attempts > 0), released: false };
    const inFlight = slot.inFlight;
    const { replica, probe } = o.target ?? this.replicaSet.pick(avoid);
    o.onSend?.sent(replica, slot);
    const base: AttemptBase = {
      attempt: ++call.attempts,
      startedAt: this.now(),
      requestHash: call.requestHash,
      replica,
      hedge: o.hedge === true,
    };
    const started = performance.now();
    replica.outstanding++;
    try {
      const { value, statusCode } = await this.once(call.spec, call.payload, replica, o.signal);
      const durationMs = performance.now() - started;
      this.replicaSet.onSuccess(replica, probe);
      // Only generations inform the latency baseline; metadata calls would make it meaninglessly low.
      if (call.spec.cost) {
        this.limiter.onSuccess(durationMs, call.spec.cost(value));
        this.limiter.onOutcome(inFlight, false);
        this.hedging?.observe(call.key, durationMs);
      }
      this.report(base, durationMs, statusCode);
      return { ok: true, value, replica };
    } catch (err) {
      const durationMs = performance.now() - started;
      if (o.signal?.aborted) {
        replica.breaker.onCancel(probe);
        const failure = new HttpEndpointError('cancelled', 'abandoned: its hedged twin answered first');
        this.report(base, durationMs, undefined, failure);
        return { ok: false, failure, replica };
      }
      const failure = this.redact(transportFailure(err));
      this.report(base, durationMs, failure.status, failure);
      const refused = failure.status === 429 || failure.status === 503;
      if (call.spec.cost) this.limiter.onOutcome(inFlight, refused);
      // A 4xx other than 429 is the request's fault, not the replica's.
      if (failure.retryable || failure.kind === 'timeout') this.replicaSet.onFailure(replica, probe);
      else this.replicaSet.onSuccess(replica, probe);
      return { ok: false, failure, replica };
    } finally {
      replica.outstanding--;
      if (!slot.released) {
        slot.released = true;
        this.limiter.release();
      }
    }
  }

  private async once<T>(
    spec: RequestSpec<T>,
    payload: string | undefined,
    replica: Replica,
    cancel?: Cancel,
  ): Promise<{ value: T; statusCode: number }> {
    const timer = new RequestDeadline(this.limits.requestMs);
    // A lost hedge race cancels through the same signal as the deadline (the caller tells them apart).
    cancel?.once('abort', timer.signal);
    try {
      const headers: Record<string, string> = {
        accept: spec.stream ? 'text/event-stream' : 'application/json',
      };
      if (payload !== undefined) headers['content-type'] = 'application/json';
      if (this.opts.apiKey) headers.authorization = `Bearer ${this.opts.apiKey}`;
      // Read whole (or aborted): an unread body would leak the connection.
      const cap = spec.method === 'GET' ? this.limits.maxMetadataBytes : this.limits.maxReplyBytes;
      const res = await dispatchWhole(
        replica.pool,
        { path: `${replica.basePath}${spec.path}`, method: spec.method, headers, body: payload },
        cap,
        timer.signal,
      );
      const bytes = res.body;
      if (res.statusCode < 200 || res.statusCode >= 300) {
        const retryAfter = res.headers['retry-after'];
        throw httpFailure(
          res.statusCode,
          bytes.toString('utf8'),
          Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          this.now(),
        );
      }
      const data = spec.stream ? streamEvents(bytes.toString('utf8')) : parseReply(bytes, spec.decode);
      // Validated in place when certainly valid (src/util/zod-check.ts): zod's copy of a prompt_logprobs reply
      // was most of the audit path's garbage. zod still judges, and words, anything doubtful.
      const parsed = parseJsonValue(spec.schema, data);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new HttpEndpointError(
          'invalid_response',
          `unexpected response from ${spec.path}: ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
          { status: res.statusCode },
        );
      }
      return { value: parsed.data, statusCode: res.statusCode };
    } catch (err) {
      if (cancel?.aborted) throw err;
      if (timer.expired()) throw deadlineError(this.limits.requestMs);
      if ((err as { code?: string })?.code === 'UND_ERR_BODY_TIMEOUT') throw idleError(this.limits.idleMs);
      throw err;
    } finally {
      timer.clear();
      cancel?.removeListener('abort', timer.signal);
    }
  }

  private redact(err: HttpEndpointError): HttpEndpointError {
    const message = redactSecrets(err.message, [this.opts.apiKey]);
    if (message === err.message) return err;
    return new HttpEndpointError(err.kind, message, {
      status: err.status,
      attempts: err.attempts,
      maxContextLength: err.maxContextLength,
      retryAfterMs: err.retryAfterMs,
      retryable: err.retryable,
    });
  }

  /** One attempt's record, built in one piece (it is made for every HTTP attempt). */
  private report(base: AttemptBase, durationMs: number, status?: number, failure?: HttpEndpointError): void {
    const observer = this.opts.observer;
    if (!observer) return;
    const rec: AttemptRecord = {
      endpoint: this.opts.endpoint,
      attempt: base.attempt,
      startedAt: base.startedAt,
      durationMs,
      ok: failure === undefined,
      requestHash: base.requestHash,
    };
    if (status !== undefined) rec.status = status;
    if (failure) rec.failure = { kind: failure.kind, message: failure.message };
    if (this.replicaSet.replicas.length > 1) rec.replica = base.replica.index;
    if (base.hedge) rec.hedge = true;
    observer(rec);
  }

  /** Idempotent: closing twice is harmless. */
  close(): Promise<void> {
    return this.replicaSet.close();
  }
}

interface HedgeOptions {
  signal: Cancel;
  hedge: true;
  slot: Slot;
  target: { replica: Replica; probe: boolean } | undefined;
}

/**
 * One request's primary attempt and the hedge it may get (`HttpTransport.race`): its state and callbacks on
 * one object, made once per generation request (closures named under tsx cost a property definition each).
 */
class HedgedRace<T> {
  readonly primary = new Cancel();
  twin: Cancel | undefined;
  private pending = 1;
  private settled = false;
  private first: Outcome<T> | undefined;
  private firstReplica: Replica | undefined;
  private primarySlot: Slot | undefined;
  private timer: NodeJS.Timeout | undefined;
  private waited = 0;

  constructor(
    private readonly hedging: HedgePolicy,
    private readonly key: string,
    private readonly resolve: (o: Outcome<T>) => void,
    private readonly hedge: (o: HedgeOptions) => Promise<Outcome<T>>,
    private readonly other: (r: Replica) => { replica: Replica; probe: boolean } | undefined,
  ) {}

  /**
   * The primary was sent: the hedge's clock starts now, not while it queued for a slot (a queued request is
   * not slow, and a hedge would jump the queue it waits in).
   */
  sent(replica: Replica, slot: Slot): void {
    this.firstReplica = replica;
    this.primarySlot = slot;
    if (!this.settled) this.timer = this.arm(this.hedging.delayFor(this.key) ?? this.hedging.minDelayMs);
  }

  /** An attempt ended; `loser` is the other one, abandoned if this one succeeded. */
  finish(o: Outcome<T>, loser: Cancel | undefined): void {
    this.pending--;
    if (this.settled) return;
    if (o.ok) {
      this.settled = true;
      clearTimeout(this.timer);
      loser?.abort();
      this.resolve(o);
    } else if (this.pending === 0) {
      this.settled = true;
      clearTimeout(this.timer);
      this.resolve(this.first?.ok === false ? this.first : o);
    } else if (loser === this.primary) {
      // The hedge failed while the primary, already slower than its peers' tail, still hangs: the primary is
      // abandoned too and the request goes back to the retry loop with the hedge's failure (Retry-After
      // included), so a stalled connection does not keep its slot for the whole stall.
      this.settled = true;
      this.primary.abort();
      this.resolve(o);
    } else this.first ??= o;
  }

  private arm(wait: number): NodeJS.Timeout {
    return setTimeout(() => this.elapsed(wait), wait);
  }

  /**
   * The delay is read when the timer fires, so a request sent before the path had enough replies to know its
   * tail (the first wave of an audit) is still hedged once they are in.
   */
  private elapsed(wait: number): void {
    this.waited += wait;
    if (this.settled) return;
    const delay = this.hedging.delayFor(this.key);
    if (delay === undefined || delay > this.waited) {
      this.timer = this.arm(delay === undefined ? Math.min(2 * wait, 60_000) : delay - this.waited);
      return;
    }
    if (!this.primarySlot || !this.hedging.take()) return;
    // The twin takes over the primary's limiter slot: a request far outside its peers' latency is presumed
    // stuck, and stuck attempts must not fill the limit (on a server that stalls one attempt in thirteen they
    // held every slot for seconds). Extra load stays bounded by the hedge budget.
    const slot = { inFlight: this.primarySlot.inFlight, released: false };
    this.primarySlot.released = true;
    const target = this.firstReplica ? this.other(this.firstReplica) : undefined;
    this.pending++;
    this.twin = new Cancel();
    void this.hedge({ signal: this.twin, hedge: true, slot, target }).then((o) =>
      this.finish(o, this.primary),
    );
  }
}
