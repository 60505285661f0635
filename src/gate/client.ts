import { resolve } from 'node:path';
import { request } from 'undici';
import { z } from 'zod';
import { UserError } from '../util/errors.ts';
import { type ReleaseResult, reconcile, release } from './release.ts';
import { type DecideResult, GateService } from './service.ts';

/** The gate's pinned identity: its public key and the policy it decides under. */
export interface GateIdentity {
  keyid: string;
  pub: string;
  policy: { version: string; hash: string };
}

/**
 * The gate's operations, in-process (`--gate DIR`) or over HTTP (`--gate http(s)://HOST:PORT`). There is no
 * way to hand the gate a policy: it decides only under its own pinned one.
 */
export interface GateClient {
  decide(run: string): Promise<DecideResult>;
  override(run: string, envelope: unknown): Promise<DecideResult>;
  release(attestation: unknown, to: string, timeoutMs?: number): Promise<ReleaseResult>;
  reconcile(run: string, to?: string, timeoutMs?: number): Promise<ReleaseResult>;
  identity(): Promise<GateIdentity>;
  close(): Promise<void>;
}

/** The environment variable holding a `gate serve` caller's bearer token (never a flag: no secrets in argv). */
export const GATE_TOKEN_ENV = 'PROBATE_GATE_TOKEN';

const absTarget = (t?: string) => (t && !t.startsWith('webhook:') ? resolve(t) : t);

// Request bodies are strict: an unknown field (e.g. a `policy` path) is refused, never ignored.
export const DecideBody = z.strictObject({ run: z.string().min(1).max(4096) });
export const OverrideBody = DecideBody.extend({ envelope: z.unknown() });
export const ReleaseBody = z.strictObject({
  attestation: z.unknown(),
  to: z.string().min(1).max(4096),
  timeoutMs: z.number().int().positive().max(600_000).optional(),
});
export const ReconcileBody = z.strictObject({
  run: z.string().min(1).max(4096),
  to: z.string().max(4096).optional(),
  timeoutMs: z.number().int().positive().max(600_000).optional(),
});

class LocalGate implements GateClient {
  constructor(private readonly gate: GateService) {}
  async decide(run: string) {
    return this.gate.decide(run);
  }
  async override(run: string, envelope: unknown) {
    return this.gate.override(run, envelope);
  }
  release(attestation: unknown, to: string, timeoutMs?: number) {
    return release(this.gate, attestation, absTarget(to)!, { timeoutMs });
  }
  reconcile(run: string, to?: string, timeoutMs?: number) {
    return reconcile(this.gate, run, absTarget(to), { timeoutMs });
  }
  async identity() {
    const p = this.gate.policy();
    return {
      keyid: this.gate.keyid,
      pub: this.gate.pub.export({ type: 'spki', format: 'pem' }).toString(),
      policy: { version: p.policy.version, hash: p.hash },
    };
  }
  async close() {
    this.gate.close();
  }
}

const ErrorReply = z.object({ error: z.string(), exitCode: z.number().int() });

class HttpGate implements GateClient {
  constructor(
    private readonly base: string,
    private readonly token: string | undefined,
  ) {}
  private async call<T>(method: 'GET' | 'POST', op: string, body?: unknown): Promise<T> {
    let res: Awaited<ReturnType<typeof request>>;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    try {
      res = await request(`${this.base}/v1/${op}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new UserError(
        `--gate ${this.base}: cannot reach the gate (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
        1,
      );
    }
    const text = await res.body.text();
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new UserError(`--gate ${this.base}: reply is not JSON (HTTP ${res.statusCode})`, 1);
    }
    if (res.statusCode !== 200) {
      const e = ErrorReply.safeParse(data);
      const hint =
        (res.statusCode === 401 || res.statusCode === 403) && !this.token ? ` (set ${GATE_TOKEN_ENV})` : '';
      throw new UserError(
        e.success ? `${e.data.error}${hint}` : `gate answered HTTP ${res.statusCode}${hint}`,
        e.success ? e.data.exitCode : 1,
      );
    }
    return data as T;
  }
  decide(run: string) {
    return this.call<DecideResult>('POST', 'decide', { run: resolve(run) });
  }
  override(run: string, envelope: unknown) {
    return this.call<DecideResult>('POST', 'override', { run: resolve(run), envelope });
  }
  release(attestation: unknown, to: string, timeoutMs?: number) {
    return this.call<ReleaseResult>('POST', 'release', { attestation, to: absTarget(to), timeoutMs });
  }
  reconcile(run: string, to?: string, timeoutMs?: number) {
    return this.call<ReleaseResult>('POST', 'reconcile', { run: resolve(run), to: absTarget(to), timeoutMs });
  }
  identity() {
    return this.call<GateIdentity>('GET', 'pub');
  }
  async close() {}
}

export function openGate(spec: string, env: NodeJS.ProcessEnv = process.env): GateClient {
  if (/^https?:\/\//.test(spec))
    return new HttpGate(spec.replace(/\/+$/, ''), env[GATE_TOKEN_ENV] || undefined);
  return new LocalGate(new GateService(spec));
}
