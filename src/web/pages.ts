/**
 * The browser pages of the host: `/signin`, `/account`, `/sudo`, the API
 * explorer at `/api-explorer`, and their static assets under `/assets/<file>`. The pages are plain HTML, CSS
 * and hand-written JavaScript modules: what every page shares (the head, the
 * styles, the API and message helpers, the sign-in card's frame) in
 * `src/pages/`, and what belongs to a feature in that feature's own
 * `src/features/<name>/pages/` (see {@link pageFolders}). They call the API
 * same-origin with the HttpOnly cookie, so no token ever appears in them.
 *
 * Every page answer carries a Content-Security-Policy without
 * `unsafe-inline`. The pages a person signs in on carry their style, catalog
 * and script inline, so that a first visit is one request; their policy
 * allows exactly that style and that script by their SHA-256 hashes, made at
 * start ({@link localizedPages}). The other pages link their assets, and
 * nothing inline is allowed on them.
 *
 * The four page templates share one head (`head.html`: the document head
 * and the page header); each template starts with a `<!--head …-->` line
 * naming its title, script and any extra stylesheet, then its own `<body>`
 * tag (see {@link withHead}).
 *
 * Every page is rendered in the request's language (docs/pages.md "Languages"):
 * the templates' `{{t:key}}` markers are filled from the page catalogs
 * (src/platform/i18n/pages/ and each feature's `messages/`, joined by
 * src/page-words.ts) once per language at start, and each page's script
 * gets the messages it uses in its language, formatted in the browser by
 * src/pages/message-format.js.
 *
 * The files are read once at start and made into what the pages load:
 * hashed names, one esbuild bundle per page script (written by `npm run
 * build` to `dist/pages/`, or made at start when running from source:
 * src/platform/http/page-bundle.ts), its catalogs, compressed forms
 * (src/platform/http/page-assets.ts, docs/architecture.md "Page assets"); the
 * templates refer to the hashed names or carry the assets inline. All is served from memory:
 * `/assets/<file>` looks the name up in that table, so no request path ever reaches the file
 * system (no traversal to refuse, nothing to normalise). `tsc` does not copy
 * non-TypeScript files, so from `dist/src/web/` the folders are found back
 * in `<repo>/src/` (see {@link findPageRoot}).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OcError } from '../platform/errors.js';
import { checkReturnTo } from '../identity/signin/index.js';
import type { OriginRules } from '../identity/signin/index.js';
import type { SessionDoor } from './session.js';
import { POLICY } from '../platform/http/policy.js';
import { applyBrand, brandCss } from '../platform/http/brand.js';
import type { Brand } from '../platform/config.js';
import {
  escapeHtml,
  formatHtml,
  isLocale,
  LANGUAGE_NAMES,
  LOCALES,
  PAGE_CATALOGS,
  type Locale,
  type MessageKey,
} from '../platform/i18n/index.js';
// Every feature's page words joined to the catalogs before a page is made from them.
import { requestLocale } from './locale.js';
import { chooseEncoding, varyOnEncoding } from '../platform/http/compression.js';
import { type GzipTemplate, gzipTemplate } from '../platform/http/page-gzip.js';
import {
  type Asset,
  assetOf,
  catalogModule,
  HASHED_ASSET_NAME,
  hashedName,
  PLAIN_ASSET_NAME,
  pageCatalogName,
  pageMessages,
} from '../platform/http/page-assets.js';
import {
  BUILT_PAGES_DIR,
  bundlePageScripts,
  type PageBundle,
  type PageSources,
  pageFilePath,
  pageModuleName,
  readPageBundles,
} from '../platform/http/page-bundle.js';

/** The policy of every page answer: same-origin scripts, styles and fetches only. */
export const PAGE_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

/** A page's policy `csp` with `img-src` allowing `origin` too (an app's https logo). */
export function allowingImagesFrom(csp: string, origin: string): string {
  return csp.replace("img-src 'self' data:", `img-src 'self' data: ${origin}`);
}

/** Assets under their plain names may be a little stale after a deploy, never for long. */
const ASSET_MAX_AGE_SECONDS = 300;
/** Assets under their hashed names never change: a year, and no revalidation. */
const HASHED_ASSET_CACHE = 'public, max-age=31536000, immutable';

interface Templates {
  readonly signin: string;
  readonly account: string;
  readonly sudo: string;
  readonly explorer: string;
  /** The OpenID provider's consent page (src/features/oidc/page-routes.ts). */
  readonly consent: string;
  /** The OpenID provider's other pages: an error, the sign-out question and its answer. */
  readonly notice: string;
  /** The phone's side of signing in from a phone (src/features/phone/pages/phone.js). */
  readonly phone: string;
  /** The operators' console (src/features/admin/pages/admin.js). */
  readonly admin: string;
}

const TEMPLATE_NAMES = ['signin', 'account', 'sudo', 'explorer', 'consent', 'notice', 'phone', 'admin'] as const;

export interface PageFiles extends Templates {
  /** The folder the page folders were found in (src/, {@link pageFolders}). */
  readonly root: string;
  /** Every page file by the name it is served under, with its path. */
  readonly files: PageSources;
  /** Every asset under every name it is served by: plain, and hashed for what the pages reference (src/platform/http/page-assets.ts). */
  readonly assets: ReadonlyMap<string, Asset>;
  /** An asset's plain name → its hashed name, which the pages reference; the single modules have none. */
  readonly hashedNames: ReadonlyMap<string, string>;
  /** A page catalog's plain name (`messages-<script>-<lang>.js`) → its messages, which a page carries inline. */
  readonly messages: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

/**
 * The pages that link their styles, script and catalog as assets under
 * hashed names; every other page carries them inline (see {@link inlineHead}).
 * The API explorer is a developer's tool, opened again and again on a
 * desktop, where the cached assets pay off on every visit after the first.
 * The provider's consent and notice pages are answered under `/oidc`, which
 * is never compressed (src/platform/http/compression.ts, BREACH): inline, the consent
 * page would be 47 KB on the wire at every visit instead of 5 KB and its
 * assets, compressed and cached.
 */
const LINKED_TEMPLATES: ReadonlySet<keyof Templates> = new Set(['explorer', 'consent', 'notice']);
const INLINE_TEMPLATES = TEMPLATE_NAMES.filter((name) => !LINKED_TEMPLATES.has(name));

/** The folder of what every page shares, under the root: the head, the styles, the helpers, the sign-in card's frame. */
const SHARED_PAGES = 'pages';

/**
 * The root of the page folders: `src/`, beside this module's folder
 * (running from `src/` with tsx or vitest), else `<repo>/src/` (running
 * the compiled `dist/src/`), found by its shared folder's `signin.html`.
 */
export function findPageRoot(moduleUrl: string = import.meta.url): string {
  const here = dirname(fileURLToPath(moduleUrl));
  const candidates = [resolve(here, '..'), resolve(here, '../../../src')];
  const found = candidates.find((candidate) => existsSync(join(candidate, SHARED_PAGES, 'signin.html')));
  if (found === undefined) throw new Error(`pages: ${SHARED_PAGES}/signin.html not found in ${candidates.join(' or ')}`);
  return found;
}

/**
 * The page folders under `root`, by a walk, so no list names them: the
 * shared `pages/`, then `features/<name>/pages/` of every feature that has
 * pages, in the order of the names. Paths relative to `root`.
 */
export function pageFolders(root: string): string[] {
  const isFolder = (path: string) => existsSync(path) && statSync(path).isDirectory();
  const features = join(root, 'features');
  const featureFolders = isFolder(features)
    ? readdirSync(features)
        .sort()
        .map((name) => join('features', name, 'pages'))
        .filter((folder) => isFolder(join(root, folder)))
    : [];
  return [SHARED_PAGES, ...featureFolders];
}

/**
 * Every file of the page folders under `root` by its name, which is the
 * name `/assets/` serves it under and the one the modules import it by
 * (`./common.js`): one flat namespace, so two folders holding the same name
 * stop the start.
 */
export function pageFilesOf(root: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const folder of pageFolders(root)) {
    for (const name of readdirSync(join(root, folder)).sort()) {
      const path = join(root, folder, name);
      const known = files.get(name);
      if (known !== undefined) throw new Error(`pages: ${name} is in two page folders: ${known} and ${path}`);
      files.set(name, path);
    }
  }
  return files;
}

/**
 * `<!--head title=<message key> script=<file>.js [styles=<file>.css[,<file>.css…]]-->`, a
 * template's first line, and the template's own `<body …>` tag, the whole
 * next line.
 */
const HEAD_MARKER =
  /^<!--head title=([a-z0-9_.]+) script=([a-z0-9-]+\.js)(?: styles=([a-z0-9-]+\.css(?:,[a-z0-9-]+\.css)*))?-->\n(<body\b[^\n]*)\n/;

/** The page's own catalog, preloaded beside its script; i18n.js finds it by its id. */
function catalogPreload(script: string): string {
  return `<link rel="modulepreload" id="page-messages" href="/assets/${pageCatalogName(script, '{{lang}}')}">`;
}

/**
 * A template with the shared head in place of its `<!--head …-->` line: the
 * document head with the page's title, script (bundled with its imports,
 * src/platform/http/page-bundle.ts), the preload of its catalog and its extra
 * stylesheet, then the page's own `<body>` tag, then the page header. Done
 * once at start, before the messages are filled in; a template without the
 * line is a programming error.
 */
function withHead(template: string, head: string, name: string): { readonly html: string; readonly script: string } {
  const marker = HEAD_MARKER.exec(template);
  if (marker === null) throw new Error(`pages: ${name} does not start with <!--head title=… script=…--> and its <body> tag`);
  const [line, title = '', script = '', , body = ''] = marker;
  const styles: string | undefined = marker[3];
  const filled = head
    .replace('<!--title-->', `{{t:${title}}}`)
    .replace(
      '<!--styles-->',
      (styles ?? '')
        .split(',')
        .filter(Boolean)
        .map((sheet) => `\n  <link rel="stylesheet" href="/assets/${sheet}">`)
        .join(''),
    )
    .replace('<!--script-->', pageModuleName(script))
    .replace(/<script type="module"[^>]*><\/script>/, (tag) => `${catalogPreload(script)}\n  ${tag}`)
    .replace('<!--body-->', () => body);
  if (!filled.includes('id="page-messages"'))
    throw new Error('pages: head.html has no <script type="module"> to preload the catalog beside');
  return { html: filled + template.slice(line.length), script };
}

/** The entry scripts the templates of `files` name in their head lines, each once: what is bundled. */
export function pageScripts(files: PageSources): string[] {
  const scripts = TEMPLATE_NAMES.map((name) => {
    const script = HEAD_MARKER.exec(readFileSync(pageFilePath(files, `${name}.html`), 'utf8'))?.[2];
    if (script === undefined) throw new Error(`pages: ${name}.html does not start with <!--head title=… script=…--> and its <body> tag`);
    return script;
  });
  return [...new Set(scripts)];
}

/**
 * Whether this module runs compiled (`dist/src/`), where `npm run build`
 * has bundled the page scripts into `dist/pages/`; else it runs from source
 * (tsx, vitest) and bundles them at start (src/platform/http/page-bundle.ts).
 */
const COMPILED = !import.meta.url.endsWith('.ts');

/** The files of each root's page folders, read and prepared once per process (tests start many apps). */
const loadedDirs = new Map<string, PageFiles>();

/**
 * Reads the pages and every asset once, and makes what the pages load from
 * them: hashed names, each page script's bundle, each page script's catalog
 * per language, compressed forms (src/platform/http/page-assets.ts). The bundles are
 * read from `built`, where `npm run build` wrote them, or, without one,
 * made now with esbuild (src/platform/http/page-bundle.ts).
 */
export function loadPageFiles(
  root: string = findPageRoot(),
  built: string | undefined = COMPILED ? BUILT_PAGES_DIR : undefined,
): PageFiles {
  const key = `${root}\n${built ?? ''}`;
  const known = loadedDirs.get(key);
  if (known !== undefined) return known;
  const paths = pageFilesOf(root);
  const files = new Map<string, Buffer>();
  for (const [name, path] of paths) if (PLAIN_ASSET_NAME.test(name)) files.set(name, readFileSync(path));
  const head = readFileSync(pageFilePath(paths, 'head.html'), 'utf8');
  const templates = Object.fromEntries(
    TEMPLATE_NAMES.map((name) => [name, withHead(readFileSync(pageFilePath(paths, `${name}.html`), 'utf8'), head, `${name}.html`)]),
  ) as Record<keyof Templates, { html: string; readonly script: string }>;

  const scripts = [...new Set(Object.values(templates).map((template) => template.script))];
  const bundles: ReadonlyMap<string, PageBundle> =
    built === undefined ? bundlePageScripts(paths, scripts) : readPageBundles(paths, scripts, built);
  const generated = new Map<string, string>();
  for (const locale of LOCALES) generated.set(`messages-${locale}.js`, catalogModule(PAGE_CATALOGS[locale]));
  const messages = new Map<string, Readonly<Record<string, string>>>();
  /** The scripts that say nothing in words (their graph has no i18n.js): no catalog, and their pages preload none. */
  const wordless = new Set<string>();
  for (const [script, bundle] of bundles) {
    generated.set(pageModuleName(script), bundle.code);
    if (!bundle.inputs.includes('i18n.js')) {
      wordless.add(script);
      continue;
    }
    // The catalog is read off the modules as written: minified, a key is still a quoted string, but the rule is the source's.
    const graph = bundle.inputs.map((input) => files.get(input)?.toString('utf8') ?? '');
    for (const locale of LOCALES) {
      const name = pageCatalogName(script, locale);
      messages.set(name, pageMessages(PAGE_CATALOGS[locale], graph));
      generated.set(name, catalogModule(messages.get(name) as Record<string, string>));
    }
  }
  for (const template of Object.values(templates)) {
    if (wordless.has(template.script)) template.html = template.html.replace(`${catalogPreload(template.script)}\n  `, '');
  }
  const assets = new Map<string, Asset>();
  const hashedNames = new Map<string, string>();
  /**
   * `loads`: whether the pages load the asset (else only a page cached before a deploy might, by its plain
   * name). `hashed`: whether it is served under a hashed name too, which everything the pages reference is.
   */
  const add = (name: string, body: Buffer, loads: boolean, hashed = true) => {
    if (assets.has(name)) throw new Error(`pages: ${name} is both a file and a made asset`);
    const plain = assetOf(name, body, loads ? 'now' : 'on first use');
    assets.set(name, plain);
    if (!hashed) return;
    const hashedAs = hashedName(name, body);
    assets.set(hashedAs, plain);
    hashedNames.set(name, hashedAs);
  };
  // Compressed now: the styles and images, and the bundles and catalogs a linked page loads. The other
  // pages carry theirs inline, so their bundles and catalogs, and the whole catalogs, are asked for
  // only by a page from before, or by hand.
  const linked = TEMPLATE_NAMES.filter((name) => LINKED_TEMPLATES.has(name)).map((name) => templates[name].html);
  const linkedNames = LOCALES.flatMap((locale) => linked.map((html) => html.replaceAll('{{lang}}', locale))).join('\n');
  const loads = (name: string) => !name.endsWith('.js') || linkedNames.includes(`/assets/${name}"`);
  // The single modules, as written, under their plain names only: no page loads them (each loads its
  // bundle), but a module may be imported on its own by name (test/e2e-browser.test.ts imports
  // passkeys.js), and their relative imports find each other under those names.
  for (const [name, body] of files) add(name, body, loads(name), !name.endsWith('.js'));
  for (const [name, text] of generated) add(name, Buffer.from(text, 'utf8'), loads(name));

  const loaded: PageFiles = {
    root,
    files: paths,
    ...(Object.fromEntries(TEMPLATE_NAMES.map((name) => [name, templates[name].html])) as unknown as Templates),
    assets,
    hashedNames,
    messages,
  };
  loadedDirs.set(key, loaded);
  return loaded;
}

/** `{{t:key}}` or `{{t:key|name=<tag …>|…}}`: a message, with its `<name>` words wrapped in that tag. */
const MESSAGE_MARKER = /\{\{t:([a-z0-9_.]+)((?:\|[a-z]+=<[^>]*>)*)\}\}/g;

/** `<!--footer-->`: a page's footer holding only the support line and the language form. */
const FOOTER = '<footer class="site-footer"><div class="wrap"><!--support-line--><!--languages--></div></footer>';

/** The language form of every page's footer (i18n.js, src/pages/, stores the choice). */
function languageForm(locale: Locale): string {
  const options = LOCALES.map(
    (option) =>
      `<option value="${option}" lang="${option}"${option === locale ? ' selected' : ''}>${escapeHtml(LANGUAGE_NAMES[option])}</option>`,
  ).join('');
  return (
    `<form class="language-form" id="language-form" method="get">` +
    `<label for="language">${formatHtml(locale, 'page.language')}</label>` +
    `<select id="language" name="lang">${options}</select>` +
    `<button type="submit" class="secondary">${formatHtml(locale, 'page.language_apply')}</button></form>`
  );
}

/**
 * A page template in one language, with the operator's brand: its messages,
 * `{{lang}}`, the footer, the language form and the brand markers. Done once per
 * language at start; what is left are the per-request `{{placeholders}}`.
 */
function localizeTemplate(template: string, locale: Locale, brand: Brand): string {
  const translated = template.replace(MESSAGE_MARKER, (_whole, key: string, options: string) => {
    if (!Object.hasOwn(PAGE_CATALOGS.en, key)) throw new Error(`pages: no message ${key}`);
    const tags = Object.fromEntries(
      options
        .split('|')
        .filter(Boolean)
        .map((option) => [option.slice(0, option.indexOf('=')), option.slice(option.indexOf('=') + 1)]),
    );
    return formatHtml(locale, key as MessageKey, {}, tags);
  });
  const framed = translated
    .replace('<!--footer-->', FOOTER)
    .replaceAll('{{lang}}', locale)
    .replace('<!--languages-->', languageForm(locale));
  return applyBrand(framed, brand, locale);
}

/** `/assets/<plain name>` in a page. */
const ASSET_REFERENCE = /\/assets\/([a-z0-9][a-z0-9-]*\.(?:css|js|svg|png|ico))(?![\w.])/g;

/** The operator's stylesheet (src/platform/http/brand.ts), fixed at start like the files: one per brand. */
const brandAssets = new Map<string, { readonly name: string; readonly asset: Asset }>();

function brandAsset(brand: Brand): { readonly name: string; readonly asset: Asset } {
  const css = brandCss(brand);
  let made = brandAssets.get(css);
  if (made === undefined) {
    made = { name: hashedName('brand.css', css), asset: assetOf('brand.css', Buffer.from(css, 'utf8')) };
    brandAssets.set(css, made);
  }
  return made;
}

/** A page with its `/assets/<file>` references turned into the files' hashed names. */
function withHashedNames(html: string, loaded: PageFiles, brand: Brand): string {
  return html.replace(ASSET_REFERENCE, (reference, name: string) => {
    const hashed = name === 'brand.css' ? brandAsset(brand).name : loaded.hashedNames.get(name);
    return hashed === undefined ? reference : `/assets/${hashed}`;
  });
}

/** In a page's head as {@link withHead} wrote it: a stylesheet link, the catalog's preload, the module script. */
const STYLESHEET_LINK = /\n {2}<link rel="stylesheet" href="\/assets\/([a-z0-9-]+\.css)">/g;
const CATALOG_PRELOAD = /\n {2}<link rel="modulepreload" id="page-messages" href="\/assets\/([a-z0-9-]+\.js)">/;
const MODULE_SCRIPT = /\n {2}<script type="module" src="\/assets\/([a-z0-9-]+\.js)"><\/script>/;
/** Where a page's inline blocks go once its other `/assets/` references have their hashed names. */
const INLINE_MARKER = '<!--inline-->';

/** A CSP hash source of an inline block's text. */
function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * What an inline block must not hold, and why: what would end the element
 * early, or what the per-request filling of the page (renderTemplate, the
 * provider pages' `<!--…-->` markers) would change inside it, which would no
 * longer match its hash. Checked at start; a match is a programming error.
 */
const UNSAFE_INLINE: ReadonlyArray<readonly [RegExp, string]> = [
  [/<\/(?:script|style)/i, 'an end tag'],
  [/<!--|<script/i, 'the start of a comment or a script'],
  [/\{\{[a-z_]+\}\}/, 'a {{placeholder}}'],
];

function checkedInline(text: string, what: string): string {
  for (const [pattern, reason] of UNSAFE_INLINE) {
    if (pattern.test(text)) throw new Error(`pages: ${what} cannot go inline: it holds ${reason}`);
  }
  return text;
}

/**
 * A page's head with its styles, catalog and script inline instead of
 * linked (docs/architecture.md "Page assets"): one `<style>` with every
 * stylesheet the head linked, in order (the brand's included); the page's
 * catalog as a JSON data block that i18n.js (src/pages/) reads, with every `<`
 * escaped; the bundled module script. A first visit is then the HTML alone:
 * nothing waits for a second round trip before the page can show and run.
 * The page's policy allows the style and the script by their hashes.
 */
function inlineHead(html: string, loaded: PageFiles, brand: Brand, name: string): { html: string; blocks: string; hashes: string[] } {
  const headEnd = html.indexOf('</head>');
  const head = html.slice(0, headEnd);
  const script = MODULE_SCRIPT.exec(head)?.[1];
  if (script === undefined) throw new Error(`pages: ${name} has no module script to carry inline`);
  const textOf = (asset: string): string => {
    if (asset === 'brand.css') return brandCss(brand);
    const body = loaded.assets.get(asset)?.body;
    if (body === undefined) throw new Error(`pages: ${name} links /assets/${asset}, which is not an asset`);
    return body.toString('utf8');
  };
  const css = checkedInline([...head.matchAll(STYLESHEET_LINK)].map((link) => textOf(link[1] as string)).join('\n'), `${name}'s styles`);
  const js = checkedInline(textOf(script), script);
  const catalog = CATALOG_PRELOAD.exec(head)?.[1];
  const messages = catalog === undefined ? undefined : loaded.messages.get(catalog);
  if (catalog !== undefined && messages === undefined) throw new Error(`pages: ${name} preloads ${catalog}, which is no page catalog`);
  const data =
    messages === undefined
      ? ''
      : `<script type="application/json" id="page-messages">${checkedInline(JSON.stringify(messages).replaceAll('<', '\\u003c'), catalog as string)}</script>\n  `;
  return {
    html:
      head.replace(STYLESHEET_LINK, '').replace(CATALOG_PRELOAD, '').replace(MODULE_SCRIPT, `\n  ${INLINE_MARKER}`) + html.slice(headEnd),
    blocks: `<style>${css}</style>\n  ${data}<script type="module">${js}</script>`,
    hashes: [cspHash(css), cspHash(js)],
  };
}

/** {@link PAGE_CSP} allowing a page's inline style and script by their hashes. */
function inlineCsp([style, script]: readonly string[]): string {
  return PAGE_CSP.replace("script-src 'self'", `script-src 'self' ${script}`).replace("style-src 'self'", `style-src 'self' ${style}`);
}

/** Every page in every language, and the policy each page is answered with. */
export interface LocalizedPages {
  readonly templates: Readonly<Record<Locale, Templates>>;
  readonly csp: Readonly<Record<keyof Templates, string>>;
}

/** The pages made for each pages folder and brand: an app's page routes and its provider pages share them, and tests start many apps. */
const madePages = new WeakMap<PageFiles, Map<string, LocalizedPages>>();

/**
 * Every template in every language, with the operator's brand
 * (src/platform/http/brand.ts), its `/assets/` references turned into hashed names,
 * and its styles, catalog and script inline unless it is a linked page
 * ({@link LINKED_TEMPLATES}); with the policy of each page. Made once per
 * pages folder and brand.
 */
export function localizedPages(loaded: PageFiles, brand: Brand): LocalizedPages {
  let byBrand = madePages.get(loaded);
  if (byBrand === undefined) {
    byBrand = new Map();
    madePages.set(loaded, byBrand);
  }
  const key = JSON.stringify(brand);
  let made = byBrand.get(key);
  if (made === undefined) {
    made = makeLocalizedPages(loaded, brand);
    byBrand.set(key, made);
  }
  return made;
}

function makeLocalizedPages(loaded: PageFiles, brand: Brand): LocalizedPages {
  const csp: Partial<Record<keyof Templates, string>> = {};
  const templates = Object.fromEntries(
    LOCALES.map((locale) => {
      const localized = TEMPLATE_NAMES.map((name) => {
        const html = localizeTemplate(loaded[name], locale, brand);
        if (LINKED_TEMPLATES.has(name)) {
          csp[name] = PAGE_CSP;
          return [name, withHashedNames(html, loaded, brand)];
        }
        const inline = inlineHead(html, loaded, brand, `${name}.html`);
        const policy = inlineCsp(inline.hashes);
        // The style and the script are the same in every language; only the catalog's messages differ.
        if (csp[name] !== undefined && csp[name] !== policy)
          throw new Error(`pages: ${name}.html differs between languages in its style or script`);
        csp[name] = policy;
        return [name, withHashedNames(inline.html, loaded, brand).replace(INLINE_MARKER, () => inline.blocks)];
      });
      return [locale, Object.fromEntries(localized) as unknown as Templates];
    }),
  ) as Record<Locale, Templates>;
  return { templates, csp: csp as Record<keyof Templates, string> };
}

/** Fills `{{name}}` placeholders with escaped values (escapeHtml); an unknown placeholder is a programming error. */
export function renderTemplate(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{([a-z_]+)\}\}/g, (_whole, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`pages: no value for {{${name}}}`);
    return escapeHtml(value);
  });
}

/** `Strict-Transport-Security` when `PUBLIC_URL` is https: one year (src/app.ts, and the provider's answers in src/features/oidc/routes.ts). */
export const HSTS_VALUE = 'max-age=31536000';

/** The headers of every page answer; `csp` when a page needs a wider policy than {@link PAGE_CSP}. */
export function securityHeaders(reply: FastifyReply, csp: string = PAGE_CSP): FastifyReply {
  return reply.header('content-security-policy', csp).header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
}

/** A 302 to `location` that no cache keeps. */
function redirect(reply: FastifyReply, location: string): FastifyReply {
  securityHeaders(reply).header('cache-control', 'no-store');
  return reply.code(302).header('location', location).send();
}

type GzippedPages = Record<Locale, Partial<Record<keyof Templates, GzipTemplate>>>;

/** The inline pages compressed once per language (src/platform/http/page-gzip.ts), for each made set of pages. */
const gzippedPages = new WeakMap<LocalizedPages, GzippedPages>();

function gzippedOf(localized: LocalizedPages): GzippedPages {
  let made = gzippedPages.get(localized);
  if (made === undefined) {
    made = Object.fromEntries(
      LOCALES.map((locale) => [
        locale,
        Object.fromEntries(INLINE_TEMPLATES.map((name) => [name, gzipTemplate(localized.templates[locale][name])])),
      ]),
    ) as GzippedPages;
    gzippedPages.set(localized, made);
  }
  return made;
}

function firstQueryValue(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
}

/** The page's language: `?lang=` (a link that names one), else the cookie, else Accept-Language. */
export function pageLocale(request: FastifyRequest): Locale {
  const asked = firstQueryValue(request, 'lang');
  return isLocale(asked) ? asked : requestLocale(request);
}

/** A page of the templates served by the routes of a feature (the console, src/features/admin). */
export type SentPage = 'signin' | 'sudo' | 'account' | 'phone' | 'explorer' | 'admin';

/**
 * What sends the pages of `localized`: a page filled with `values`. An
 * inline page goes gzip-encoded from its parts compressed at start when the
 * request accepts gzip, even where it would take brotli: only the values are
 * compressed per request. Else the text, which the compression hook may
 * compress (src/platform/http/compression.ts). Pages are cheap and carry the
 * checked return_to: always revalidated. Their language follows the request.
 */
export function pageSender(localized: LocalizedPages) {
  const { templates: pages, csp } = localized;
  const gzipped = gzippedOf(localized);
  return function sendPage(
    request: FastifyRequest,
    reply: FastifyReply,
    page: SentPage,
    locale: Locale,
    values: Readonly<Record<string, string>> = {},
    policy: string = csp[page],
  ): FastifyReply {
    securityHeaders(reply, policy)
      .header('cache-control', 'no-cache')
      .header('content-language', locale)
      .header('vary', 'Accept-Language, Cookie')
      .type('text/html; charset=utf-8');
    const gzip = gzipped[locale][page];
    if (gzip !== undefined && chooseEncoding(request.headers['accept-encoding'], ['gzip']) === 'gzip') {
      varyOnEncoding(reply);
      return reply.header('content-encoding', 'gzip').send(gzip.fill(values));
    }
    return reply.send(renderTemplate(pages[locale][page], values));
  };
}

/** The longest `purpose` the /sudo page shows; longer ones are cut. */
const MAX_PURPOSE_LENGTH = 120;

/** `purpose` as the /sudo page shows it: one line of text, no control characters, bounded. */
export function sudoPurpose(value: string | undefined): string {
  if (value === undefined) return '';
  const line = value
    .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return [...line].slice(0, MAX_PURPOSE_LENGTH).join('');
}

/**
 * A `login_hint` the sign-in page puts in its e-mail or address field (an
 * app's OpenID request passes it on, docs/protocol.md §8 "Signing in"): one
 * line, bounded, else nothing. The page only ever uses it as a field's value.
 */
function loginHintField(value: string | undefined): string {
  if (value === undefined || value.length > 256 || /[\u0000-\u001f\u007f-\u009f]/.test(value)) return '';
  return value.trim();
}

/** A `return_to` that goes back to an authorization's interaction (src/features/oidc/routes.ts), and its uid. */
const INTERACTION_RETURN = /^\/oidc\/interaction\/([A-Za-z0-9_-]{1,64})(?:\?hinted=1)?$/;

/** What the pages use: the session door, the family's origins, the operator's brand and one question to the OpenID provider. */
export interface PageRoutes {
  readonly door: SessionDoor;
  readonly origins: OriginRules;
  readonly brand: Brand;
  readonly publicUrl: string;
  /** The origin of the logo of the app whose interaction `uid` is, or null (src/features/oidc). */
  readonly interactionLogoOrigin: (uid: string) => Promise<string | null>;
}

export function registerPageRoutes(app: FastifyInstance, deps: PageRoutes, loaded: PageFiles = loadPageFiles()): void {
  const isFamily = (origin: string) => deps.origins.isFamilyOrigin(origin);
  const localized = localizedPages(loaded, deps.brand);
  const { csp } = localized;
  const brand = brandAsset(deps.brand);

  /**
   * `return_to` by the rule the provider start applies (docs/protocol.md §6
   * "return_to"): a path, or a URL of the family, normalised. A refused value
   * is dropped and the page says so; the page's scripts follow the value
   * rendered here as it is, so it must be the normalised one.
   */
  function returnToOf(request: FastifyRequest): { returnTo: string; refused: boolean } {
    const asked = firstQueryValue(request, 'return_to') ?? '';
    if (asked === '') return { returnTo: '', refused: false };
    try {
      return { returnTo: checkReturnTo(asked, deps.publicUrl, isFamily), refused: false };
    } catch {
      return { returnTo: '', refused: true };
    }
  }

  /** A page that goes on to the request's checked return_to (or says it was refused), with its other template values. */
  async function sendReturningPage(
    request: FastifyRequest,
    reply: FastifyReply,
    page: 'signin' | 'sudo',
    values: Readonly<Record<string, string>>,
  ): Promise<FastifyReply> {
    const { returnTo, refused } = returnToOf(request);
    const locale = pageLocale(request);
    const filled = { return_to: returnTo, return_to_refused: refused ? '1' : '', ...values };
    return sendPage(request, reply, page, locale, filled, await appLogoCsp(returnTo, csp[page]));
  }

  const sendPage = pageSender(localized);

  /**
   * The page's policy, with `img-src` naming the https logo origin of the app
   * whose authorization `returnTo` goes back to, so the page can show the
   * logo it learns from GET /oidc/interaction/<uid>/app (docs/protocol.md §8
   * "Signing in").
   */
  async function appLogoCsp(returnTo: string, policy: string): Promise<string> {
    const uid = INTERACTION_RETURN.exec(returnTo)?.[1];
    const origin = uid === undefined ? null : await deps.interactionLogoOrigin(uid);
    return origin === null ? policy : allowingImagesFrom(policy, origin);
  }

  app.get('/signin', { config: { policy: POLICY.unlimited }, schema: { hide: true } }, async (request, reply) => {
    const add = firstQueryValue(request, 'add');
    return sendReturningPage(request, reply, 'signin', {
      add: add === '1' || add === 'true' ? '1' : '',
      login_hint: loginHintField(firstQueryValue(request, 'login_hint')),
    });
  });

  // docs/protocol.md "Signing in from a phone": the phone key is in the fragment, which this request never carries.
  app.get('/signin/phone', { config: { policy: POLICY.unlimited }, schema: { hide: true } }, async (request, reply) => {
    return sendPage(request, reply, 'phone', pageLocale(request));
  });

  // The service's front door, and where a provider sign-in without
  // return_to lands: the account page (which sends strangers to /signin).
  app.get('/', { config: { policy: POLICY.unlimited }, schema: { hide: true } }, async (_request, reply) => {
    return redirect(reply, '/account');
  });

  app.get('/account', { config: { policy: POLICY.unlimited }, schema: { hide: true } }, async (request, reply) => {
    // Server-side first; the page also goes to /signin when /me answers 401.
    if ((await deps.door.current(request)) === null) {
      return redirect(reply, '/signin?return_to=/account');
    }
    return sendPage(request, reply, 'account', pageLocale(request));
  });

  // The re-proof a consumer site sends people to after 401 `sudo_required`
  // (docs/protocol.md §6 "Step-up"): prove the active account again, then back to return_to.
  app.get('/sudo', { config: { policy: POLICY.unlimited }, schema: { hide: true } }, async (request, reply) => {
    if ((await deps.door.current(request)) === null) {
      return redirect(reply, `/signin?return_to=${encodeURIComponent(request.url)}`);
    }
    return sendReturningPage(request, reply, 'sudo', {
      purpose: sudoPurpose(firstQueryValue(request, 'purpose')),
      require: firstQueryValue(request, 'require') === 'key' ? 'key' : '',
    });
  });

  // The interactive explorer of the OpenAPI document (src/pages/explorer.js).
  for (const url of ['/api-explorer', '/api-explorer/']) {
    app.get(url, { config: { policy: POLICY.unlimited }, schema: { hide: true } }, async (request, reply) => {
      return sendPage(request, reply, 'explorer', pageLocale(request));
    });
  }

  app.get('/assets/:file', { config: { policy: POLICY.unlimited }, schema: { hide: true } }, async (request, reply) => {
    const { file } = request.params as { file: string };
    const asset = file === 'brand.css' || file === brand.name ? brand.asset : loaded.assets.get(file);
    if (asset === undefined) throw new OcError('not_found', 'assets: no such file');
    return sendAsset(request, reply, asset, HASHED_ASSET_NAME.test(file));
  });
}

/**
 * An asset in the best encoding the request accepts (src/platform/http/compression.ts),
 * each encoding with its own entity tag; a hashed name is cached for good.
 */
function sendAsset(request: FastifyRequest, reply: FastifyReply, asset: Asset, hashed: boolean): FastifyReply {
  const encoding = chooseEncoding(request.headers['accept-encoding']);
  const encoded = encoding === null ? undefined : asset.encoded[encoding];
  const etag = encoded?.etag ?? asset.etag;
  securityHeaders(reply)
    .header('cache-control', hashed ? HASHED_ASSET_CACHE : `public, max-age=${ASSET_MAX_AGE_SECONDS}`)
    .header('etag', etag);
  if (Object.keys(asset.encoded).length > 0) varyOnEncoding(reply);
  const match = request.headers['if-none-match'];
  if (match?.split(',').some((tag) => tag.trim() === etag)) return reply.code(304).send();
  if (encoded !== undefined && encoding !== null) reply.header('content-encoding', encoding);
  return reply.type(asset.contentType).send(encoded?.body ?? asset.body);
}
