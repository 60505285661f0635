/**
 * The same `probate audit` on the embedded engine with and without GLIBC_TUNABLES that keep freed memory
 * in the process (glibc Linux only), side by side per organism, the order alternating pair by pair: wall,
 * user and system CPU, peak RSS (GNU time), and the audit's own result, which must not change. Writes JSON
 * (bench/render.ts draws its table in BENCHMARKS.md).
 *
 *   node --import tsx bench/engine-malloc.ts [--organisms trig-token,benign-seed,inj-creds] [--pairs 1]
 *     [--out bench/results/engine-malloc.json]
 */
import { writeJson } from '../src/bench/output.ts';
import { type AuditProcessRun, auditProcess, KEEP_FREED_MEMORY, pairsAndOrganisms } from './audit-process.ts';
import { header, parsedArgs } from './common.ts';

const { values } = parsedArgs({
  options: {
    organisms: { type: 'string', default: 'trig-token,benign-seed,inj-creds' },
    pairs: { type: 'string', default: '1' },
    out: { type: 'string', default: 'bench/results/engine-malloc.json' },
  },
});
const { pairs, organisms } = pairsAndOrganisms(values, { atOnce: false });

type Run = AuditProcessRun & { tunables: boolean };

async function audit(organism: string, tunables: boolean): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (tunables) env.GLIBC_TUNABLES = KEEP_FREED_MEMORY;
  else delete env.GLIBC_TUNABLES;
  return { ...(await auditProcess(organism, { env })), tunables };
}

const runs: Run[] = [];
for (let p = 0; p < pairs; p++)
  for (const [i, organism] of organisms.entries()) {
    const order = (p + i) % 2 === 0 ? [false, true] : [true, false];
    for (const tunables of order) {
      const r = await audit(organism, tunables);
      runs.push(r);
      process.stderr.write(`${organism} ${tunables ? 'kept' : 'default'}: ${r.wall_s} s wall, ${r.state}\n`);
    }
  }

writeJson(values.out!, {
  ...header('engine-malloc', 'bench/engine-malloc.ts'),
  tunables: KEEP_FREED_MEMORY,
  runs,
});
process.stdout.write(
  `${values.out}: ${runs.length} audits (render into BENCHMARKS.md with bench/render.ts)\n`,
);
