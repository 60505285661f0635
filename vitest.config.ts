import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 900_000,
    // Two cores: model-running test files would starve each other in parallel workers.
    pool: 'forks',
    maxWorkers: 2,
    reporters: process.env.CI ? ['default'] : ['default'],
  },
});
