/**
 * `npm pack` and `npm publish` of @oc-host/verify: builds dist/ afresh from
 * src/, so a file removed from src/ never ships from an old build.
 *
 * TypeScript comes from the repository root's install (the package is a
 * workspace of oc-host); a clean checkout has none until `npm ci` has run
 * there, so without it this says which commands to run instead of failing on
 * a missing `tsc` (README.md "Building").
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = join(dirname(fileURLToPath(import.meta.url)), '..');

let tsc;
try {
  const manifest = createRequire(join(packageDir, 'package.json')).resolve('typescript/package.json');
  tsc = join(dirname(manifest), 'bin', 'tsc');
} catch {
  process.stderr.write(
    '@oc-host/verify: TypeScript is not installed, so dist/ cannot be built.\n' +
      'From the root of the oc-host repository run:\n' +
      '  npm ci\n' +
      '  npm pack -w @oc-host/verify\n',
  );
  process.exit(1);
}

rmSync(join(packageDir, 'dist'), { recursive: true, force: true });
const built = spawnSync(process.execPath, [tsc, '-p', join(packageDir, 'tsconfig.json')], { cwd: packageDir, stdio: 'inherit' });
process.exit(built.status ?? 1);
