import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { z } from 'zod';
import { describeZodIssue, UserError } from '../util/errors.ts';
import { DecideBody, OverrideBody, ReconcileBody, ReleaseBody } from './client.ts';
import { reconcile, release } from './release.ts';
import type { GateService } from './service.ts';

const MAX_BODY = 8 * 1024 * 1024;

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new UserError('request body too large');
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new UserError('request body is not JSON');
  }
}

function parse<T extends z.ZodType>(schema: T, data: unknown, op: string): z.infer<T> {
  const r = schema.safeParse(data);
  if (!r.success) throw new UserError(describeZodIssue(`/v1/${op}`, r.error.issues));
  return r.data;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * The gate over HTTP: the key stays in this process. Routes mirror GateClient. User errors answer 422 with
 * {error, exitCode}; anything else 500 with a fixed message (details go to this process's stderr).
 */
export function createGateServer(gate: GateService, log: (line: string) => void = () => {}): Server {
  return createServer((req, res) => {
    const handle = async (): Promise<unknown> => {
      const url = new URL(req.url ?? '/', 'http://gate');
      if (req.method === 'GET' && url.pathname === '/v1/pub')
        return { keyid: gate.keyid, pub: gate.pub.export({ type: 'spki', format: 'pem' }).toString() };
      if (req.method !== 'POST') throw new UserError(`${req.method} ${url.pathname}: not found`);
      const body = await readBody(req);
      switch (url.pathname) {
        case '/v1/decide': {
          const b = parse(DecideBody, body, 'decide');
          return gate.decide(b.run, b.policy);
        }
        case '/v1/override': {
          const b = parse(OverrideBody, body, 'override');
          return gate.override(b.run, b.envelope, b.policy);
        }
        case '/v1/release': {
          const b = parse(ReleaseBody, body, 'release');
          return release(gate, b.attestation, b.to, { timeoutMs: b.timeoutMs });
        }
        case '/v1/reconcile': {
          const b = parse(ReconcileBody, body, 'reconcile');
          return reconcile(gate, b.run, b.to, { timeoutMs: b.timeoutMs });
        }
        default:
          throw new UserError(`POST ${url.pathname}: not found`);
      }
    };
    handle().then(
      (result) => send(res, 200, result),
      (err: unknown) => {
        if (err instanceof UserError)
          send(res, 422, { error: err.message.split('\n')[0], exitCode: err.exitCode });
        else {
          log(`gate: internal error: ${(err as Error)?.message ?? String(err)}`);
          send(res, 500, { error: 'internal error in the gate', exitCode: 1 });
        }
      },
    );
  });
}

export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => ok(server.address() as AddressInfo));
  });
}
