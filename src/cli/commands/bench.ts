import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { writeJson, writeZooArtefacts } from '../../bench/output.ts';
import { runThroughput } from '../../bench/throughput.ts';
import { planZoo, runZooBench } from '../../bench/zoo.ts';
import { checkOrganismDirs, localSource, type ModelSource, serveSource } from '../../bench/zoo-models.ts';
import { openEndpoint } from '../../endpoints/open.ts';
import { defaultPolicyPath, loadPolicy } from '../../gate/policy.ts';
import { createAuditJudge } from '../../judges/audit-stage.ts';
import { defaultZooDir } from '../../organisms/zoo.ts';
import { loadProbeDirs } from '../../probes/load.ts';
import { resolveSealKey } from '../../probes/seal.ts';
import { UserError } from '../../util/errors.ts';
import { TOOL_VERSION } from '../../util/version.ts';
import { atEndpoint } from '../boundary.ts';

interface ZooArgs {
  zooDir?: string;
  zoo?: string;
  via: 'local' | 'serve';
  json?: string;
  out?: string;
  samples?: number;
  seed: number;
  concurrency: number;
  budget: number;
  judge?: string;
  judgeSample: number;
  only?: string[];
  probes: string[];
  policy?: string;
  threads?: number;
  sealKeyFile?: string;
  png: boolean;
}

interface ThroughputArgs {
  endpoint: string;
  concurrency: number;
  requests: number;
  runs: number;
  maxTokens: number;
  promptfooRequests?: number;
  promptfoo: boolean;
  probes: string[];
  seed: number;
  json?: string;
}

function positiveInts(pairs: ReadonlyArray<readonly [string, number | undefined, number]>): void {
  for (const [k, v, min] of pairs)
    if (v !== undefined && (!Number.isInteger(v) || v < min))
      throw new UserError(`--${k}: expected an integer ≥ ${min}`);
}

const progress = (line: string) => {
  if (process.stderr.isTTY && !process.env.CI) process.stderr.write(`${line}\n`);
};

const zooCmd: CommandModule<object, ZooArgs> = {
  command: 'zoo [zoo-dir]',
  describe:
    'Audit every organism of a zoo against its base; AUROC, detection, trigger recovery, false BLOCKs',
  builder: (y: Argv) =>
    y
      .positional('zoo-dir', {
        type: 'string',
        describe: 'zoo folder with zoo.json (default fixtures/organisms); same as --zoo',
      })
      .option('zoo', {
        type: 'string',
        describe:
          'zoo folder with zoo.json; organisms live in DIR/NAME or at their zoo.json `path` (relative to DIR)',
      })
      .option('via', {
        choices: ['local', 'serve'] as const,
        default: 'local' as const,
        describe: 'embedded engine, or one probate serve over HTTP',
      })
      .option('json', { type: 'string', describe: 'write the result JSON here' })
      .option('out', {
        type: 'string',
        describe:
          'folder for the plots, table and result (audit runs in OUT/runs/NAME, replaced on rerun; default runs/bench-zoo-<time>)',
      })
      .option('samples', { type: 'number', describe: "samples per probe (default: each set's own)" })
      .option('seed', { type: 'number', default: 1 })
      .option('concurrency', { type: 'number', default: 16 })
      .option('budget', { type: 'number', default: 240, describe: 'trigger-search requests per organism' })
      .option('judge', { type: 'string', describe: 'judge model reference (runs the judge stage)' })
      .option('only', {
        type: 'string',
        array: true,
        describe: 'audit only these organisms (names, comma- or space-separated) with the base',
      })
      .option('judge-sample', {
        type: 'number',
        default: 0.05,
        describe: 'share of non-candidate exchanges the judge also sees (1 = judge everything, no cascade)',
      })
      .option('probes', { type: 'string', array: true, default: ['probes'] })
      .option('policy', {
        type: 'string',
        describe: 'gate policy for the verdicts (default policies/default.yaml)',
      })
      .option('threads', { type: 'number', describe: 'onnxruntime threads per model' })
      .option('seal-key-file', {
        type: 'string',
        describe: 'key for sealed held-out sets (else PROBATE_SEAL_KEY)',
      })
      .option('png', {
        type: 'boolean',
        default: true,
        describe: 'also render the plots to PNG (headless Chromium)',
      }) as unknown as Argv<ZooArgs>,
  handler: async (argv: ArgumentsCamelCase<ZooArgs>) => {
    if (!(argv.judgeSample >= 0 && argv.judgeSample <= 1))
      throw new UserError('--judge-sample: expected a number in [0, 1]');
    positiveInts([
      ['samples', argv.samples, 1],
      ['concurrency', argv.concurrency, 1],
      ['budget', argv.budget, 0],
      ['threads', argv.threads, 1],
    ]);
    if (argv.zoo !== undefined && argv.zooDir !== undefined && resolve(argv.zoo) !== resolve(argv.zooDir))
      throw new UserError(
        'bench zoo: give the zoo folder once (positional or --zoo), not two different ones',
      );
    const zooDir = resolve(argv.zoo ?? argv.zooDir ?? defaultZooDir);
    const only = argv.only?.flatMap((x) => x.split(',')).filter(Boolean);
    const plan = planZoo(zooDir, only);
    const names = [plan.base.name, ...plan.organisms.map((o) => o.name)];
    const dirOf = (name: string) => plan.dirs[name] ?? join(zooDir, name);
    checkOrganismDirs(zooDir, names, dirOf);
    const { sets, skipped } = loadProbeDirs(argv.probes, resolveSealKey(argv.sealKeyFile));
    for (const s of skipped) process.stderr.write(`probate: held-out set ${s.id} not run: ${s.reason}\n`);
    const policy = loadPolicy(argv.policy ?? defaultPolicyPath());
    const outDir = resolve(
      argv.out ?? join('runs', `bench-zoo-${new Date().toISOString().replace(/[:.]/g, '-')}`),
    );
    const auditJudge = argv.judge
      ? await createAuditJudge(argv.judge, {
          seed: argv.seed,
          // No verdict cache: the bench measures what the cascade costs, and a warm cache would hide it.
          sampleRate: argv.judgeSample,
          open: (ref, o) => openEndpoint(ref, o),
        })
      : undefined;
    const judge = auditJudge && {
      ref: argv.judge!,
      sampleRate: argv.judgeSample,
      stage: auditJudge.stage,
      manifestEntry: auditJudge.manifestEntry,
      rubrics: auditJudge.rubrics,
    };
    const models: ModelSource =
      argv.via === 'serve'
        ? await serveSource(zooDir, names, { threads: argv.threads, concurrency: argv.concurrency, dirOf })
        : localSource(zooDir, argv.threads, dirOf);
    try {
      const result = await runZooBench({
        zooDir,
        only,
        outDir,
        models,
        probeSets: sets,
        policy,
        seed: argv.seed,
        samples: argv.samples,
        concurrency: argv.concurrency,
        budget: argv.budget,
        judge,
        toolVersion: TOOL_VERSION,
        onOrganism: (r, i, n) =>
          progress(
            `bench zoo: ${i + 1}/${n} ${r.name} (${r.label}) overall ${r.score.toFixed(3)} ${r.verdict} in ${r.seconds}s`,
          ),
      });
      result.command = `probate ${process.argv.slice(2).join(' ')}`;
      const { files, notes } = await writeZooArtefacts(outDir, result, { png: argv.png });
      if (argv.json) writeJson(argv.json, result);
      for (const n of notes) process.stderr.write(`probate: ${n}\n`);
      const md = readFileSync(join(outDir, 'zoo.md'), 'utf8');
      process.stdout.write(`${md}\nwritten: ${[...files, ...(argv.json ? [argv.json] : [])].join(', ')}\n`);
    } finally {
      await models.close();
      await auditJudge?.close();
    }
  },
};

const throughputCmd: CommandModule<object, ThroughputArgs> = {
  command: 'throughput',
  describe: "Requests/s, tokens/s and latency of probate's request path vs autocannon and promptfoo",
  builder: (y: Argv) =>
    y
      .option('endpoint', { type: 'string', demandOption: true, describe: 'vllm:URL#MODEL' })
      .option('concurrency', { type: 'number', default: 16 })
      .option('requests', { type: 'number', default: 2000, describe: 'requests per contender per run' })
      .option('runs', { type: 'number', default: 5 })
      .option('max-tokens', { type: 'number', default: 32 })
      .option('promptfoo-requests', {
        type: 'number',
        describe: 'requests per promptfoo run (default min(requests, 1000))',
      })
      .option('promptfoo', {
        type: 'boolean',
        default: true,
        describe: 'run promptfoo when installed (--no-promptfoo skips)',
      })
      .option('probes', { type: 'string', array: true, default: ['probes'] })
      .option('seed', { type: 'number', default: 1 })
      .option('json', {
        type: 'string',
        describe: 'write the result JSON here',
      }) as unknown as Argv<ThroughputArgs>,
  handler: async (argv: ArgumentsCamelCase<ThroughputArgs>) => {
    positiveInts([
      ['concurrency', argv.concurrency, 1],
      ['requests', argv.requests, 1],
      ['runs', argv.runs, 1],
      ['max-tokens', argv.maxTokens, 1],
      ['promptfoo-requests', argv.promptfooRequests, 1],
    ]);
    const { sets } = loadProbeDirs(argv.probes);
    const result = await atEndpoint(`--endpoint ${argv.endpoint}`, () =>
      runThroughput({
        endpoint: argv.endpoint,
        concurrency: argv.concurrency,
        requests: argv.requests,
        runs: argv.runs,
        maxTokens: argv.maxTokens,
        promptfooRequests: argv.promptfooRequests,
        noPromptfoo: !argv.promptfoo,
        sets,
        seed: argv.seed,
        onRun: (r) => progress(`bench throughput: run ${r + 1}/${argv.runs} done`),
      }),
    );
    if (argv.json) writeJson(argv.json, result);
    const { raw: _raw, ...shown } = result;
    process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
  },
};

export const benchCommand: CommandModule = {
  command: 'bench <command>',
  describe: 'Benchmarks: audit quality over an organism zoo, request throughput against peers',
  builder: (y: Argv) =>
    y
      .command(zooCmd as unknown as CommandModule)
      .command(throughputCmd as unknown as CommandModule)
      .demandCommand(1, 'name a subcommand: zoo or throughput'),
  handler: () => {},
};
