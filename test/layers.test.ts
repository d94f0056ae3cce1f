/**
 * The layers of src/ (docs/architecture.md "Layers"): a unit may import only
 * from units on a lower layer or from itself, so arrows between folders run
 * one way and a cycle cannot form. Framework code stays in http/ (and app.ts,
 * which builds the app, and main.ts, which starts the server).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Lowest first. A unit is a folder of src/ or a file directly in it (without `.ts`). */
const LAYERS: readonly (readonly string[])[] = [
  ['json', 'crypto', 'cache', 'colour', 'outbox-worker'],
  ['errors', 'version', 'log-sink', 'storage', 'limits', 'chain'],
  ['config', 'i18n'],
  ['format', 'bitcoin', 'mail'],
  ['relay', 'session', 'signin', 'stats'],
  ['attest', 'account', 'forms', 'metrics'],
  ['redis', 'connect', 'webauthn', 'oidc'],
  ['services', 'http'],
  ['app'],
  ['main', 'build-pages'],
  ['cli'],
];

const SRC = join(import.meta.dirname, '..', 'src');
const rank = new Map<string, number>(LAYERS.flatMap((units, index) => units.map((unit) => [unit, index] as const)));

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

function unitOf(path: string): string {
  const first = relative(SRC, path).split(/[\\/]/)[0]!;
  return first.replace(/\.(ts|js)$/, '');
}

/** Relative specifiers of static imports, re-exports and dynamic imports. */
function localImports(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)) found.push(match[1]!);
  return found;
}

const files = sourceFiles(SRC);

describe('layers of src/', () => {
  it('places every unit of src/ on exactly one layer', () => {
    const units = new Set(files.map(unitOf));
    const declared = LAYERS.flat();
    expect(new Set(declared).size).toBe(declared.length);
    expect([...units].filter((unit) => !rank.has(unit)).sort()).toEqual([]);
  });

  it('lets every unit import only from itself or from a lower layer', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = unitOf(file);
      for (const specifier of localImports(readFileSync(file, 'utf8'))) {
        const to = unitOf(normalize(join(dirname(file), specifier)));
        if (to !== from && rank.get(to)! >= rank.get(from)!) upward.push(`${relative(SRC, file)} -> ${specifier}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('reaches into another folder only through its index.ts, where the folder has one', () => {
    const bypassing: string[] = [];
    for (const file of files) {
      const from = unitOf(file);
      for (const specifier of localImports(readFileSync(file, 'utf8'))) {
        const target = normalize(join(dirname(file), specifier));
        const to = unitOf(target);
        if (to === from || !rank.has(to)) continue;
        let hasFace = false;
        try {
          hasFace = statSync(join(SRC, to, 'index.ts')).isFile();
        } catch {
          hasFace = false;
        }
        if (hasFace && relative(join(SRC, to), target) !== 'index.js') bypassing.push(`${relative(SRC, file)} -> ${specifier}`);
      }
    }
    expect(bypassing).toEqual([]);
  });

  it("reaches outside src/ only for the wire types whose one definition is the consumer package's: the session claims, the revocation feed's entries", () => {
    const outside: string[] = [];
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const specifier of localImports(text)) {
        if (!relative(SRC, normalize(join(dirname(file), specifier))).startsWith('..')) continue;
        const typeOnly = new RegExp(`^import type \\{[^}]*\\} from '${specifier.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}';$`, 'm').test(
          text,
        );
        const allowed = ['claims.js', 'revocation-feed.js']
          .map((name) => join('packages', 'verify', 'src', name))
          .includes(relative(join(SRC, '..'), normalize(join(dirname(file), specifier))));
        if (!typeOnly || !allowed) outside.push(`${relative(SRC, file)} -> ${specifier}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('keeps Fastify inside http/, app.ts, which builds the app, and main.ts, which starts the server', () => {
    const outside = files.filter(
      (file) => !['http', 'app', 'main'].includes(unitOf(file)) && /from '(?:fastify|@fastify\/[^']+)'/.test(readFileSync(file, 'utf8')),
    );
    expect(outside.map((file) => relative(SRC, file))).toEqual([]);
  });
  // docs/architecture.md "Routes get what they use": buildApp (src/app.ts) alone holds the whole service context.
  it('hands each route file only what it uses: no file of http/ takes the whole service context', () => {
    const routeFiles = readdirSync(join(SRC, 'http')).filter((name) => name.endsWith('.ts'));
    const whole = routeFiles.filter((name) => /\bServiceContext\b|services\.js'/.test(readFileSync(join(SRC, 'http', name), 'utf8')));
    expect(whole).toEqual([]);
  });

  it('lets only the signed-challenge routes and the session door hold the server secret', () => {
    const holders = readdirSync(join(SRC, 'http')).filter(
      (name) => name.endsWith('.ts') && /\bserverSecret\b/.test(readFileSync(join(SRC, 'http', name), 'utf8')),
    );
    expect(holders.sort()).toEqual(['challenge.ts', 'session.ts']);
  });
});
