import { timingSafeEqual } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { isAbsolute, join, resolve, sep } from 'node:path';
import type { z } from 'zod';
import { describeZodIssue, ExitCode, UserError } from '../util/errors.ts';
import { sha256Hex } from '../util/hash.ts';
import { DecideBody, OverrideBody, ReconcileBody, ReleaseBody } from './client.ts';
import { reconcile, release } from './release.ts';
import type { GateService } from './service.ts';
import type { CallerEntry, Scope } from './trust.ts';

const MAX_BODY = 8 * 1024 * 1024;

/** An HTTP refusal with its status (401 unauthenticated, 403 not allowed, 404, 413, 422). */
class HttpRefusal extends UserError {
  constructor(
    readonly status: number,
    message: string,
    exitCode: number = ExitCode.USAGE,
  ) {
    super(message, exitCode);
  }
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpRefusal(413, 'request body too large');
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

function send(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  };
  // A refusal before the body was read: discard it and close, so the connection is not left mid-request.
  if (!req.complete) {
    headers.connection = 'close';
    req.resume();
  }
  res.writeHead(status, headers);
  res.end(text);
}

/** The caller named by a bearer token, compared by sha256 in constant time. */
function authenticate(req: IncomingMessage, callers: ReadonlyArray<CallerEntry>): CallerEntry {
  const m = /^Bearer ([\x21-\x7e]{16,512})$/.exec(String(req.headers.authorization ?? ''));
  if (!m) throw new HttpRefusal(401, 'authentication required: Authorization: Bearer TOKEN');
  const got = Buffer.from(sha256Hex(m[1]!), 'hex');
  let found: CallerEntry | undefined;
  for (const c of callers)
    if (timingSafeEqual(got, Buffer.from(c.tokenSha256, 'hex')) && found === undefined) found = c;
  if (!found) throw new HttpRefusal(401, 'unknown token');
  return found;
}

function requireScope(caller: CallerEntry, scope: Scope): void {
  if (!caller.scopes.includes(scope))
    throw new HttpRefusal(403, `caller '${caller.name}' lacks the '${scope}' scope`);
}

/**
 * A path inside `root` by its real path (symlinks resolved), or a refusal: the gate reads runs and writes
 * releases only under the directories its operator configured, never at a path a caller chose.
 */
export function confine(root: string, ref: string, what: string): string {
  const realRoot = realpathSync(root);
  const asked = isAbsolute(ref) ? resolve(ref) : resolve(realRoot, ref);
  let real: string;
  try {
    real = realpathSync(asked);
  } catch {
    throw new UserError(`${what}: no such path under ${realRoot}`);
  }
  if (real !== realRoot && !real.startsWith(realRoot + sep))
    throw new HttpRefusal(403, `${what}: outside ${realRoot}`);
  return real;
}

/** A release target over HTTP: a webhook, or a new directory whose parent lies under the release root. */
function confineTarget(to: string, releaseRoot: string | undefined): string {
  if (to.startsWith('webhook:')) return to;
  if (!releaseRoot) throw new HttpRefusal(403, 'to: directory releases need gate serve --release-root');
  const abs = isAbsolute(to) ? resolve(to) : resolve(realpathSync(releaseRoot), to);
  const parent = confine(releaseRoot, join(abs, '..'), 'to');
  return join(parent, abs.split(sep).at(-1)!);
}

export interface GateServerOptions {
  /** Run references are confined to this directory. */
  runsRoot: string;
  /** Directory release targets are confined to; without it, only webhook releases are served. */
  releaseRoot?: string;
  tls?: { cert: Buffer; key: Buffer };
  log?: (line: string) => void;
}

/**
 * The gate over HTTP: the key stays in this process. Every POST needs a caller's bearer token from
 * trust.yaml with the route's scope (decide: submit; override: override; release, reconcile: release); run
 * references are confined to the runs root. Refusals answer 401/403/413/422 with {error, exitCode};
 * anything else 500 with a fixed message (details go to this process's stderr). Errors never echo files.
 */
export function createGateServer(gate: GateService, opts: GateServerOptions): Server {
  const log = opts.log ?? (() => {});
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const handle = async (): Promise<unknown> => {
      const url = new URL(req.url ?? '/', 'http://gate');
      if (req.method === 'GET' && url.pathname === '/v1/pub') {
        const p = gate.policy();
        return {
          keyid: gate.keyid,
          pub: gate.pub.export({ type: 'spki', format: 'pem' }).toString(),
          policy: { version: p.policy.version, hash: p.hash },
        };
      }
      if (req.method !== 'POST') throw new HttpRefusal(404, `${req.method} ${url.pathname}: not found`);
      const scope: Record<string, Scope> = {
        '/v1/decide': 'submit',
        '/v1/override': 'override',
        '/v1/release': 'release',
        '/v1/reconcile': 'release',
      };
      const needed = scope[url.pathname];
      if (!needed) throw new HttpRefusal(404, `POST ${url.pathname}: not found`);
      // Authenticate before reading the body: an anonymous caller gets nothing parsed or read.
      requireScope(authenticate(req, gate.trust().callers), needed);
      const body = await readBody(req);
      switch (url.pathname) {
        case '/v1/decide': {
          const b = parse(DecideBody, body, 'decide');
          return gate.decide(confine(opts.runsRoot, b.run, 'run'));
        }
        case '/v1/override': {
          const b = parse(OverrideBody, body, 'override');
          return gate.override(confine(opts.runsRoot, b.run, 'run'), b.envelope);
        }
        case '/v1/release': {
          const b = parse(ReleaseBody, body, 'release');
          return release(gate, b.attestation, confineTarget(b.to, opts.releaseRoot), {
            timeoutMs: b.timeoutMs,
          });
        }
        default: {
          const b = parse(ReconcileBody, body, 'reconcile');
          return reconcile(gate, confine(opts.runsRoot, b.run, 'run'), b.to, { timeoutMs: b.timeoutMs });
        }
      }
    };
    handle().then(
      (result) => send(req, res, 200, result),
      (err: unknown) => {
        if (err instanceof HttpRefusal)
          send(req, res, err.status, { error: err.message.split('\n')[0], exitCode: err.exitCode });
        else if (err instanceof UserError)
          send(req, res, 422, { error: err.message.split('\n')[0], exitCode: err.exitCode });
        else {
          log(`gate: internal error: ${(err as Error)?.message ?? String(err)}`);
          send(req, res, 500, { error: 'internal error in the gate', exitCode: 1 });
        }
      },
    );
  };
  return opts.tls
    ? createHttpsServer({ cert: opts.tls.cert, key: opts.tls.key }, handler)
    : createServer(handler);
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/**
 * Where `gate serve` may listen: loopback always; any other address only with TLS or when the operator
 * says a reverse proxy terminates TLS in front of it (`--behind-proxy`).
 */
export function checkBind(host: string, opts: { tls: boolean; behindProxy: boolean }): void {
  if (LOOPBACK.test(host) || opts.tls || opts.behindProxy) return;
  throw new UserError(
    `--host ${host}: not a loopback address; serve off loopback only with --tls-cert/--tls-key or --behind-proxy`,
  );
}

export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => ok(server.address() as AddressInfo));
  });
}
