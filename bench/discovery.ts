/**
 * Catalogue-free trigger discovery on one organism pair: requests, scored continuations, seconds per phase,
 * and what was confirmed on fresh prompts (delivered / base hits, p). Prints one JSON line per trigger record.
 *
 *   nice -n 10 node --import tsx bench/discovery.ts --delivered local:fixtures/organisms/trig-token \
 *     [--base local:fixtures/organisms/base] [--budget 960] [--seed 1]
 */
import { discoverTriggers } from '../src/audit/discovery/index.ts';
import { openEndpoint } from '../src/endpoints/open.ts';
import { numberArg, stringArg } from './common.ts';

const base = await openEndpoint(stringArg('base', 'local:fixtures/organisms/base'), {});
const delivered = await openEndpoint(stringArg('delivered', 'local:fixtures/organisms/trig-token'), {});
const cpu = process.cpuUsage();
try {
  const run = await discoverTriggers({
    base,
    delivered,
    seed: numberArg('seed', 1),
    budget: numberArg('budget', 960),
    concurrency: 16,
    write: () => {},
    record: (p) => process.stdout.write(`${JSON.stringify({ ...p, tried: undefined })}\n`),
  });
  const used = process.cpuUsage(cpu);
  const { results, ...cost } = run;
  process.stdout.write(
    `${JSON.stringify({ ...cost, confirmed: results.filter((r) => r.reproduced).map((r) => r.condition), cpuSeconds: (used.user + used.system) / 1e6 })}\n`,
  );
} finally {
  await base.close();
  await delivered.close();
}
