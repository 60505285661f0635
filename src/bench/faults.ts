import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { runAudit } from '../audit/audit.ts';
import { defaultSamplesInFlight } from '../audit/runner.ts';
import { VllmEndpoint } from '../endpoints/http/vllm.ts';
import type { AttemptRecord } from '../endpoints/types.ts';
import { loadPolicy } from '../gate/policy.ts';
import { verifyLedger } from '../ledger/verify.ts';
import type { LoadedProbeSet } from '../probes/load.ts';
import type { FakeVllmOptions } from '../testing/fake-vllm.ts';

/** One replica in its own process (so it can die as a server dies, and shares no event loop with the audit). */
export interface ReplicaProcess {
  url: string;
  kill(): void;
  stop(): Promise<void>;
}

export async function startReplica(script: string, opts: FakeVllmOptions): Promise<ReplicaProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, JSON.stringify(opts)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  return {
    url: line.replace('listening ', ''),
    kill: () => {
      child.kill('SIGKILL');
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface ScenarioResult {
  scenario: string;
  replicas: number;
  seconds: number;
  exchanges: number;
  failed: number;
  exchanges_per_s: number;
  attempts: { ok: number; failed: number; hedges: number; cancelled: number };
  ledger_verified: boolean;
  /** Set when a replica was killed: the answered attempts at which it died (of `attempts.ok` in all). */
  killed_at?: number;
}

export interface ScenarioSpec {
  scenario: string;
  urls: string[];
  sets: readonly LoadedProbeSet[];
  samples: number;
  /** Samples in flight in the runner; 0: what the endpoints ask for (as `probate audit` does). */
  concurrency: number;
  /** HTTP requests in flight per model endpoint. */
  httpConcurrency: number;
  stream: boolean;
  /**
   * Called with the count of answered attempts as the audit runs (to kill a replica mid-run; exchanges are
   * reported per finished group, and groups finish late, so they would place the kill near the end).
   */
  onAnswered?: (answered: number) => void;
}

/** The same audit (both models behind the given replicas, streamed chats, scoring, ledger) timed end to end. */
export async function runScenario(spec: ScenarioSpec): Promise<ScenarioResult> {
  const outDir = mkdtempSync(join(tmpdir(), 'probate-bench-faults-'));
  const counts = { ok: 0, failed: 0, hedges: 0, cancelled: 0 };
  const attempts: { target?: (r: AttemptRecord) => void } = {};
  const observer = (r: AttemptRecord) => {
    if (r.ok) {
      counts.ok++;
      spec.onAnswered?.(counts.ok);
    } else counts.failed++;
    if (r.hedge) counts.hedges++;
    if (r.failure?.kind === 'cancelled') counts.cancelled++;
    attempts.target?.(r);
  };
  const open = (model: string) =>
    new VllmEndpoint({
      urls: spec.urls,
      model,
      ref: `vllm:${spec.urls.join(',')}#${model}`,
      stream: spec.stream,
      concurrency: spec.httpConcurrency,
      observer,
      fingerprint: false,
    });
  const base = open('base');
  const delivered = open('delivered');
  const policy = loadPolicy(new URL('../../policies/offline.yaml', import.meta.url).pathname);
  try {
    const t0 = performance.now();
    const r = await runAudit({
      base,
      delivered,
      probeSets: [...spec.sets],
      samples: spec.samples,
      outDir,
      seed: 1,
      concurrency: spec.concurrency || defaultSamplesInFlight(base, delivered),
      budget: 0,
      attempts,
      manifest: {
        runId: spec.scenario,
        toolVersion: 'bench',
        policy: { version: policy.policy.version, hash: policy.hash },
      },
    });
    const seconds = (performance.now() - t0) / 1000;
    return {
      scenario: spec.scenario,
      replicas: spec.urls.length,
      seconds: Number(seconds.toFixed(2)),
      exchanges: r.exchanges,
      failed: r.failed,
      exchanges_per_s: Number((r.exchanges / seconds).toFixed(1)),
      attempts: counts,
      ledger_verified: verifyLedger(r.ledgerFile).ok,
    };
  } finally {
    await Promise.all([base.close(), delivered.close()]);
    rmSync(outDir, { recursive: true, force: true });
  }
}
