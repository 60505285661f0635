/** Child process for bench/client.ts: a fault-free, zero-latency vLLM-shaped server; prints its URL. */
import { startFakeVllm } from '../src/testing/fake-vllm.ts';

// Requests are not kept: over a whole benchmark they would grow the server's heap for every contender.
const fake = await startFakeVllm({ reasoningField: 'reasoning', recordRequests: false });
process.stdout.write(`listening ${fake.url}\n`);
process.on('SIGTERM', () => {
  void fake.close().then(() => process.exit(0));
});
