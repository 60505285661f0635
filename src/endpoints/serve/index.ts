import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { UserError } from '../../util/errors.ts';
import { TOOL_VERSION } from '../../util/version.ts';
import { type LocalEngine, openLocalEndpoint } from '../local/index.ts';
import { handleChat } from './chat.ts';
import { handleCompletions } from './completions.ts';
import { type HandlerContext, type ServedModel, toHttpError } from './context.ts';
import { HttpError, readJson, sendJson, sendText, unixNow, validate } from './http.ts';
import { ServerMetrics } from './metrics.ts';
import {
  chatRequest,
  completionRequest,
  detokenizeRequest,
  toChatMessage,
  tokenizeChatRequest,
  tokenizePromptRequest,
} from './schemas.ts';

export interface ServeModelSpec {
  dir: string;
  /** Served name (`local:DIR=NAME`); default: the folder as given. */
  name?: string;
}

export interface ServeOptions {
  models: ServeModelSpec[];
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  reasoningParser?: 'think';
  threads?: number;
  /** Required as `Authorization: Bearer KEY` on /v1/* when set. */
  apiKey?: string;
}

export interface RunningServer {
  url: string;
  models: ServedModel[];
  close(): Promise<void>;
}

/**
 * What GET /version answers: a vLLM release whose wire contract this server follows (nested errors,
 * `reasoning`, `structured_outputs`), with probate's own version as semver build metadata.
 */
export const SERVE_VERSION = `0.13.0+probate.${TOOL_VERSION}`;

function authorized(req: IncomingMessage, apiKey: string | undefined): boolean {
  if (!apiKey) return true;
  const given = Buffer.from(req.headers.authorization ?? '');
  const expected = Buffer.from(`Bearer ${apiKey}`);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function modelCard(m: ServedModel) {
  return {
    id: m.id,
    object: 'model',
    created: m.created,
    owned_by: 'vllm',
    root: m.root,
    // Every local model is a full checkpoint, never an adapter over another served model.
    parent: null,
    max_model_len: m.engine.maxModelLen,
    permission: [
      {
        id: `modelperm-${m.id}`,
        object: 'model_permission',
        created: m.created,
        allow_create_engine: false,
        allow_sampling: true,
        allow_logprobs: true,
        allow_search_indices: false,
        allow_view: true,
        allow_fine_tuning: false,
        organization: '*',
        group: null,
        is_blocking: false,
      },
    ],
  };
}

/** A vLLM-compatible OpenAI server over embedded engines; several models share one port like LoRA serving. */
export async function startServer(opts: ServeOptions): Promise<RunningServer> {
  if (!opts.models.length) throw new UserError('serve: name at least one model (local:DIR[=NAME])');
  const engines: LocalEngine[] = [];
  const models: ServedModel[] = [];
  try {
    for (const spec of opts.models) {
      const engine = await openLocalEndpoint(spec.dir, { threads: opts.threads, name: spec.name });
      engines.push(engine);
      models.push({ id: spec.name ?? spec.dir, root: resolve(spec.dir), engine, created: unixNow() });
    }
  } catch (err) {
    await Promise.all(engines.map((e) => e.close()));
    throw err;
  }
  const metrics = new ServerMetrics();
  for (const m of models) metrics.register(m.id);

  const findModel = (name: string | undefined): ServedModel => {
    if (name === undefined) return models[0]!;
    const m = models.find((x) => x.id === name);
    if (!m) throw new HttpError(404, `The model \`${name}\` does not exist.`, 'model');
    return m;
  };

  const route = async (req: IncomingMessage, res: ServerResponse, signal: AbortSignal): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const method = req.method ?? 'GET';
    if (path.startsWith('/v1/') && !authorized(req, opts.apiKey))
      return sendJson(res, 401, { error: 'Unauthorized' });
    const ctx = (model: ServedModel): HandlerContext => ({
      model,
      res,
      metrics,
      reasoningParser: opts.reasoningParser,
      signal,
    });
    const key = `${method} ${path}`;
    switch (key) {
      case 'GET /health':
        return sendText(res, 200, '');
      case 'GET /version':
        return sendJson(res, 200, { version: SERVE_VERSION });
      case 'GET /metrics':
        return sendText(
          res,
          200,
          metrics.render((id) => findModel(id).engine.load.waiting),
          'text/plain; version=0.0.4',
        );
      case 'GET /v1/models':
        return sendJson(res, 200, { object: 'list', data: models.map(modelCard) });
      case 'POST /v1/completions': {
        const body = validate(completionRequest, await readJson(req));
        return handleCompletions(body, ctx(findModel(body.model)));
      }
      case 'POST /v1/chat/completions': {
        const body = validate(chatRequest, await readJson(req));
        return handleChat(body, ctx(findModel(body.model)));
      }
      case 'POST /tokenize': {
        const raw = await readJson(req);
        const chat =
          raw && typeof raw === 'object' && 'messages' in raw
            ? validate(tokenizeChatRequest, raw)
            : undefined;
        const plain = chat ? undefined : validate(tokenizePromptRequest, raw);
        const body = chat ?? plain!;
        const { engine } = findModel(body.model);
        const text = chat
          ? engine.renderChat(chat.messages.map(toChatMessage), {
              addGenerationPrompt: chat.add_generation_prompt,
              continueFinalMessage: chat.continue_final_message,
              kwargs: chat.chat_template_kwargs ?? undefined,
            })
          : plain!.prompt;
        const tokens = engine.tokenize(text, body.add_special_tokens);
        return sendJson(res, 200, {
          count: tokens.length,
          max_model_len: engine.maxModelLen,
          tokens,
          token_strs: body.return_token_strs ? tokens.map((t) => engine.tokenizer.tokenText(t)) : null,
        });
      }
      case 'POST /detokenize': {
        const body = validate(detokenizeRequest, await readJson(req));
        const { engine } = findModel(body.model);
        return sendJson(res, 200, { prompt: engine.detokenize(body.tokens) });
      }
    }
    const known = [
      '/health',
      '/version',
      '/metrics',
      '/v1/models',
      '/v1/completions',
      '/v1/chat/completions',
      '/tokenize',
      '/detokenize',
    ];
    if (known.includes(path)) throw new HttpError(405, `method ${method} not allowed on ${path}`);
    throw new HttpError(404, `no route ${method} ${path}`);
  };

  const server = createServer((req, res) => {
    const aborter = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) aborter.abort();
    });
    route(req, res, aborter.signal).catch((err: unknown) => {
      const error = toHttpError(err);
      if (!res.headersSent) sendJson(res, error.status, error.body());
      else res.end();
    });
  });
  // uvicorn's keep-alive: clients keep theirs below it.
  server.keepAliveTimeout = 5000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 0;
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(opts.port ?? 8000, opts.host ?? '127.0.0.1', () => ok());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    models,
    close: async () => {
      await new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      });
      await Promise.all(engines.map((e) => e.close()));
    },
  };
}
