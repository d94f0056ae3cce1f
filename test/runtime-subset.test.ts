/**
 * The list of tests CI runs on its second Node (vitest.runtime.config.ts)
 * names files that exist: a renamed test would otherwise drop out of it
 * without a word.
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RUNTIME_TESTS } from '../vitest.runtime.config.js';

describe('the runtime subset of the tests', () => {
  it('names only test files that exist, each pattern at least one', () => {
    for (const pattern of RUNTIME_TESTS) {
      if (!pattern.includes('*')) {
        expect(existsSync(pattern), pattern).toBe(true);
        continue;
      }
      // A pattern is a folder's files ending the same way: `test/compat/*.test.ts`.
      const ending = basename(pattern).slice(1);
      expect(basename(pattern).startsWith('*'), pattern).toBe(true);
      expect(
        readdirSync(dirname(pattern)).filter((name) => name.endsWith(ending)),
        pattern,
      ).not.toEqual([]);
    }
  });
});
