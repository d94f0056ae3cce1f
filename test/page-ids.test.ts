/**
 * Every element id a page's scripts look up is on the page: for each page
 * script, the ids its module graph (the modules esbuild bundles with it,
 * src/platform/http/page-bundle.ts) asks for by `byId('x')`, `focusHeading('x')`,
 * `getElementById('x')` or `querySelector('#x')`, against the page as it is
 * served (its template with head.html, the footer's language form and the
 * catalog's `page-messages` block), or made by the scripts themselves
 * (`id: 'x'` in an element they build). A lookup that only a browser would
 * catch, as `page: #x is missing` at run time, fails here in milliseconds.
 * Ids built at run time (`byId(\`panel-${name}\`)`) are not read.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundlePageScripts } from '../src/platform/http/page-bundle.js';
// Every feature's page words, joined to the shared ones (src/page-words.ts), as the app does at start.
import '../src/page-words.js';
import { loadPageFiles, localizedPages, pageScripts } from '../src/web/pages.js';

/** The root of the page folders: src/pages/ and every src/features/<name>/pages/. */
const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const NO_BRAND = { name: undefined, logoUrl: undefined, accent: undefined, supportUrl: undefined };

/**
 * `byId('x')`, `focusHeading('x')` (which throw when the element is missing), `querySelector('#x')` /
 * `querySelectorAll('#x …')`; and `getElementById('x')`, whose caller is ready for none: a module shared
 * by pages may look for what only some of them have (oidc-page.js, the app's logo of the consent page).
 */
const LOOKUP =
  /\b(?:(byId|focusHeading|getElementById)\(\s*['"]([A-Za-z][\w-]*)['"]\s*\)|querySelector(?:All)?\(\s*['"]#([A-Za-z][\w-]*))/g;
/** An id a script gives an element it makes: `id: 'x'` or `.id = 'x'`. */
const MADE = /\bid:\s*['"]([A-Za-z][\w-]*)['"]|\.id\s*=\s*['"]([A-Za-z][\w-]*)['"]/g;

interface Lookup {
  readonly id: string;
  readonly module: string;
  /** Whether the caller copes with no such element (getElementById). */
  readonly nullable: boolean;
}

/** The ids `sources` look up, each with the module it is looked up in. */
function lookedUp(sources: ReadonlyMap<string, string>): Lookup[] {
  return [...sources].flatMap(([module, source]) =>
    [...source.matchAll(LOOKUP)].map((match) => ({
      id: (match[2] ?? match[3]) as string,
      module,
      nullable: match[1] === 'getElementById',
    })),
  );
}

function idsOf(html: string): Set<string> {
  return new Set([...html.matchAll(/\sid="([^"]+)"/g)].map((match) => match[1] as string));
}

const files = loadPageFiles(SRC);
const { templates } = localizedPages(files, NO_BRAND);
const scripts = pageScripts(files.files);
const bundles = bundlePageScripts(files.files, scripts);
/** The page each script is the entry of: its template's name. */
const PAGE_OF: Readonly<Record<string, keyof (typeof templates)['en']>> = {
  'signin.js': 'signin',
  'account.js': 'account',
  'sudo.js': 'sudo',
  'phone.js': 'phone',
  'explorer.js': 'explorer',
  'consent.js': 'consent',
  'notice.js': 'notice',
  'admin.js': 'admin',
};

describe('element ids the page scripts look up', () => {
  it('knows the page of every entry script', () => {
    expect(scripts.filter((script) => PAGE_OF[script] === undefined)).toEqual([]);
  });

  /** Each page script's lookups, and the ids on its page or made by its modules. */
  const pages = scripts.map((script) => {
    const sources = new Map(bundles.get(script)!.inputs.map((input) => [input, readFileSync(files.files.get(input)!, 'utf8')]));
    const present = idsOf(templates.en[PAGE_OF[script]!]);
    for (const source of sources.values()) for (const match of source.matchAll(MADE)) present.add((match[1] ?? match[2]) as string);
    return { script, lookups: lookedUp(sources), present };
  });

  it('finds lookups to check on every page', () => {
    for (const { script, lookups } of pages) expect(lookups.length, script).toBeGreaterThan(0);
    expect(pages.reduce((sum, page) => sum + page.lookups.length, 0)).toBeGreaterThan(250);
  });

  it.each(scripts)('%s: every id its module graph requires is on its page', (script) => {
    const { lookups, present } = pages.find((page) => page.script === script)!;
    expect(lookups.filter(({ id, nullable }) => !nullable && !present.has(id))).toEqual([]);
  });

  it('every id a module looks for without requiring it is on some page that loads the module', () => {
    const absent = pages
      .flatMap(({ lookups }) => lookups.filter(({ nullable }) => nullable))
      .filter(({ id, module }) => !pages.some((page) => page.present.has(id) && page.lookups.some((lookup) => lookup.module === module)));
    expect(absent).toEqual([]);
  });
});
