import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Files may run side by side (they never share a port, schema or key
    // prefix); how many is vitest's own choice, one core less than the
    // machine has: docs/operations.md "Continuous integration" says why not more.
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
