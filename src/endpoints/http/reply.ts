import { HttpEndpointError } from './errors.ts';
import { sseData } from './sse.ts';

/** A non-streamed reply's bytes → JSON (`decode` where the request has its own parser). */
export function parseReply(bytes: Buffer, decode?: (bytes: Buffer) => unknown): unknown {
  try {
    return decode ? decode(bytes) : JSON.parse(bytes.toString('utf8'));
  } catch {
    throw notJson(bytes.toString('utf8'));
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw notJson(text);
  }
}

function notJson(text: string): HttpEndpointError {
  return new HttpEndpointError('invalid_response', `response is not JSON: ${text.slice(0, 120)}`);
}

/** SSE body → parsed events. An error event (sent with HTTP 200) or a missing `[DONE]` fails the exchange. */
export function streamEvents(text: string): unknown[] {
  const { events, done } = sseData(text);
  const parsed = events.map(parseJson);
  for (const event of parsed) {
    const error = (event as { error?: { message?: unknown; code?: unknown } })?.error;
    if (error) {
      const code = typeof error.code === 'number' ? error.code : undefined;
      const message = typeof error.message === 'string' ? error.message : JSON.stringify(error);
      throw new HttpEndpointError('stream_error', `error event in stream: ${message}`, {
        status: code,
        retryable: code === undefined || code === 429 || code >= 500,
      });
    }
  }
  if (!done) throw new HttpEndpointError('stream_error', 'stream ended without [DONE]', { retryable: true });
  return parsed;
}
