import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';

/** An error answered in vLLM's current (nested) shape: `{"error":{"message","type","param","code"}}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
  }

  get type(): string {
    return (
      { 400: 'BadRequestError', 401: 'Unauthorized', 404: 'NotFoundError', 501: 'NotImplementedError' }[
        this.status
      ] ?? 'InternalServerError'
    );
  }

  body(): { error: { message: string; type: string; param: string | null; code: number } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.status } };
  }
}

const MAX_BODY = 16 * 1024 * 1024;

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(400, `request body exceeds ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/** zod at the boundary: the first issue becomes a 400 naming the field. */
export function validate<T extends z.ZodType>(schema: T, data: unknown): z.infer<T> {
  const parsed = schema.safeParse(data);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const param = issue.path.map(String).join('.') || null;
  throw new HttpError(400, param ? `${param}: ${issue.message}` : issue.message, param);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendText(res: ServerResponse, status: number, body: string, type = 'text/plain'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** Server-sent events as vLLM writes them: `data: JSON\n\n` per event, `data: [DONE]\n\n` at the end. */
export class SseWriter {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  }

  send(event: unknown): void {
    if (!this.res.writableEnded) this.res.write(`data: ${JSON.stringify(event)}\n\n`);
  }

  /** An error after the headers went out: an error event with HTTP 200, then [DONE]. */
  fail(err: HttpError): void {
    this.send(err.body());
    this.done();
  }

  done(): void {
    if (!this.res.writableEnded) this.res.end('data: [DONE]\n\n');
  }
}

export const requestId = (prefix: string): string => `${prefix}-${crypto.randomUUID().replaceAll('-', '')}`;

export const unixNow = (): number => Math.floor(Date.now() / 1000);
