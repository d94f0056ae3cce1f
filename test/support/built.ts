/**
 * The compiled service that test/support/global-setup.ts builds before the
 * tests run: what the tests that start a process of their own run, as
 * `npm start` and the Dockerfile do.
 */
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The compiled JavaScript of `source`, a path under the repository such as `src/main.ts`. */
export function built(source: string): string {
  return `${root}dist/${source.replace(/\.ts$/, '.js')}`;
}
