import { configDefaults, defineConfig } from 'vitest/config';
import LongestFirst from './test/helpers/longest-first.ts';

/**
 * Two suites. `fast` (npm test): unit and loopback-HTTP tests with toy models and the fake vLLM server.
 * `slow` (npm run test:slow): files named *.slow.test.ts — real-organism audits, serve parity, the judge
 * fixture, Chromium, DSSE interop with python. `npx vitest run FILE` runs a file of either suite.
 */
export default defineConfig({
  test: {
    testTimeout: 300_000,
    hookTimeout: 900_000,
    // Two cores: model-running test files would starve each other in parallel workers.
    pool: 'forks',
    maxWorkers: 2,
    // As bin/probate.js sets for the CLI: marking on the main thread (in-process audits churn external memory).
    execArgv: ['--no-concurrent-marking'],
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/**/*.slow.test.ts'],
        },
      },
      { extends: true, test: { name: 'slow', include: ['test/**/*.slow.test.ts'] } },
    ],
  },
});
