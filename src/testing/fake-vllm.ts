import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatLogprobsText, promptLogprobsText, RawJson } from './fake-vllm-json.ts';
import {
  decodeToken,
  defaultReply,
  encode,
  instanceOf,
  type Msg,
  renderChat,
  tokenLogprob,
  truncate,
} from './fake-vllm-model.ts';
import type { FakeVllm, FakeVllmOptions, Fault } from './fake-vllm-options.ts';

// biome-ignore lint/suspicious/noExplicitAny: request bodies are free-form JSON in this test double.
type Loose = any;
type Body = Record<string, Loose>;

export {
  type FakeVllm,
  type FakeVllmOptions,
  type Fault,
  type FaultProfile,
  FLAKY_PROFILE,
} from './fake-vllm-options.ts';

export async function startFakeVllm(opts: FakeVllmOptions = {}): Promise<FakeVllm> {
  const version = opts.version === undefined ? '0.12.0' : opts.version;
  const [maj = 0, min = 0, pat = 0] = (version ?? '99').split('.').map((x) => Number.parseInt(x, 10));
  const flat = opts.errorShape
    ? opts.errorShape === 'flat'
    : maj === 0 && (min < 10 || (min === 10 && pat < 1));
  const models = opts.models ?? [
    { id: 'delivered', root: '/models/delivered', parent: null, max_model_len: 512 },
  ];
  const reasoningField = opts.reasoningField === undefined ? 'reasoning' : opts.reasoningField;
  const structured = opts.structured ?? ['structured_outputs', 'response_format'];
  const faults = [...(opts.faults ?? [])];
  const profile = opts.profile;
  let rng = (profile?.seed ?? 1) >>> 0 || 1;
  const draw = () => {
    // xorshift32: reproducible fault sequences for a given seed.
    rng ^= rng << 13;
    rng ^= rng >>> 17;
    rng ^= rng << 5;
    return (rng >>> 0) / 2 ** 32;
  };
  const drawFault = (streamed: boolean): Fault | undefined => {
    if (!profile) return undefined;
    // One draw per kind, so each rate holds on its own (a request can only show the first that hits).
    const hit503 = draw() < (profile.p503 ?? 0);
    const hitStall = draw() < (profile.pStall ?? 0);
    const hitReset = draw() < (profile.pReset ?? 0);
    const hitSse = draw() < (profile.pSseError ?? 0);
    if (hit503) return { kind: 'status', status: 503, retryAfter: profile.retryAfter };
    if (hitStall) return { kind: 'stall', ms: profile.stallMs ?? 3000 };
    if (streamed && hitSse) return { kind: 'sse_error' };
    if (hitReset) return { kind: 'reset' };
    return undefined;
  };
  const requests: FakeVllm['requests'] = [];
  const stats = { generations: 0, peakInFlight: 0, rejected: 0 };
  let inFlight = 0;
  let busy = 0;
  const queue: Array<() => void> = [];

  const json = (
    res: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
    raw?: RawJson,
  ) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(raw ? raw.stringify(body) : JSON.stringify(body));
  };
  const error = (res: ServerResponse, status: number, message: string, headers?: Record<string, string>) => {
    const detail = {
      message,
      type: status === 400 ? 'BadRequestError' : 'ServerError',
      param: null,
      code: status,
    };
    json(res, status, flat ? { object: 'error', ...detail } : { error: detail }, headers);
  };
  const extra = {
    service_tier: null,
    kv_transfer_params: null,
    system_fingerprint: null,
    prompt_logprobs: null,
  };

  async function generate(req: IncomingMessage, res: ServerResponse, path: string, body: Body) {
    const fault = faults.shift() ?? drawFault(Boolean(body.stream));
    if (fault?.kind === 'status') {
      return error(
        res,
        fault.status,
        `fault ${fault.status}`,
        fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
      );
    }
    if (fault?.kind === 'context') {
      return error(
        res,
        400,
        "This model's maximum context length is 512 tokens. However, you requested 900 tokens.",
      );
    }
    if (fault?.kind === 'garbage') return json(res, 200, { choices: 'overloaded, try later' });
    if (fault?.kind === 'echo_auth') return error(res, 400, `bad header: ${req.headers.authorization}`);
    if (fault?.kind === 'stall') {
      setTimeout(() => res.socket?.destroy(), fault.ms);
      return;
    }
    if (opts.maxConcurrent !== undefined && inFlight > opts.maxConcurrent) {
      stats.rejected++;
      return error(res, 429, 'too many requests');
    }
    if (opts.slots !== undefined) {
      if (busy >= opts.slots) await new Promise<void>((r) => queue.push(r));
      else busy++;
    }
    try {
      if (opts.latencyMs) await new Promise((r) => setTimeout(r, opts.latencyMs));
    } finally {
      if (opts.slots !== undefined) {
        const next = queue.shift();
        if (next) next();
        else busy--;
      }
    }
    if (body.prompt_logprobs !== undefined && opts.noPromptLogprobs)
      return error(res, 400, 'prompt_logprobs unsupported');
    if (body.chat_template_kwargs !== undefined && opts.rejectTemplateKwargs)
      return error(res, 400, 'chat_template_kwargs: extra inputs are not permitted');
    const model = models.find((m) => m.id === body.model);
    if (!model) return error(res, 404, `The model \`${body.model}\` does not exist.`);
    const chat = path === '/v1/chat/completions';
    const promptIds: number[] = chat
      ? renderChat(body.messages as Msg[], !body.continue_final_message)
      : Array.isArray(body.prompt)
        ? (body.prompt as number[])
        : [256, ...encode(String(body.prompt))];
    const maxTokens = Number(body.max_tokens ?? body.max_completion_tokens ?? 16);
    if (promptIds.length + maxTokens > (model.max_model_len ?? 512)) {
      return error(
        res,
        400,
        `This model's maximum context length is ${model.max_model_len ?? 512} tokens. However, you requested ${promptIds.length + maxTokens} tokens.`,
      );
    }
    const schema =
      (structured.includes('structured_outputs') && body.structured_outputs?.json) ||
      (structured.includes('response_format') && body.response_format?.json_schema?.schema) ||
      (structured.includes('guided_json') && body.guided_json);
    const n = Number(body.n ?? 1);
    // The big per-token arrays are rendered from cached text (src/testing/fake-vllm-json.ts), same bytes.
    const spliced = new RawJson();
    const messages: Msg[] = chat ? body.messages : [{ role: 'user', content: String(body.prompt) }];
    const choices = Array.from({ length: n }, (_, j) => {
      let raw = schema
        ? JSON.stringify(instanceOf(schema))
        : defaultReply(messages, j, Number(body.temperature ?? 1));
      const prompt = messages.map((m) => m.content).join('\n');
      const rule = opts.rules?.[String(body.model)]?.find((r) => r.when(prompt));
      if (rule && !schema) raw = rule.reply(raw, prompt);
      if (opts.reasonsOnlyWhenAsked && !askedToReason(body, messages, opts.reasonsOnlyWhenAsked === 'kwargs'))
        raw = raw.replace(/^<think>[\s\S]*?<\/think>/, '');
      const { text, finish } = truncate(raw, maxTokens);
      const ids = encode(text);
      const k = Number(body.top_logprobs ?? body.logprobs ?? 0);
      const tokenInfo = ids.map((id) => ({ token: decodeToken(id), logprob: tokenLogprob(id), bytes: [id] }));
      const base = { index: j, finish_reason: finish, stop_reason: null, token_ids: null };
      if (!chat) {
        const lp =
          body.logprobs === undefined || body.logprobs === null
            ? null
            : {
                tokens: tokenInfo.map((t) => t.token),
                token_logprobs: tokenInfo.map((t) => t.logprob),
                top_logprobs: tokenInfo.map((t) => ({ [t.token]: t.logprob })),
                text_offset: tokenInfo.map((_, i) => i),
              };
        const promptLp =
          body.prompt_logprobs === undefined ? null : spliced.put(promptLogprobsText(promptIds));
        return { ...base, text, logprobs: lp, prompt_logprobs: promptLp };
      }
      let content: string | null = text;
      let reasoning: string | null = null;
      const m = /^<think>([\s\S]*?)<\/think>/.exec(text);
      if (reasoningField && m) {
        reasoning = m[1]!;
        content = text.slice(m[0].length);
      }
      const message: Record<string, unknown> = { role: 'assistant', content, tool_calls: [] };
      if (reasoningField) message[reasoningField] = reasoning;
      const logprobs = !body.logprobs
        ? null
        : k === 0
          ? { content: spliced.put(chatLogprobsText(ids)) }
          : { content: tokenInfo.map((t) => ({ ...t, top_logprobs: Array.from({ length: k }, () => t) })) };
      return { ...base, message, logprobs };
    });
    const completionTokens = choices.reduce(
      (s, c) => s + encode(String((c as Loose).text ?? (c as Loose).message?.content ?? '')).length,
      0,
    );
    const usage = {
      prompt_tokens: promptIds.length,
      completion_tokens: completionTokens,
      total_tokens: promptIds.length + completionTokens,
      prompt_tokens_details: null,
    };
    if (body.stream)
      return stream(res, chat, choices, usage, fault?.kind === 'sse_error', fault?.kind === 'reset');
    if (fault?.kind === 'reset') {
      const full = spliced.stringify({ id: 'x', object: 'chat.completion', choices, usage });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length) });
      res.write(full.slice(0, Math.floor(full.length / 2)));
      setTimeout(() => res.socket?.destroy(), 5);
      return;
    }
    json(
      res,
      200,
      {
        id: 'cmpl-1',
        object: chat ? 'chat.completion' : 'text_completion',
        created: 1,
        model: body.model,
        choices,
        usage,
        ...extra,
      },
      {},
      spliced,
    );
  }

  function stream(
    res: ServerResponse,
    chat: boolean,
    choices: Loose[],
    usage: unknown,
    failMidway: boolean,
    cut = false,
  ) {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const c of choices) {
      const delta = chat
        ? {
            role: 'assistant',
            content: c.message.content,
            ...(reasoningField ? { [reasoningField]: c.message[reasoningField] } : {}),
          }
        : undefined;
      const chunk = chat
        ? { index: c.index, delta, finish_reason: null }
        : { index: c.index, text: c.text, finish_reason: null };
      res.write(`data: ${JSON.stringify({ object: 'chunk', choices: [chunk] })}\n\n`);
      if (cut) {
        setTimeout(() => res.socket?.destroy(), 5);
        return;
      }
      if (failMidway) {
        res.write(
          `data: ${JSON.stringify({ error: { message: 'engine died mid-stream', type: 'InternalServerError', code: 500 } })}\n\n`,
        );
        res.end('data: [DONE]\n\n');
        return;
      }
      const end = chat
        ? { index: c.index, delta: {}, finish_reason: c.finish_reason }
        : { index: c.index, text: '', finish_reason: c.finish_reason };
      res.write(`data: ${JSON.stringify({ choices: [end] })}\n\n`);
    }
    res.write(`data: ${JSON.stringify({ choices: [], usage })}\n\n`);
    res.end('data: [DONE]\n\n');
  }

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = (req.url ?? '/').split('?')[0]!;
    let body: Body = {};
    if (chunks.length) {
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return error(res, 400, 'body is not JSON');
      }
    }
    if (opts.recordRequests !== false)
      requests.push({ method: req.method ?? 'GET', path, body, auth: req.headers.authorization });
    if (opts.apiKey && path.startsWith('/v1/') && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return json(res, 401, { error: 'Unauthorized' });
    }
    if (req.method === 'GET' && path === '/version') {
      return version === null ? json(res, 404, { detail: 'Not Found' }) : json(res, 200, { version });
    }
    if (req.method === 'GET' && path === '/health') return res.writeHead(200).end();
    if (req.method === 'GET' && path === '/v1/models') {
      const data = models.map((m) => ({
        object: 'model',
        created: 1,
        owned_by: 'vllm',
        permission: [],
        root: m.id,
        parent: null,
        max_model_len: 512,
        ...m,
      }));
      return json(res, 200, { object: 'list', data });
    }
    if (req.method === 'POST' && path === '/tokenize') {
      const tokens = body.messages
        ? renderChat(body.messages, body.add_generation_prompt !== false)
        : [...(body.add_special_tokens === false ? [] : [256]), ...encode(String(body.prompt ?? ''))];
      return json(res, 200, { count: tokens.length, max_model_len: 512, tokens, token_strs: null });
    }
    if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/v1/completions')) {
      stats.generations++;
      inFlight++;
      stats.peakInFlight = Math.max(stats.peakInFlight, inFlight);
      try {
        await generate(req, res, path, body);
      } finally {
        inFlight--;
      }
      return;
    }
    error(res, 404, `no route ${path}`);
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    faults,
    stats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Thinking switched on by the template kwarg, or asked for in the last user turn. */
function askedToReason(body: Body, messages: Msg[], kwargsOnly: boolean): boolean {
  if (body.chat_template_kwargs?.enable_thinking === true) return true;
  if (kwargsOnly) return false;
  const user = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  return /step by step/i.test(user);
}
