/**
 * The page assets as the pages load them (docs/architecture.md "Page
 * assets"), made once at start (src/web/pages.ts `loadPageFiles`):
 *
 * - What the pages reference is served under a content-hashed name
 *   (`/assets/app.<hash>.css`, cached for a year, immutable) and under its
 *   plain name (`/assets/app.css`, cached five minutes, so a page cached
 *   before a deploy still loads).
 * - Each page script is bundled with every module it imports by esbuild,
 *   `<script>-page.js` (src/platform/http/page-bundle.ts): the account page's graph
 *   is eleven modules, and one request instead of a wave of them is what
 *   keeps a first visit within its request budget (docs/performance.md
 *   "Page weight").
 * - Each page script gets its own catalog per language,
 *   `messages-<script>-<lang>.js`, holding only the messages its graph
 *   names (a quoted key, the rule test/i18n.test.ts holds the scripts to);
 *   the language's whole catalog stays at `messages-<lang>.js`.
 * - Scripts, styles and SVG are compressed once, brotli and gzip at their
 *   best levels (src/platform/http/compression.ts), and served from memory.
 */
import { createHash } from 'node:crypto';
import type { Locale } from '../i18n/index.js';
import { compressAsset, type Encoding, isCompressible } from './compression.js';

export interface Asset {
  readonly body: Buffer;
  readonly contentType: string;
  readonly etag: string;
  /** The compressed forms that came out smaller, each with its own entity tag. */
  readonly encoded: Readonly<Partial<Record<Encoding, { readonly body: Buffer; readonly etag: string }>>>;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** A plain asset name: lowercase, one dot, a known extension. */
export const PLAIN_ASSET_NAME = /^([a-z0-9][a-z0-9-]*)(\.(?:css|js|svg|png|ico))$/;
/** A hashed asset name: the plain name with 16 hex digits of the content's SHA-256 before the extension. */
export const HASHED_ASSET_NAME = /^[a-z0-9][a-z0-9-]*\.[0-9a-f]{16}\.(?:css|js|svg|png|ico)$/;

function digest(body: Buffer | string): string {
  return createHash('sha256').update(body).digest('base64url');
}

function etagOf(body: Buffer | string): string {
  return `"${digest(body).slice(0, 22)}"`;
}

/**
 * An asset of `name`'s type, with its compressed forms: made now for what the
 * pages load, on first use for what only an older page would (brotli at its
 * best quality costs about a second per megabyte, and the start should not
 * pay it for files hardly ever asked for).
 */
export function assetOf(name: string, body: Buffer, compress: 'now' | 'on first use' = 'now'): Asset {
  const contentType = CONTENT_TYPES[PLAIN_ASSET_NAME.exec(name)?.[2] ?? ''] ?? 'application/octet-stream';
  const etag = etagOf(body);
  let encoded: Asset['encoded'] | undefined;
  const encode = (): Asset['encoded'] => {
    encoded ??= Object.fromEntries(
      Object.entries(isCompressible(contentType) ? compressAsset(body) : {}).map(([encoding, encodedBody]) => [
        encoding,
        { body: encodedBody, etag: `${etag.slice(0, -1)}-${encoding}"` },
      ]),
    );
    return encoded;
  };
  if (compress === 'now') encode();
  return {
    body,
    contentType,
    etag,
    get encoded() {
      return encode();
    },
  };
}

/** `name.css` → `name.<hash>.css`. */
export function hashedName(name: string, body: Buffer | string): string {
  const [, stem, extension] = PLAIN_ASSET_NAME.exec(name) ?? [];
  if (stem === undefined) throw new Error(`pages: ${name} is no asset name`);
  return `${stem}.${createHash('sha256').update(body).digest('hex').slice(0, 16)}${extension}`;
}

/** The User Timing mark a page script's bundle sets once all its modules have run (src/platform/http/page-bundle.ts). */
export const PAGE_READY_MARK = 'oc-page-ready';

/** A quoted message key in a script: the way test/i18n.test.ts requires every key a script uses to be written. */
const QUOTED_KEY = /'([a-z0-9_]+(?:\.[a-z0-9_]+)+)'|"([a-z0-9_]+(?:\.[a-z0-9_]+)+)"/g;

/** The messages of `catalog` that the modules `sources` holds name, in the catalog's order. */
export function pageMessages(catalog: Readonly<Record<string, string>>, sources: readonly string[]): Record<string, string> {
  const named = new Set<string>();
  for (const source of sources) for (const match of source.matchAll(QUOTED_KEY)) named.add((match[1] ?? match[2]) as string);
  return Object.fromEntries(Object.entries(catalog).filter(([key]) => named.has(key)));
}

/** Messages as a module, the form a page catalog is served in under `/assets/`. */
export function catalogModule(messages: Readonly<Record<string, string>>): string {
  return `export const messages = ${JSON.stringify(messages)};\n`;
}

/** The plain name of a page script's own catalog in `locale`. */
export function pageCatalogName(script: string, locale: Locale | '{{lang}}'): string {
  return `messages-${script.replace(/\.js$/, '')}-${locale}.js`;
}
