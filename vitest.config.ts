import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/**
 * Test files run side by side, two at least: vitest's own choice is one core
 * less than the machine has, one file at a time on a two-core machine, where
 * most of a file's time is spent waiting on the processes, servers and
 * browsers it started (docs/operations.md "Continuous integration").
 */
const WORKERS = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One build of the service before any file runs: the tests that start it
    // as a process run the compiled JavaScript (test/support/built.ts).
    globalSetup: ['./test/support/global-setup.ts'],
    // Files never share a port, schema or key prefix (docs/operations.md "Continuous integration").
    maxWorkers: WORKERS,
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
