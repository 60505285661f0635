import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** A bench script started with a bad argument: exit 2 and one line naming the script and the argument. */
function run(script: string, ...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { encoding: 'utf8' });
  return { status: r.status, lines: r.stderr.trim().split('\n'), out: r.stdout };
}

describe('bench scripts: bad arguments are one line, not a stack trace', () => {
  it('an unknown option of a parseArgs script (throughput)', () => {
    const r = run('bench/throughput.ts', '--bogus');
    expect(r.status).toBe(2);
    expect(r.lines).toEqual(["bench/throughput.ts: Unknown option '--bogus'"]);
  });

  it('a bad number and a bad list of a numberArg script (faults), before any server starts', () => {
    const runs = run('bench/faults.ts', '--runs', '0');
    expect(runs.status).toBe(2);
    expect(runs.lines).toEqual(['bench/faults.ts: --runs: expected a positive number']);
    const lat = run('bench/faults.ts', '--server-latency-ms', '5,x');
    expect(lat.status).toBe(2);
    expect(lat.lines).toEqual([
      'bench/faults.ts: --server-latency-ms: expected comma-separated milliseconds ≥ 0',
    ]);
    expect(runs.out + lat.out).toBe('');
  });

  it('engine-malloc, engine-marking, engine-ab and audit-path-ab: a bad count, organism or checkout, before any audit runs', () => {
    for (const [script, args, line] of [
      ['engine-malloc', ['--pairs', '0'], '--pairs: expected a whole number ≥ 1'],
      [
        'engine-malloc',
        ['--organisms', 'no-such-organism'],
        '--organisms: no-such-organism is not a built organism under fixtures/organisms',
      ],
      ['engine-marking', ['--pairs', '1.5'], '--pairs: expected a whole number ≥ 1'],
      [
        'engine-marking',
        ['--organisms', 'trig-token'],
        '--organisms: expected two organisms (they are also run at once)',
      ],
      [
        'engine-marking',
        ['--organisms', 'trig-token,no-such-organism'],
        '--organisms: no-such-organism is not a built organism under fixtures/organisms',
      ],
      ['engine-ab', [], '--before: expected the directory of the other checkout'],
      ['engine-ab', ['--before', 'no/such/checkout'], '--before: no/such/checkout has no bin/probate.js'],
      ['audit-path-ab', [], '--before: expected the directory of the other checkout'],
      [
        'audit-path-ab',
        ['--before', 'no/such/checkout'],
        '--before: no/such/checkout has no src/bench/audit-path.ts',
      ],
      ['audit-path-ab', ['--before', '.', '--rounds', '0'], '--rounds: expected a whole number'],
    ] as const) {
      const r = run(`bench/${script}.ts`, ...args);
      expect({ script, status: r.status }).toEqual({ script, status: 2 });
      expect(r.lines).toEqual([`bench/${script}.ts: ${line}`]);
    }
  });
});
