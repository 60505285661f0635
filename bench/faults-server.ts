/**
 * Child process for bench/faults.ts: one vLLM-shaped replica with the options given as JSON in argv[2]
 * (a fault profile, latency, batch slots); prints its URL. Killed with SIGKILL to die mid-audit.
 */
import { type FakeVllmOptions, startFakeVllm } from '../src/testing/fake-vllm.ts';

const opts = JSON.parse(process.argv[2] ?? '{}') as FakeVllmOptions;
const fake = await startFakeVllm({ ...opts, models: [{ id: 'base' }, { id: 'delivered' }] });
process.stdout.write(`listening ${fake.url}\n`);
process.on('SIGTERM', () => {
  void fake.close().then(() => process.exit(0));
});
