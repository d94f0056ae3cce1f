import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two files at once at least, where vitest would take one core less than
    // the machine has (one file on two cores): most files spend their time
    // waiting on Chromium, PostgreSQL, Redis or a child process, and files
    // never share a port, schema or key prefix (docs/operations.md
    // "Continuous integration").
    maxWorkers: Math.max(2, availableParallelism() - 1),
    reporters: ['default', './test/support/summary-reporter.ts'],
  },
});
