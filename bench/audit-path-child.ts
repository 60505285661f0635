/**
 * Child of bench/audit-path-ab.ts: the audit path (`auditPathRun`, src/bench/audit-path.ts) of the checkout at
 * `--root` against the server at `--url`, `--warm` unrecorded runs and then `--runs` recorded ones, each of
 * `--exchanges` exchanges; prints one JSON line per recorded run (requests/s, client CPU per request).
 */
import { join, resolve } from 'node:path';
import { parsedArgs } from './common.ts';

const { values } = parsedArgs({
  options: {
    root: { type: 'string', default: '.' },
    url: { type: 'string' },
    warm: { type: 'string', default: '3' },
    runs: { type: 'string', default: '3' },
    exchanges: { type: 'string', default: '1500' },
    seed: { type: 'string', default: '7' },
  },
});
const root = resolve(values.root!);
const { auditPathRun } = await import(join(root, 'src/bench/audit-path.ts'));
const { loadProbeDirs } = await import(join(root, 'src/probes/load.ts'));
// Both checkouts read this checkout's probes, so they send the same requests.
const { sets } = loadProbeDirs([new URL('../probes', import.meta.url).pathname]);
const run = () =>
  auditPathRun({
    root: values.url!.replace(/\/v1$/, ''),
    model: 'delivered',
    concurrency: 16,
    exchanges: Number(values.exchanges),
    sets,
    seed: Number(values.seed),
  });
for (let i = 0; i < Number(values.warm); i++) await run();
for (let i = 0; i < Number(values.runs); i++) {
  const cpu = process.cpuUsage();
  const r = await run();
  const used = process.cpuUsage(cpu);
  process.stdout.write(
    `${JSON.stringify({
      requests: r.requests,
      exchanges: r.exchanges,
      requests_per_s: r.requests_per_s,
      cpu_us_per_request: Number(((used.user + used.system) / r.requests).toFixed(1)),
    })}\n`,
  );
}
