/**
 * The layers of src/ (docs/architecture.md "Layers"): a unit may import only
 * from units on a lower layer or from itself, so arrows between folders run
 * one way and a cycle cannot form. Framework code stays in http/ (and app.ts,
 * which builds the app, and main.ts, which starts the server).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, normalize, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', 'src');

/**
 * Each feature's page words (`features/<name>/messages/`): data that imports
 * nothing but its own English keys, a unit of its own just above the
 * platform's catalogs; src/page-words.ts, above the features, joins them to
 * the catalogs.
 */
const FEATURE_WORDS = readdirSync(join(SRC, 'features'))
  .filter((name) => existsSync(join(SRC, 'features', name, 'messages')))
  .map((name) => `features/${name}/messages`);

/**
 * The features that stand on others, lowest first. Every other folder of
 * src/features/ imports no feature and sits on the lowest feature layer, so
 * a new feature needs no line here until it uses another.
 */
const RAISED_FEATURES: readonly (readonly string[])[] = [
  ['features/account', 'features/session', 'features/attestations', 'features/account-data'],
  ['features/oidc'],
  ['features/admin'],
];
const LOWEST_FEATURES = readdirSync(join(SRC, 'features'))
  .filter((name) => statSync(join(SRC, 'features', name)).isDirectory())
  .map((name) => `features/${name}`)
  .filter((unit) => !RAISED_FEATURES.flat().includes(unit));

/**
 * Lowest first. A unit is a folder of src/ or a file directly in it (without
 * `.ts`); inside platform/, identity/ and features/ it is the folder (or file)
 * one level down: `platform/storage`, `identity/session`, `features/oidc`;
 * a feature's words are `features/<name>/messages`.
 */
const LAYERS: readonly (readonly string[])[] = [
  // The platform: knows no feature.
  [
    'platform/json',
    'platform/services',
    'platform/crypto',
    'platform/cache',
    'platform/colour',
    'platform/outbox-worker',
    'platform/errors',
    'platform/version',
    'platform/log-sink',
    'platform/i18n',
    'platform/limits',
    'platform/metrics',
  ],
  // The features' page words: data.
  FEATURE_WORDS,
  ['platform/storage'],
  ['platform/config', 'platform/redis'],
  ['platform/mail', 'platform/http'],
  // Libraries of the domain: Bitcoin, the attestation format, the chain, Nostr.
  ['format', 'bitcoin', 'chain'],
  ['relay'],
  // The identity core: its storage, sessions, the proofs every way in shares, accounts and the one sign-in door.
  ['identity/storage'],
  ['identity/session'],
  ['identity/signin'],
  ['identity/account'],
  // The HTTP edge every feature's routes stand on: the session door, route declarations, pages, CORS, limits.
  ['web'],
  // The features, lowest first: the folders that import no other feature, then those above them.
  LOWEST_FEATURES,
  ...RAISED_FEATURES,
  // What a feature is made of, and the one list of the features.
  ['feature-kit'],
  ['feature-list'],
  // The whole storage and the page words, from the identity core's and every feature's parts.
  ['store', 'page-words'],
  // The composition root, the server and the command line.
  ['services'],
  ['app'],
  ['main', 'build-pages'],
  ['cli'],
];

const rank = new Map<string, number>(LAYERS.flatMap((units, index) => units.map((unit) => [unit, index] as const)));

function sourceFiles(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const NESTED = new Set(['platform', 'identity', 'features']);

function unitOf(path: string): string {
  const parts = relative(SRC, path).split(/[\\/]/);
  if (parts[0] === 'features' && parts[2] === 'messages' && parts.length > 3) return `features/${parts[1]}/messages`;
  const unit = NESTED.has(parts[0]!) && parts.length > 1 ? `${parts[0]}/${parts[1]}` : parts[0]!;
  return unit.replace(/\.(ts|js)$/, '');
}

/** Files that declare routes: the HTTP edge's own, and every feature's `routes.ts` or `*-routes.ts`. */
function isRouteFile(path: string): boolean {
  const name = relative(SRC, path);
  return name.startsWith(`web${sep}`) || (name.startsWith(`features${sep}`) && /(?:^|-)routes\.ts$/.test(basename(name)));
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

  it("keeps Fastify inside the platform's HTTP server, the HTTP edge (web/), route files, the kit and list of the features and app.ts, which build the app, and main.ts, which starts the server", () => {
    const outside = files.filter(
      (file) =>
        !['platform/http', 'web', 'feature-kit', 'feature-list', 'app', 'main'].includes(unitOf(file)) &&
        !isRouteFile(file) &&
        /from '(?:fastify|@fastify\/[^']+)'/.test(readFileSync(file, 'utf8')),
    );
    expect(outside.map((file) => relative(SRC, file))).toEqual([]);
  });

  // docs/architecture.md "Routes get what they use": buildApp (src/app.ts) alone holds the whole service context.
  it('hands each route file only what it uses: no route file takes the whole service context', () => {
    const whole = files.filter((file) => isRouteFile(file) && /\bServiceContext\b|services\.js'/.test(readFileSync(file, 'utf8')));
    expect(whole.map((file) => relative(SRC, file))).toEqual([]);
  });

  it('lets only the signed-challenge routes and the session door hold the server secret', () => {
    const holders = files.filter((file) => isRouteFile(file) && /\bserverSecret\b/.test(readFileSync(file, 'utf8')));
    expect(holders.map((file) => relative(SRC, file)).sort()).toEqual([
      join('features', 'challenge', 'routes.ts'),
      join('web', 'session.ts'),
    ]);
  });
});
