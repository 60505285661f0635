/** Child process for bench/client.ts: a fault-free, zero-latency vLLM-shaped server; prints its URL. */
import { startFakeVllm } from '../src/testing/fake-vllm.ts';

const fake = await startFakeVllm({ reasoningField: 'reasoning' });
process.stdout.write(`listening ${fake.url}\n`);
process.on('SIGTERM', () => {
  void fake.close().then(() => process.exit(0));
});
