import type { KeyObject } from 'node:crypto';
import { join } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { agentStageFor } from '../../audit/agent/index.ts';
import { type AuditResult, runAudit } from '../../audit/audit.ts';
import { progressBar } from '../../audit/progress.ts';
import { checkRunFolder } from '../../audit/run-folder.ts';
import { defaultSamplesInFlight } from '../../audit/runner.ts';
import { modelRefForms } from '../../endpoints/kinds/index.ts';
import { type ModelRef, parseModelRef } from '../../endpoints/refs.ts';
import type { AttemptRecord, ModelEndpoint } from '../../endpoints/types.ts';
import { openGate } from '../../gate/client.ts';
import { evaluatePolicy } from '../../gate/evaluate.ts';
import { publicKeyFromPem } from '../../gate/keys.ts';
import { defaultPolicyPath, loadPolicy } from '../../gate/policy.ts';
import { createAuditJudge } from '../../judges/audit-stage.ts';
import { loadProbeDirs } from '../../probes/load.ts';
import { resolveSealKey } from '../../probes/seal.ts';
import { writeAllReports } from '../../report/index.ts';
import { ExitCode } from '../../util/errors.ts';
import { TOOL_VERSION } from '../../util/version.ts';
import { atEndpoint } from '../boundary.ts';
import { endpointOptions, type HttpFlagArgs, withHttpFlags, withKeyFlags } from '../http-flags.ts';
import { STATE_EXIT } from './gate.ts';

interface AuditArgs extends HttpFlagArgs {
  base: string;
  delivered: string;
  probes: string[];
  samples?: number;
  seed: number;
  concurrency?: number;
  budget: number;
  discoveryBudget?: number;
  judge?: string;
  agent?: string;
  policy?: string;
  gate?: string;
  out?: string;
  resume: boolean;
  json: boolean;
  sealKeyFile?: string;
  threads?: number;
  exitCode?: number;
}

export const auditCommand: CommandModule<object, AuditArgs> = {
  command: 'audit',
  describe: 'Audit a delivered model against its base with the probe sets; write the evidence to RUN',
  builder: (y: Argv) =>
    withKeyFlags(withHttpFlags(y), ['base', 'delivered', 'judge', 'agent'])
      .option('base', {
        type: 'string',
        demandOption: true,
        describe: `base model (${modelRefForms()})`,
      })
      .option('delivered', { type: 'string', demandOption: true, describe: 'delivered (fine-tuned) model' })
      .option('probes', {
        type: 'string',
        array: true,
        default: ['probes'],
        describe: 'probe-set folders or files',
      })
      .option('samples', { type: 'number', describe: "samples per probe (default: each set's own)" })
      .option('seed', { type: 'number', default: 1 })
      .option('concurrency', {
        type: 'number',
        describe: 'samples in flight (default: 32 on the embedded engine, 256 against a served model)',
      })
      .option('budget', {
        type: 'number',
        default: 240,
        describe: 'requests for trigger search and the agent (trigger discovery gets 6× this)',
      })
      .option('discovery-budget', {
        type: 'number',
        describe: 'requests for catalogue-free trigger discovery (default 6 × --budget; 0 turns it off)',
      })
      .option('judge', { type: 'string', describe: 'judge model reference (runs the judge stage)' })
      .option('agent', {
        type: 'string',
        describe: "auditor agent: 'search' (deterministic) or a model reference (LLM policy)",
      })
      .option('policy', {
        type: 'string',
        describe: 'gate policy file (default policies/default.yaml); the verdict and exit code follow it',
      })
      .option('gate', {
        type: 'string',
        describe: 'gate DIR or http://HOST:PORT: have the gate decide the run (and attest it if COMMITTABLE)',
      })
      .option('out', { type: 'string', describe: 'run folder (default runs/<timestamp>)' })
      .option('resume', { type: 'boolean', default: false })
      .option('json', { type: 'boolean', default: false })
      .option('seal-key-file', {
        type: 'string',
        describe: 'key for sealed held-out sets (else PROBATE_SEAL_KEY)',
      })
      .option('threads', {
        type: 'number',
        describe: 'threads per local model',
      }) as unknown as Argv<AuditArgs>,
  handler: async (argv: ArgumentsCamelCase<AuditArgs>) => {
    // Everything the user handed over is checked before any model is opened or any folder created
    // (numeric flags and their bounds by the CLI's option check, src/cli/options.ts).
    const baseRef = parseModelRef(argv.base, '--base');
    const deliveredRef = parseModelRef(argv.delivered, '--delivered');
    const key = resolveSealKey(argv.sealKeyFile);
    const { sets, skipped } = loadProbeDirs(argv.probes, key);
    const policy = readPolicy(argv.policy);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const outDir = argv.out ?? join('runs', stamp);
    checkRunFolder(outDir, { resume: argv.resume });
    for (const s of skipped)
      process.stderr.write(
        `probate: held-out set ${s.id} (${s.file}) not run: ${s.reason}; recorded in run.start\n`,
      );
    const { openEndpoint } = await import('../../endpoints/open.ts');
    // Attempts made before the ledger exists (identities) wait in `pending`; the audit records them first.
    const attempts: { target?: (r: AttemptRecord) => void; pending: AttemptRecord[] } = { pending: [] };
    const observer = (r: AttemptRecord) => (attempts.target ? attempts.target(r) : attempts.pending.push(r));
    const open = (role: 'base' | 'delivered' | 'judge' | 'agent', ref: string | ModelRef) =>
      openEndpoint(ref, { ...endpointOptions(argv, role), observer, threads: argv.threads });
    const opened: ModelEndpoint[] = [];
    const closers: Array<() => Promise<void>> = [];
    try {
      const base = await atEndpoint(`--base ${baseRef.ref}`, () => open('base', baseRef));
      opened.push(base);
      const delivered = await atEndpoint(`--delivered ${deliveredRef.ref}`, () =>
        open('delivered', deliveredRef),
      );
      opened.push(delivered);
      // Every endpoint answers before the run folder exists: a failure here leaves nothing behind.
      await atEndpoint(`--base ${base.ref}`, () => base.identity());
      await atEndpoint(`--delivered ${delivered.ref}`, () => delivered.identity());
      const judge = argv.judge
        ? await atEndpoint(`--judge ${argv.judge}`, () =>
            createAuditJudge(argv.judge!, {
              seed: argv.seed,
              cacheDir: join(outDir, 'cache', 'judge'),
              observer,
              open: (ref) => open('judge', ref),
            }),
          )
        : undefined;
      if (judge) closers.push(judge.close);
      const agentStage = argv.agent
        ? await atEndpoint(`--agent ${argv.agent}`, () =>
            agentStageFor(argv.agent!, {
              base,
              delivered,
              seed: argv.seed,
              openEndpoint: (ref) => open('agent', ref),
            }),
          )
        : undefined;
      const result = await runAudit({
        base,
        delivered,
        probeSets: sets,
        skippedProbeSets: skipped,
        outDir,
        seed: argv.seed,
        samples: argv.samples,
        concurrency: argv.concurrency ?? defaultSamplesInFlight(base, delivered),
        budget: argv.budget,
        discoveryBudget: argv.discoveryBudget,
        resume: argv.resume,
        manifest: {
          runId: stamp,
          toolVersion: TOOL_VERSION,
          policy,
          judge: judge?.manifestEntry ?? null,
          rubrics: judge?.rubrics ?? [],
        },
        config: { probes: argv.probes, judge: argv.judge ?? null, agent: argv.agent ?? null },
        judgeStage: judge?.stage,
        agentStage,
        attempts,
        onProgress: (total) => progressBar(total, 'audit'),
      });
      const verdict = await decideRun(outDir, policy.path, argv.gate);
      writeAllReports(outDir, { policyFile: policy.path, gatePub: verdict.gatePub });
      process.stdout.write(
        argv.json
          ? `${JSON.stringify(jsonSummary(result, outDir, { ...verdict, gatePub: undefined }), null, 2)}\n`
          : textSummary(result, outDir) + verdictLines(verdict, outDir),
      );
      argv.exitCode = STATE_EXIT[verdict.state] ?? ExitCode.INTERNAL;
    } finally {
      await Promise.all([...opened.map((e) => e.close()), ...closers.map((c) => c())]);
    }
  },
};

/** The policy the run is recorded under (validated now, so a bad file fails before any model is queried). */
function readPolicy(file: string | undefined): { version: string; hash: string; path: string } {
  const loaded = loadPolicy(file ?? defaultPolicyPath());
  return { version: loaded.policy.version, hash: loaded.hash, path: loaded.path };
}

interface RunVerdict {
  state: string;
  reasons: string[];
  /** True when a gate decided (and recorded) it; false for the audit's own evaluation of the policy. */
  gateDecided: boolean;
  attestationPath?: string;
  /** The deciding gate's public key: the reports state its verdict only from records it signed. */
  gatePub?: KeyObject;
}

/**
 * The verdict comes from the gate's policy, computed from the run's evidence by the gate's own pure decision
 * function: with --gate the gate decides and records it (and attests a COMMITTABLE run); without, the audit
 * evaluates the same policy over the same evidence but records nothing and mints nothing.
 */
async function decideRun(outDir: string, policyPath: string | undefined, gate?: string): Promise<RunVerdict> {
  if (gate) {
    const client = openGate(gate);
    try {
      const d = await client.decide(outDir);
      const gatePub = publicKeyFromPem((await client.identity()).pub, `--gate ${gate}`);
      return {
        state: d.state,
        reasons: d.reasons,
        gateDecided: true,
        attestationPath: d.attestationPath,
        gatePub,
      };
    } finally {
      await client.close();
    }
  }
  const d = evaluatePolicy(outDir, policyPath);
  return { state: d.state, reasons: d.reasons, gateDecided: false };
}

function verdictLines(v: RunVerdict, outDir: string): string {
  const lines = [
    `verdict: ${v.state}${v.gateDecided ? ' (decided by the gate)' : ' (policy evaluated by the audit; no gate decision, no release)'}`,
    ...v.reasons.slice(0, 8).map((r) => `  - ${r}`),
  ];
  if (v.reasons.length > 8) lines.push(`  … ${v.reasons.length - 8} more in ${join(outDir, 'report.md')}`);
  if (v.attestationPath) lines.push(`attestation: ${v.attestationPath}`);
  lines.push(
    `reports: ${join(outDir, 'report.html')} (also report.md, report.json, junit.xml, report.sarif)`,
  );
  return `${lines.join('\n')}\n`;
}

function jsonSummary(r: AuditResult, outDir: string, verdict: RunVerdict) {
  return {
    run: outDir,
    exchanges: r.exchanges,
    failed: r.failed,
    ...r.summary,
    triggers: r.triggers,
    discovery: r.discovery ?? null,
    differential: r.differential,
    state: verdict.state,
    verdict,
    exitCode: STATE_EXIT[verdict.state] ?? ExitCode.INTERNAL,
  };
}

function textSummary(r: AuditResult, outDir: string): string {
  const lines = [
    `run: ${outDir}  (${r.exchanges} exchanges, ${r.failed} failed)`,
    `overall suspicion: ${r.summary.overall.toFixed(2)}`,
  ];
  for (const f of r.summary.families)
    lines.push(
      `  ${f.family.padEnd(12)} ${f.score.toFixed(2)}  [${f.ci[0].toFixed(2)}, ${f.ci[1].toFixed(2)}]  ok ${f.coverage.ok}/${f.coverage.planned}  findings ${f.findings}`,
    );
  for (const f of r.summary.findings)
    lines.push(
      `  ${f.severity.toUpperCase().padEnd(8)} ${f.family}/${f.kind}: ${f.title}  (effect ${f.statistic.effect.toFixed(2)}, q ${f.statistic.qValue.toExponential(1)})`,
    );
  for (const t of r.triggers)
    if (t.condition)
      lines.push(
        `  trigger: ${t.condition}  (hit rate ${t.hitRateWith?.toFixed(2)} with, ${t.hitRateWithout?.toFixed(2)} without; base ${t.baseHitRateWith?.toFixed(2)}${t.start.startsWith('discovery') ? `; discovered, ${t.reproduced ? 'confirmed' : 'not confirmed'} on fresh prompts` : ''})`,
      );
  if (r.discovery)
    lines.push(
      `  discovery: ${r.discovery.requests} requests, ${r.discovery.seconds} s (${r.discovery.sweepItems} sweep prompts, ${r.discovery.clusters} anomaly clusters, ${r.discovery.targets} inverted targets)`,
    );
  return `${lines.join('\n')}\n`;
}
