import type { IncomingHttpHeaders } from 'node:http';
import { type Dispatcher, errors } from 'undici';
import type { Cancel } from './hedge.ts';
import { announcedOverCap, arrivedOverCap } from './limits.ts';

export interface WholeReply {
  statusCode: number;
  headers: IncomingHttpHeaders;
  /** The whole body, at most the cap. */
  body: Buffer;
}

/**
 * One request on undici's `dispatch()`, its reply gathered whole (every reply is parsed whole, so a body
 * stream, its async resource and its promise per chunk were overhead on the audit path; BENCHMARKS.md).
 * `signal` aborts it wherever it is: queued for a connection (rejected at once; never sent), sending, or
 * reading; an abort destroys the connection as `request()` does, so a stalled reply does not keep
 * its socket. A body over `maxBytes` (announced or actual) fails as `truncated` and is never returned.
 */
export function dispatchWhole(
  pool: Dispatcher,
  opts: { path: string; method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  maxBytes: number,
  signal: Cancel,
): Promise<WholeReply> {
  return new Promise<WholeReply>((resolve, reject) => {
    const handler = new WholeReplyHandler(resolve, reject, maxBytes, signal);
    signal.once('abort', handler.onAbort);
    pool.dispatch(opts, handler);
  });
}

/**
 * The reply's handler: a class, so a request allocates one object and one bound abort listener rather than a
 * closure per callback (under tsx each closure is also named through `Object.defineProperty` as it is made,
 * a measurable share of the audit path's own CPU).
 */
class WholeReplyHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined;
  private statusCode = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private settled = false;
  /** Not yet on a connection: the caller is answered now, and the request is dropped when it would be sent. */
  readonly onAbort: () => void;

  constructor(
    private readonly resolve: (r: WholeReply) => void,
    private readonly reject: (err: Error) => void,
    private readonly maxBytes: number,
    private readonly signal: Cancel,
  ) {
    this.onAbort = this.abort.bind(this);
  }

  private abort(): void {
    if (this.controller) this.controller.abort(new errors.RequestAbortedError());
    else this.fail(new errors.RequestAbortedError());
  }

  private settle(): void {
    this.settled = true;
    this.signal.removeListener('abort', this.onAbort);
  }

  private fail(err: Error): void {
    if (this.settled) return;
    this.settle();
    this.reject(err);
  }

  /** Over the cap: the caller gets `truncated`, and the connection is closed. */
  private cut(c: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
    c.abort(err);
  }

  onRequestStart(c: Dispatcher.DispatchController): void {
    this.controller = c;
    if (this.signal.aborted) c.abort(new errors.RequestAbortedError());
  }

  onResponseStart(c: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    this.statusCode = status;
    this.headers = headers;
    const refused = announcedOverCap(headers['content-length'], this.maxBytes);
    if (refused) this.cut(c, refused);
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.byteLength;
    if (this.size <= this.maxBytes) {
      this.chunks.push(chunk);
      return;
    }
    this.cut(c, arrivedOverCap(this.maxBytes));
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settle();
    const { chunks, size } = this;
    this.resolve({
      statusCode: this.statusCode,
      headers: this.headers,
      body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size),
    });
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }
}
