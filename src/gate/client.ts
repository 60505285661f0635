import { resolve } from 'node:path';
import { request } from 'undici';
import { z } from 'zod';
import { UserError } from '../util/errors.ts';
import { type ReleaseResult, reconcile, release } from './release.ts';
import { type DecideResult, GateService } from './service.ts';

/** The gate's operations, in-process (`--gate DIR`) or over HTTP (`--gate http://HOST:PORT`). */
export interface GateClient {
  decide(run: string, policy?: string): Promise<DecideResult>;
  override(run: string, envelope: unknown, policy?: string): Promise<DecideResult>;
  release(attestation: unknown, to: string, timeoutMs?: number): Promise<ReleaseResult>;
  reconcile(run: string, to?: string, timeoutMs?: number): Promise<ReleaseResult>;
  close(): Promise<void>;
}

// Paths travel as absolute paths: the gate process reads the run itself (same machine), the client
// never touches the key.
const abs = (p?: string) => (p ? resolve(p) : undefined);
const absTarget = (t?: string) => (t && !t.startsWith('webhook:') ? resolve(t) : t);

export const DecideBody = z.object({ run: z.string().min(1), policy: z.string().optional() });
export const OverrideBody = DecideBody.extend({ envelope: z.unknown() });
export const ReleaseBody = z.object({
  attestation: z.unknown(),
  to: z.string().min(1),
  timeoutMs: z.number().int().positive().optional(),
});
export const ReconcileBody = z.object({
  run: z.string().min(1),
  to: z.string().optional(),
  timeoutMs: z.number().int().positive().optional(),
});

class LocalGate implements GateClient {
  constructor(private readonly gate: GateService) {}
  async decide(run: string, policy?: string) {
    return this.gate.decide(run, abs(policy));
  }
  async override(run: string, envelope: unknown, policy?: string) {
    return this.gate.override(run, envelope, abs(policy));
  }
  release(attestation: unknown, to: string, timeoutMs?: number) {
    return release(this.gate, attestation, absTarget(to)!, { timeoutMs });
  }
  reconcile(run: string, to?: string, timeoutMs?: number) {
    return reconcile(this.gate, run, absTarget(to), { timeoutMs });
  }
  async close() {
    this.gate.close();
  }
}

const ErrorReply = z.object({ error: z.string(), exitCode: z.number().int() });

class HttpGate implements GateClient {
  constructor(private readonly base: string) {}
  private async post<T>(op: string, body: unknown): Promise<T> {
    let res: Awaited<ReturnType<typeof request>>;
    try {
      res = await request(`${this.base}/v1/${op}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
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
      throw new UserError(
        e.success ? e.data.error : `gate answered HTTP ${res.statusCode}`,
        e.success ? e.data.exitCode : 1,
      );
    }
    return data as T;
  }
  decide(run: string, policy?: string) {
    return this.post<DecideResult>('decide', { run: resolve(run), policy: abs(policy) });
  }
  override(run: string, envelope: unknown, policy?: string) {
    return this.post<DecideResult>('override', { run: resolve(run), envelope, policy: abs(policy) });
  }
  release(attestation: unknown, to: string, timeoutMs?: number) {
    return this.post<ReleaseResult>('release', { attestation, to: absTarget(to), timeoutMs });
  }
  reconcile(run: string, to?: string, timeoutMs?: number) {
    return this.post<ReleaseResult>('reconcile', { run: resolve(run), to: absTarget(to), timeoutMs });
  }
  async close() {}
}

export function openGate(spec: string): GateClient {
  if (/^https?:\/\//.test(spec)) return new HttpGate(spec.replace(/\/+$/, ''));
  return new LocalGate(new GateService(spec));
}
