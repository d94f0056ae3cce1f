/**
 * Prints, after vitest's own summary, the files that took longest (import
 * plus tests and hooks, so a CI log says where its minutes went:
 * docs/testing.md "Where the time goes") and one plain closing line,
 * `tests: N passed, N failed, N skipped`, so CI logs carry a runner-neutral
 * count.
 */
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files the closing lines name. */
const SLOWEST = 15;

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const times: { file: string; collect: number; run: number }[] = [];
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
      if (testModule.state() === 'failed' && testModule.children.size === 0) failed += 1;
      const diagnostic = testModule.diagnostic();
      times.push({ file: relative(process.cwd(), testModule.moduleId), collect: diagnostic.collectDuration, run: diagnostic.duration });
    }
    times.sort((a, b) => b.collect + b.run - (a.collect + a.run));
    const total = times.reduce((sum, time) => sum + time.collect + time.run, 0);
    const lines = times
      .slice(0, SLOWEST)
      .map((time) => `  ${seconds(time.collect + time.run).padStart(8)}  (import ${seconds(time.collect)})  ${time.file}`);
    process.stdout.write(`\nslowest files of ${times.length} (${seconds(total)} in all):\n${lines.join('\n')}\n`);
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
