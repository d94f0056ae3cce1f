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
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** What the build reads: the service's and the pages' sources, the wire types it imports, and what says how to build. */
const BUILD_INPUTS = [
  'src',
  'packages/verify/src/claims.ts',
  'packages/verify/src/revocation-feed.ts',
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
];
/** The last thing `npm run build` writes (src/build-pages.ts). */
const BUILD_OUTPUT = 'dist/pages/manifest.json';

function modifiedAt(path: string): number {
  const stat = statSync(join(root, path));
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(join(root, path), { recursive: true, encoding: 'utf8' })) {
    latest = Math.max(latest, statSync(join(root, path, name)).mtimeMs);
  }
  return latest;
}

/** Whether dist/ was built after every input last changed: a run of one test file then skips the build. */
function builtSinceChange(): boolean {
  try {
    const built = statSync(join(root, BUILD_OUTPUT)).mtimeMs;
    return BUILD_INPUTS.every((input) => modifiedAt(input) <= built);
  } catch {
    return false;
  }
}

/**
 * Whether the dist/ there is may be trusted when it is fresh. On CI the
 * build always runs, since a clean clone has no dist/ of its own to trust,
 * except in a second test run that the same CI job's first run built for
 * (`OC_TEST_DIST=built`, set by .ci/run for its run on another Node).
 */
function mayReuseBuild(): boolean {
  return process.env.CI !== 'true' || process.env.OC_TEST_DIST === 'built';
}

export default function setup(): void {
  if (mayReuseBuild() && builtSinceChange()) return;
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  // tsc exits 2 when it finds type errors and has emitted the JavaScript all
  // the same: those are `npm run typecheck`'s to report, and the tests that
  // depend on them fail on their own.
  if (build.status !== 0 && !/error TS\d+/.test(build.stdout)) {
    throw new Error(`npm run build failed (${build.status ?? build.signal}):\n${build.stdout}${build.stderr}`);
  }
}
