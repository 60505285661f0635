import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny vLLM-shaped server (GET /version, GET /v1/models, POST /v1/chat/completions) whose judge answers
 * are scripted per model name: it forces failure modes (invalid JSON, invented citations, position bias)
 * deterministically, over real HTTP through the real client.
 */
export type Script = (user: string, body: Record<string, unknown>) => string;

export async function startScriptedServer(
  scripts: Record<string, Script>,
): Promise<{ url: string; close: () => Promise<void>; judgeRequests: Record<string, unknown>[] }> {
  const judgeRequests: Record<string, unknown>[] = [];
  const server: Server = createServer((req, res) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/version') return send(200, { version: '0.11.0' });
    if (req.method === 'GET' && req.url === '/v1/models') {
      return send(200, {
        object: 'list',
        data: Object.keys(scripts).map((id) => ({
          id,
          object: 'model',
          created: 0,
          owned_by: 'vllm',
          root: id,
          parent: null,
          max_model_len: 512,
        })),
      });
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions')
      return send(404, { error: { message: 'not found' } });
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>;
      const script = scripts[String(body.model)];
      if (!script) return send(404, { error: { message: 'unknown model', param: 'model' } });
      const messages = body.messages as { role: string; content: string }[];
      const user = messages.find((m) => m.role === 'user')?.content ?? '';
      const isJudge = body.response_format !== undefined || body.structured_outputs !== undefined;
      if (isJudge) judgeRequests.push(body);
      const text = isJudge ? script(user, body) : 'A plain greedy reply.';
      send(200, {
        id: 'x',
        object: 'chat.completion',
        created: 0,
        model: body.model,
        choices: [
          { index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop', logprobs: null },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    judgeRequests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Reply A / Reply B from the rendered user turn. */
export function replies(user: string): { a: string; b: string } {
  return {
    a: /\nReply A: (.*)\nReply B: /s.exec(user)?.[1] ?? '',
    b: /\nReply B: (.*)$/s.exec(user)?.[1] ?? '',
  };
}
