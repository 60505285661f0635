import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A vLLM-shaped server whose answers can be made hostile route by route: a status and body, a reset, a body
 * that trickles one byte at a time, a body cut short, a hang. Unscripted routes answer like a healthy vLLM
 * 0.12 serving `base` and `delivered` (and `judge`), so a case breaks exactly one thing.
 */
export type Behaviour =
  | { status?: number; headers?: Record<string, string>; body: string }
  | { kind: 'reset' } // socket destroyed before any answer
  | { kind: 'truncate'; body: string } // announces the whole body, sends half, then closes
  | { kind: 'trickle'; everyMs: number } // headers, then one byte every `everyMs`, forever
  | { kind: 'hang' } // never answers
  | { kind: 'huge'; bytes: number }; // a 200 of `bytes` bytes of JSON-looking text

/** Route key: `GET /version`, `GET /v1/models`, `POST /v1/chat/completions`, `POST /v1/completions`. */
export type Script = Partial<Record<string, Behaviour>>;

export const MODELS = ['base', 'delivered', 'judge'];

export function chatReply(content: string, model = 'delivered'): string {
  return JSON.stringify({
    id: 'x',
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop', logprobs: null }],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
  });
}

const healthy: Record<string, (body: Record<string, unknown>) => string> = {
  'GET /version': () => JSON.stringify({ version: '0.12.0' }),
  'GET /v1/models': () =>
    JSON.stringify({
      object: 'list',
      data: MODELS.map((id) => ({ id, object: 'model', root: id, parent: null, max_model_len: 512 })),
    }),
  'POST /v1/chat/completions': (b) => chatReply('A plain reply.', String(b.model)),
  'POST /v1/completions': (b) =>
    JSON.stringify({
      id: 'x',
      object: 'text_completion',
      model: b.model,
      choices: [{ index: 0, text: ' plain', finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
    }),
};

export interface HostileServer {
  url: string;
  close(): Promise<void>;
}

export async function startHostileServer(
  script: Script = {},
  opts: { apiKey?: string } = {},
): Promise<HostileServer> {
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body: Record<string, unknown> = {};
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : {};
    } catch {}
    const key = `${req.method} ${(req.url ?? '/').split('?')[0]}`;
    if (opts.apiKey && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      res.writeHead(401, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ error: 'Unauthorized' }));
    }
    const b = script[key];
    if (!b) {
      const h = healthy[key];
      res.writeHead(h ? 200 : 404, { 'content-type': 'application/json' });
      return res.end(h ? h(body) : JSON.stringify({ detail: 'Not Found' }));
    }
    if ('body' in b && !('kind' in b)) {
      res.writeHead(b.status ?? 200, { 'content-type': 'application/json', ...b.headers });
      return res.end(b.body);
    }
    switch (b.kind) {
      case 'reset':
        return req.socket.destroy();
      case 'hang':
        return;
      case 'truncate':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(b.body.length) });
        res.write(b.body.slice(0, Math.floor(b.body.length / 2)));
        return setTimeout(() => req.socket.destroy(), 5);
      case 'huge': {
        res.writeHead(200, { 'content-type': 'application/json' });
        const block = 'x'.repeat(64 * 1024);
        let sent = 0;
        const pump = () => {
          while (sent < b.bytes) {
            sent += block.length;
            if (!res.write(block)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.write('{"pad":"');
        return pump();
      }
      case 'trickle': {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders(); // headers now; the body then stalls
        const t = setInterval(() => res.write(' '), b.everyMs);
        timers.add(t);
        res.on('close', () => {
          clearInterval(t);
          timers.delete(t);
        });
        return;
      }
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((r) => {
        for (const t of timers) clearInterval(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
