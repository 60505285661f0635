/**
 * Throughput side by side against a zero-latency vLLM-shaped server in a child process: probate's client,
 * the full audit path with the ledger on, a streamed bare client (TTFT/TPOT), autocannon and promptfoo
 * (when bench/peers/setup.sh installed it), all at the same concurrency. Writes bench/results/throughput.json.
 *
 *   nice -n 10 node --import tsx bench/throughput.ts [--concurrency 16] [--requests 2000] [--runs 5]
 *     [--warm 3] [--promptfoo-requests N] [--pin] [--out bench/results/throughput.json]
 */
import { writeJson } from '../src/bench/output.ts';
import { runThroughput } from '../src/bench/throughput.ts';
import { loadProbeDirs } from '../src/probes/load.ts';
import { parsedArgs } from './common.ts';
import { startChildServer } from './fake-server.ts';

const { values } = parsedArgs({
  options: {
    concurrency: { type: 'string', default: '16' },
    requests: { type: 'string', default: '2000' },
    runs: { type: 'string', default: '5' },
    /** Unrecorded full-size passes of each contender first (the audit path needs several to reach its rate). */
    warm: { type: 'string', default: '3' },
    'promptfoo-requests': { type: 'string' },
    /** Pin the server to CPU 0 and the load generators to the others (taskset), for steadier ratios. */
    pin: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/throughput.json' },
  },
});
const server = await startChildServer(values.pin);
try {
  const result = await runThroughput({
    endpoint: `vllm:${server.url}#${server.model}`,
    concurrency: Number(values.concurrency),
    requests: Number(values.requests),
    runs: Number(values.runs),
    warm: Number(values.warm),
    promptfooRequests: values['promptfoo-requests'] ? Number(values['promptfoo-requests']) : undefined,
    sets: loadProbeDirs(['probes']).sets,
    seed: 1,
    onRun: (r, got) =>
      process.stderr.write(
        `run ${r + 1}: ${Object.entries(got)
          .map(([k, v]) => `${k} ${typeof v === 'string' ? v : `${v.requests_per_s}/s`}`)
          .join(', ')}\n`,
      ),
  });
  const command = `node --import tsx bench/throughput.ts ${process.argv.slice(2).join(' ')}`.trim();
  writeJson(values.out!, {
    command,
    server: `bench/client-server.ts (zero latency, child process; ${server.placement})`,
    ...result,
  });
  const { raw: _raw, ...shown } = result;
  process.stdout.write(`${JSON.stringify(shown, null, 2)}\n`);
} finally {
  await server.stop();
}
