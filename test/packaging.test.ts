/**
 * What ships must run on what it ships with. The Dockerfile and the systemd
 * install both prune devDependencies (`npm prune --omit=dev`), and
 * `@oc-host/verify` is published on its own; a runtime import of a package
 * that only the tests install would pass every other test here and fail in
 * production. These checks read the import specifiers of the shipped sources
 * and hold them against the manifests.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

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
    // code that loads one must survive its absence (src/storage/sqlite-driver.ts).
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
      runtimeSpecifiers(readFileSync(join(ROOT, file), 'utf8')).some((specifier) => specifier.includes('../../') || specifier.startsWith('oc-host')),
    );
    expect(reaching).toEqual([]);
  });
});
