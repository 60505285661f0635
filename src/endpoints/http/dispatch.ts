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
    let controller: Dispatcher.DispatchController | undefined;
    let statusCode = 0;
    let headers: IncomingHttpHeaders = {};
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = () => {
      settled = true;
      signal.removeListener('abort', onAbort);
    };
    const fail = (err: Error) => {
      if (settled) return;
      settle();
      reject(err);
    };
    // Over the cap: the caller gets `truncated`, and the connection is closed.
    const cut = (c: Dispatcher.DispatchController, err: Error) => {
      fail(err);
      c.abort(err);
    };
    // Not yet on a connection: the caller is answered now, and the request is dropped when it would be sent.
    const onAbort = () =>
      controller
        ? controller.abort(new errors.RequestAbortedError())
        : fail(new errors.RequestAbortedError());
    signal.once('abort', onAbort);
    pool.dispatch(opts, {
      onRequestStart(c) {
        controller = c;
        if (signal.aborted) c.abort(new errors.RequestAbortedError());
      },
      onResponseStart(c, status, responseHeaders) {
        statusCode = status;
        headers = responseHeaders as IncomingHttpHeaders;
        const refused = announcedOverCap(headers['content-length'], maxBytes);
        if (refused) cut(c, refused);
      },
      onResponseData(c, chunk) {
        if (settled) return;
        size += chunk.byteLength;
        if (size <= maxBytes) {
          chunks.push(chunk);
          return;
        }
        cut(c, arrivedOverCap(maxBytes));
      },
      onResponseEnd() {
        if (settled) return;
        settle();
        resolve({
          statusCode,
          headers,
          body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size),
        });
      },
      onResponseError(_c, err) {
        fail(err);
      },
    });
  });
}
