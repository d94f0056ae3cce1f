/**
 * The page scripts bundled by esbuild (docs/architecture.md "Page assets"):
 * each page's entry script with every module it imports, in one minified
 * module without comments. `npm run build` writes the bundles to
 * `dist/pages/` ({@link writePageBundles}, run by src/build-pages.ts),
 * which the compiled service reads; run from source (tsx, vitest), where
 * nothing is built, the service bundles in memory at start. esbuild is a
 * development dependency: it is loaded only when a bundle is made, never by
 * the compiled service, whose image has no development dependencies.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Esbuild from 'esbuild';
import { PAGE_READY_MARK } from './page-assets.js';

/**
 * The page files by the name each is served under (`common.js`), each with
 * its path: the shared folder's and every feature's (src/web/pages.ts
 * `pageFilesOf`). The names are one flat namespace, the one `/assets/`
 * serves, and the modules import each other by it (`./common.js`), wherever
 * their folder is.
 */
export type PageSources = ReadonlyMap<string, string>;

/** A page script bundled with its imports. */
export interface PageBundle {
  readonly code: string;
  /** The page modules that went into it by their names, the entry included: its module graph. */
  readonly inputs: readonly string[];
}

/** What `dist/pages/manifest.json` says of each bundle: its file, and the SHA-256 of each module that went into it. */
interface BuiltBundle {
  readonly file: string;
  readonly inputs: Readonly<Record<string, string>>;
}

/** The file a page script's bundle is written to and served under (before its hash). */
export function pageModuleName(script: string): string {
  return script.replace(/\.js$/, '-page.js');
}

/**
 * Browsers the pages already need: top-level await and the class fields
 * and private methods of ES2022, in every browser the pages are tested
 * and meant for; esbuild leaves those as written.
 */
const TARGET = ['es2022', 'chrome100', 'edge100', 'firefox100', 'safari15.4'];

function sha256(text: Buffer | string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * Each of `scripts` (page modules of `sources`) bundled with what it
 * imports: ES module, minified, no comments (legal ones neither), and at its
 * end the User Timing mark {@link PAGE_READY_MARK}, set once every module has
 * run, top-level awaits included, which tests and benchmarks wait for
 * without depending on any page's markup.
 *
 * The modules import each other by their served names (`./common.js`) from
 * whichever folder they are in, as the browser resolves a single module
 * under `/assets/`; esbuild's synchronous API takes no resolver plugin, so
 * the modules are copied into one flat folder for the build, where those
 * imports resolve as written, and removed after it.
 */
export function bundlePageScripts(sources: PageSources, scripts: readonly string[]): Map<string, PageBundle> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'oc-page-modules-')));
  try {
    for (const [name, path] of sources) if (name.endsWith('.js')) copyFileSync(path, join(dir, name));
    return bundleFlat(dir, scripts);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function bundleFlat(dir: string, scripts: readonly string[]): Map<string, PageBundle> {
  // Loaded here, not imported at the top: the compiled service imports this module but never bundles.
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof Esbuild;
  const result = esbuild.buildSync({
    absWorkingDir: dir,
    entryPoints: scripts.map((script) => ({ in: `./${script}`, out: pageModuleName(script).replace(/\.js$/, '') })),
    outdir: 'out',
    bundle: true,
    write: false,
    metafile: true,
    minify: true,
    format: 'esm',
    target: TARGET,
    platform: 'browser',
    legalComments: 'none',
    charset: 'utf8',
    footer: { js: `performance.mark('${PAGE_READY_MARK}');` },
    logLevel: 'silent',
  });
  const bundles = new Map<string, PageBundle>();
  for (const script of scripts) {
    const out = `out/${pageModuleName(script)}`;
    const file = result.outputFiles.find((output) => output.path === join(dir, out));
    const meta = result.metafile.outputs[out];
    if (file === undefined || meta === undefined) throw new Error(`pages: esbuild made no bundle of ${script}`);
    bundles.set(script, { code: file.text, inputs: Object.keys(meta.inputs).sort() });
  }
  return bundles;
}

/** `npm run build` writes the bundles here: `dist/pages/`, beside `dist/src/`. */
export const BUILT_PAGES_DIR = fileURLToPath(new URL('../../../pages/', import.meta.url));

const MANIFEST = 'manifest.json';

/** The file of the page file `name`; a name no page folder holds is a programming error. */
export function pageFilePath(sources: PageSources, name: string): string {
  const path = sources.get(name);
  if (path === undefined) throw new Error(`pages: no page file ${name}`);
  return path;
}

/** Writes the bundles of `scripts` and their manifest to `outDir`, replacing what was there. */
export function writePageBundles(sources: PageSources, scripts: readonly string[], outDir: string = BUILT_PAGES_DIR): void {
  const bundles = bundlePageScripts(sources, scripts);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const manifest: Record<string, BuiltBundle> = {};
  for (const [script, bundle] of bundles) {
    const file = pageModuleName(script);
    writeFileSync(join(outDir, file), bundle.code);
    const inputs = Object.fromEntries(bundle.inputs.map((input) => [input, sha256(readFileSync(pageFilePath(sources, input)))]));
    manifest[script] = { file, inputs };
  }
  writeFileSync(join(outDir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
}

/**
 * The bundles `npm run build` wrote to `outDir` for `scripts`. A bundle
 * made from modules other than those of `sources` now (a page edited since
 * the build) or a missing one stops the start: the pages would run old code.
 * A module is known by its name, so one moved to another folder as it was
 * still matches.
 */
export function readPageBundles(
  sources: PageSources,
  scripts: readonly string[],
  outDir: string = BUILT_PAGES_DIR,
): Map<string, PageBundle> {
  let manifest: Record<string, BuiltBundle>;
  try {
    manifest = JSON.parse(readFileSync(join(outDir, MANIFEST), 'utf8')) as Record<string, BuiltBundle>;
  } catch {
    throw new Error(`pages: no page bundles in ${outDir}: run npm run build`);
  }
  const bundles = new Map<string, PageBundle>();
  for (const script of scripts) {
    const built = manifest[script];
    if (built === undefined) throw new Error(`pages: ${outDir} has no bundle of ${script}: run npm run build`);
    for (const [input, hash] of Object.entries(built.inputs)) {
      let now: string | undefined;
      try {
        now = sha256(readFileSync(pageFilePath(sources, input)));
      } catch {
        now = undefined;
      }
      if (now !== hash) throw new Error(`pages: the bundle of ${script} in ${outDir} is older than ${input}: run npm run build`);
    }
    bundles.set(script, { code: readFileSync(join(outDir, built.file), 'utf8'), inputs: Object.keys(built.inputs) });
  }
  return bundles;
}
