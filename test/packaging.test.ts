/**
 * What ships must run on what it ships with. The Dockerfile and the systemd
 * install both prune devDependencies (`npm prune --omit=dev`), and
 * `@oc-host/verify` is published on its own; a runtime import of a package
 * that only the tests install would pass every other test here and fail in
 * production. These checks read the import specifiers of the shipped sources
 * and hold them against the manifests, pack @oc-host/verify from a copy of
 * the checkout as its README says, and hold the service's one reach outside
 * src/ (the session claims' type) against the image build.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, normalize, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

interface Manifest {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function readManifest(path: string): Manifest {
  return JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as Manifest;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|js|mjs)$/.test(entry.name) && !/\.d\.ts$/.test(entry.name)) out.push(path);
  }
  return out;
}

/** Static `import … from 'x'`, `export … from 'x'`, side-effect `import 'x'` and dynamic `import('x')`; `import type` erases. */
function runtimeSpecifiers(text: string): string[] {
  const found: string[] = [];
  const patterns = [
    /^\s*import\s+(?!type\b)(?:[^'"]*?\s+from\s+)?['"]([^'"]+)['"]/gm,
    /^\s*export\s+(?!type\b)[^'"]*?\s+from\s+['"]([^'"]+)['"]/gm,
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) found.push(match[1] as string);
  }
  return found;
}

function packageName(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/')) return null;
  if (specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0] as string)) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] as string);
}

/** Every package the files import at run time, with one file that imports it. */
function importedPackages(dir: string): Map<string, string> {
  const packages = new Map<string, string>();
  for (const file of sourceFiles(dir)) {
    for (const specifier of runtimeSpecifiers(readFileSync(join(ROOT, file), 'utf8'))) {
      const name = packageName(specifier);
      if (name !== null && !packages.has(name)) packages.set(name, file);
    }
  }
  return packages;
}

describe('packaging', () => {
  it('the specifier reader sees value imports and skips type-only ones', () => {
    const text = [
      "import { a } from 'kept-a';",
      "import type { B } from 'erased-b';",
      "import 'side-effect';",
      "export { c } from '@scope/kept-c/sub';",
      "export type { D } from 'erased-d';",
      "const e = await import('dynamic-e');",
      'import {',
      '  f,',
      "} from 'multi-line-f';",
    ].join('\n');
    expect(runtimeSpecifiers(text).map(packageName).sort()).toEqual(
      ['@scope/kept-c', 'dynamic-e', 'kept-a', 'multi-line-f', 'side-effect'].sort(),
    );
    expect(packageName('node:crypto')).toBeNull();
    expect(packageName('fs/promises')).toBeNull();
    expect(packageName('./local.js')).toBeNull();
  });

  it('the service imports at run time only its production dependencies', () => {
    const manifest = readManifest('package.json');
    // Optional dependencies ship too (npm prune --omit=dev keeps them); the
    // code that loads one must survive its absence (src/platform/storage/sqlite-driver.ts).
    const production = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.optionalDependencies ?? {})]);
    const imported = importedPackages('src');
    expect(imported.size).toBeGreaterThan(5);
    const missing = [...imported].filter(([name]) => !production.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });

  it('@oc-host/verify imports at run time only its dependencies and peer dependencies', () => {
    const manifest = readManifest('packages/verify/package.json');
    const allowed = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
    const imported = importedPackages('packages/verify/src');
    expect(imported.has('jose')).toBe(true);
    const missing = [...imported].filter(([name]) => !allowed.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(missing).toEqual([]);
  });

  it('@oc-host/verify stands alone: it never reaches into the service', () => {
    const reaching = sourceFiles('packages/verify/src').filter((file) =>
      runtimeSpecifiers(readFileSync(join(ROOT, file), 'utf8')).some(
        (specifier) => specifier.includes('../../') || specifier.startsWith('oc-host'),
      ),
    );
    expect(reaching).toEqual([]);
  });
});

/** The files a clean checkout of the repository has under `dir` (tracked, or new and not ignored). */
function checkedOut(dir: string): string[] {
  return execFileSync('git', ['ls-files', '-co', '--exclude-standard', '--', dir], { cwd: ROOT, encoding: 'utf8' })
    .split('\n')
    .filter((path) => path !== '');
}

interface PackResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `npm pack -w @oc-host/verify` at the root of `checkout`, offline, the tarball written into `checkout`/out. */
function packVerify(checkout: string): PackResult {
  const out = join(checkout, 'out');
  mkdirSync(out, { recursive: true });
  const result = spawnSync('npm', ['pack', '-w', '@oc-host/verify', '--json', '--pack-destination', out], {
    cwd: checkout,
    encoding: 'utf8',
    env: {
      ...process.env,
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    },
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('@oc-host/verify packs from a clean checkout (packages/verify/README.md "Building")', () => {
  const copies: string[] = [];
  afterAll(() => {
    for (const copy of copies) rmSync(copy, { recursive: true, force: true });
  });

  /** The root manifest and the package as a fresh clone has them: no dist/, no node_modules. */
  function freshCheckout(): string {
    const checkout = mkdtempSync(join(tmpdir(), 'oc-verify-pack-'));
    copies.push(checkout);
    for (const path of ['package.json', ...checkedOut('packages/verify')]) {
      mkdirSync(join(checkout, dirname(path)), { recursive: true });
      cpSync(join(ROOT, path), join(checkout, path));
    }
    return checkout;
  }

  it('before `npm ci`, packing stops with the commands to run instead of a missing tsc', () => {
    const result = packVerify(freshCheckout());
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('npm ci');
    expect(result.stderr).toContain('npm pack -w @oc-host/verify');
  });

  it('after `npm ci`, packing builds dist/ and ships its JavaScript and declarations, and no source, test or build state', () => {
    const checkout = freshCheckout();
    // What `npm ci` at the root provides: TypeScript, @types/node, jose.
    symlinkSync(join(ROOT, 'node_modules'), join(checkout, 'node_modules'), 'dir');
    const result = packVerify(checkout);
    expect(result.status, result.stderr).toBe(0);
    const [packed] = JSON.parse(result.stdout.slice(result.stdout.indexOf('['))) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    expect(readdirSync(join(checkout, 'out'))).toEqual([packed!.filename]);
    const files = packed!.files.map((file) => file.path).sort();

    const modules = readdirSync(join(ROOT, 'packages/verify/src'))
      .filter((name) => name.endsWith('.ts'))
      .map((name) => name.slice(0, -3));
    expect(modules.length).toBeGreaterThan(5);
    const expected = ['README.md', 'package.json', ...modules.flatMap((name) => [`dist/${name}.d.ts`, `dist/${name}.js`])].sort();
    expect(files).toEqual(expected);

    // Every entry point of the manifest is in the tarball.
    const manifest = JSON.parse(readFileSync(join(ROOT, 'packages/verify/package.json'), 'utf8')) as {
      main: string;
      types: string;
      exports: Record<string, string | Record<string, string>>;
    };
    const targets = [
      manifest.main,
      manifest.types,
      ...Object.values(manifest.exports).flatMap((entry) => (typeof entry === 'string' ? [entry] : Object.values(entry))),
    ];
    expect(targets.map((target) => normalize(target)).filter((target) => !files.includes(target))).toEqual([]);
  });
});

describe('the service reaches outside src/ only for what its image build has', () => {
  it('every file src/ imports from outside src/ is copied by the Dockerfile and let through by .dockerignore', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    const dockerignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n');
    const reached = new Set<string>();
    for (const file of sourceFiles('src')) {
      for (const match of readFileSync(join(ROOT, file), 'utf8').matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
        const target = normalize(join(dirname(file), match[1] as string)).replace(/\.js$/, '.ts');
        if (relative('src', target).startsWith('..')) reached.add(target);
      }
    }
    expect([...reached].sort()).toEqual(['packages/verify/src/claims.ts', 'packages/verify/src/revocation-feed.ts']);
    for (const target of reached) {
      expect(dockerfile).toContain(`COPY ${target} ./${target}`);
      expect(dockerignore).toContain(`!${target}`);
    }
  });
});
