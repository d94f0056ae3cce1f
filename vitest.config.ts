import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One build of the service before any file runs: the tests that start it
    // as a process run the compiled JavaScript (test/support/built.ts).
    globalSetup: ['./test/support/global-setup.ts'],
    // Files may run side by side (they never share a port, schema or key
    // prefix); how many is vitest's own choice, one core less than the
    // machine has: docs/operations.md "Continuous integration" says why not more.
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
