/**
 * Runs once before any test file: builds the service with `npm run build`,
 * the build `npm start` and the Dockerfile run, so that every test that
 * starts the service or the command line as a process of its own runs the
 * compiled JavaScript in dist/ (test/support/built.ts). Loading the
 * TypeScript source through tsx costs each such process about two seconds
 * of start-up on a small machine; one build for the whole run costs less
 * than a dozen of those.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export default function setup(): void {
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  // tsc exits 2 when it finds type errors and has emitted the JavaScript all
  // the same: those are `npm run typecheck`'s to report, and the tests that
  // depend on them fail on their own.
  if (build.status !== 0 && !/error TS\d+/.test(build.stdout)) {
    throw new Error(`npm run build failed (${build.status ?? build.signal}):\n${build.stdout}${build.stderr}`);
  }
}
