/**
 * A temporary directory for a block of tests (or a whole file, called at its
 * top level): made before the tests, removed with all it holds after them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/** Makes a directory named `prefix` and a random tail under the system's temporary directory, and hands it to `assign`. */
export function useTempDir(prefix: string, assign: (dir: string) => void): void {
  let made: string | undefined;
  beforeAll(async () => {
    made = await mkdtemp(join(tmpdir(), prefix));
    assign(made);
  });
  afterAll(async () => {
    if (made !== undefined) await rm(made, { recursive: true, force: true });
  });
}
