/**
 * The page routes over HTTP (src/web/pages.ts), without a browser: headers,
 * the server-side return_to check, the signed-out redirect of /account, the
 * asset table, and finding the files (the shared folder's and every
 * feature's) from the compiled `dist/src/`.
 * test/e2e-browser.test.ts drives the same pages in Chromium.
 */
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { LOCALES, PAGE_CATALOGS } from '../src/platform/i18n/index.js';
import { PAGE_READY_MARK } from '../src/platform/http/page-assets.js';
import { bundlePageScripts, readPageBundles, writePageBundles } from '../src/platform/http/page-bundle.js';
// Every feature's page words, joined to the shared ones (src/page-words.ts), as the app does at start.
import '../src/page-words.js';
import {
  findPageRoot,
  loadPageFiles,
  localizedPages,
  PAGE_CSP,
  pageFilesOf,
  pageFolders,
  pageScripts,
  renderTemplate,
  sudoPurpose,
} from '../src/web/pages.js';
import { testApp } from './support/app.js';
import { Browser, newWallet } from './support/auth-client.js';
import { hostileReturnTo } from './support/return-to.js';
import { inlineParts, inlinePolicy } from './support/inline-page.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** The root of the page folders: src/pages/ and every src/features/<name>/pages/. */
const SRC = join(REPO, 'src');
const PAGES_DIR = join(SRC, 'pages');

/** A copy of every page folder under a new root, each in its place; the caller removes it. */
function copyOfPages(): string {
  const root = mkdtempSync(join(tmpdir(), 'oc-pages-'));
  for (const folder of pageFolders(SRC)) cpSync(join(SRC, folder), join(root, folder), { recursive: true });
  return root;
}

const PUBLIC_URL = 'http://localhost:8787';
const NO_BRAND = { name: undefined, logoUrl: undefined, accent: undefined, supportUrl: undefined };
let app: FastifyInstance;

beforeAll(async () => {
  app = await testApp({ PUBLIC_URL, FAMILY_ORIGINS: `${PUBLIC_URL},https://*.example.com` });
});
afterAll(async () => {
  await app.close();
});

function dataAttribute(html: string, name: string): string | undefined {
  return new RegExp(`<body[^>]* data-${name}="([^"]*)"`).exec(html)?.[1];
}

describe('finding the page files', () => {
  it('finds the page folders under src/ from src/web (tsx, vitest)', () => {
    expect(findPageRoot(pathToFileURL(join(REPO, 'src', 'web', 'pages.ts')).href)).toBe(SRC);
  });

  it('falls back to <repo>/src from the compiled dist/src/web, which has no pages', () => {
    expect(findPageRoot(pathToFileURL(join(REPO, 'dist', 'src', 'web', 'pages.js')).href)).toBe(SRC);
  });

  it('stops the start with a message naming where it looked', () => {
    expect(() => findPageRoot(pathToFileURL('/nowhere/a/b/http/pages.js').href)).toThrow(/^pages: pages\/signin\.html not found in /);
  });

  it("finds the shared folder and each feature's pages folder by a walk, and nothing else of src/", () => {
    const folders = pageFolders(SRC);
    expect(folders[0]).toBe('pages');
    const features = readdirSync(join(SRC, 'features')).filter((name) => readdirSync(join(SRC, 'features', name)).includes('pages'));
    expect(folders.slice(1)).toEqual(features.sort().map((name) => join('features', name, 'pages')));
    expect(folders).toEqual(expect.arrayContaining([join('features', 'wallet', 'pages'), join('features', 'oidc', 'pages')]));
  });

  it('holds the typecheck of the page scripts and knip to the same folders (tsconfig.page-folders.json)', () => {
    const config = JSON.parse(readFileSync(join(REPO, 'tsconfig.page-folders.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as {
      compilerOptions: { rootDirs: string[] };
    };
    expect(config.compilerOptions.rootDirs).toEqual([...pageFolders(SRC).map((folder) => `src/${folder}`), 'types/pages']);
  });

  it('stops the start when two page folders hold the same name: /assets/ serves one flat namespace', () => {
    const root = copyOfPages();
    try {
      copyFileSync(join(root, 'pages', 'common.js'), join(root, 'features', 'wallet', 'pages', 'common.js'));
      expect(() => pageFilesOf(root)).toThrow(/^pages: common\.js is in two page folders: /);
      expect(() => loadPageFiles(root)).toThrow(/^pages: common\.js is in two page folders: /);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('holds only assets with known names: no HTML, no TypeScript; each page script bundled, its catalogs, and one whole catalog per language', () => {
    const files = loadPageFiles(SRC);
    const plain = [...files.assets.keys()].filter((name) => !/\.[0-9a-f]{16}\./.test(name)).sort();
    const scripts = ['account', 'admin', 'consent', 'explorer', 'phone', 'signin', 'sudo'];
    // The provider's notices say nothing from a script: their script has no catalog.
    const wordless = ['notice'];
    expect(plain).toEqual(
      [
        // Every script, style and picture of the folders as it is…
        ...[...files.files.keys()].filter((name) => /^[a-z0-9-]+\.(?:js|css|svg|png|ico)$/.test(name)),
        // …and what is made of them at start.
        ...LOCALES.map((locale) => `messages-${locale}.js`),
        ...scripts.flatMap((script) => [`${script}-page.js`, ...LOCALES.map((locale) => `messages-${script}-${locale}.js`)]),
        ...wordless.map((script) => `${script}-page.js`),
      ].sort(),
    );
    expect(files.notice).not.toContain('modulepreload');
    expect(files.consent).toContain('<link rel="modulepreload" id="page-messages"');
    // Every asset also under its hashed name, and nothing else, but the single modules, which no page loads.
    const modules = [...files.files.keys()].filter((name) => /^[a-z0-9-]+\.js$/.test(name));
    expect(modules).toContain('common.js');
    expect(files.assets.size).toBe(plain.length * 2 - modules.length);
    for (const name of plain) {
      if (modules.includes(name)) expect(files.hashedNames.has(name), name).toBe(false);
      else expect(files.assets.has(files.hashedNames.get(name)!), name).toBe(true);
    }
    expect(files.assets.get('messages-de.js')!.body.toString('utf8')).toMatch(/^export const messages = \{"error\.network":/);
  });

  it('gives every template the one head of head.html, with its own title, stylesheets, script and body tag', () => {
    const files = loadPageFiles(SRC);
    for (const page of ['signin', 'account', 'sudo', 'explorer'] as const) {
      const html = files[page];
      expect(html.startsWith('<!doctype html>\n<html lang="{{lang}}">\n<head>\n'), page).toBe(true);
      expect(html, page).toContain(`<title>{{t:${page}.title}} · <!--brand-name--></title>`);
      expect(html, page).toMatch(
        new RegExp(
          `<link rel="modulepreload" id="page-messages" href="/assets/messages-${page}-\\{\\{lang\\}\\}\\.js">\n  <script type="module" src="/assets/${page}-page\\.js"></script>\n</head>\n<body data-brand="<!--brand-name-->"[^\n]*>\n  <a class="skip-link" href="#main">`,
        ),
      );
      expect(html, page).not.toContain('<!--head');
      expect(html.match(/<head>/g), page).toHaveLength(1);
    }
    expect(files.explorer).toContain(
      '<link rel="stylesheet" href="/assets/brand.css">\n  <link rel="stylesheet" href="/assets/explorer.css">\n',
    );
    expect(files.signin).not.toContain('explorer.css');
    expect(files.signin).toContain(
      '<link rel="stylesheet" href="/assets/brand.css">\n  <link rel="stylesheet" href="/assets/signin.css">\n',
    );
  });

  it('stops the start on a template without its head line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'oc-pages-'));
    try {
      mkdirSync(join(dir, 'pages'));
      for (const name of ['head.html', 'sudo.html', 'explorer.html']) copyFileSync(join(PAGES_DIR, name), join(dir, 'pages', name));
      writeFileSync(join(dir, 'pages', 'signin.html'), '<!doctype html>\n<body>\n');
      expect(() => loadPageFiles(dir)).toThrow(/^pages: signin\.html does not start with <!--head/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('puts the styles, the catalog and the script inline in the pages a person signs in on, the same script and style in every language', () => {
    const files = loadPageFiles(SRC);
    const { templates, csp } = localizedPages(files, NO_BRAND);
    // The explorer, and the provider's pages, which are never compressed (BREACH), link theirs.
    for (const page of ['explorer', 'consent', 'notice'] as const) {
      expect(csp[page], page).toBe(PAGE_CSP);
      expect(templates.en[page], page).not.toMatch(/<style|<script type="module">/);
    }
    for (const page of ['signin', 'account', 'sudo', 'phone'] as const) {
      const english = inlineParts(templates.en[page]);
      expect(csp[page], page).toBe(inlinePolicy(templates.en[page]));
      // Every stylesheet the head linked, in order: app.css first, the page's own last.
      expect(english.style.startsWith(files.assets.get('app.css')!.body.toString('utf8')), page).toBe(true);
      expect(english.script, page).toBe(files.assets.get(`${page}-page.js`)!.body.toString('utf8'));
      for (const locale of LOCALES) {
        const parts = inlineParts(templates[locale][page]);
        expect([parts.style, parts.script], `${page} in ${locale}`).toEqual([english.style, english.script]);
        // The catalog's messages, the same as its module's, with no `<` left to end the element.
        const module = files.assets.get(`messages-${page}-${locale}.js`)!.body.toString('utf8');
        expect(parts.messages, `${page} in ${locale}`).toEqual(
          JSON.parse(module.replace(/^export const messages = /, '').replace(/;\n$/, '')),
        );
        expect(parts.data, `${page} in ${locale}`).not.toContain('<');
      }
    }
  });

  it.each([
    // esbuild writes `</script` in a string as `<\/script`; `</style` it leaves as it is.
    ["const end = '</style>';", 'an end tag'],
    ["const opening = '<!-- x';", 'the start of a comment or a script'],
    ["const filled = '{{return_to}}';", 'a {{placeholder}}'],
  ])('stops the start when a page script would go inline holding %s', (line, reason) => {
    const dir = copyOfPages();
    try {
      const phone = join(dir, 'features', 'phone', 'pages', 'phone.js');
      writeFileSync(phone, `${readFileSync(phone, 'utf8')}\nexport ${line}\n`);
      expect(() => localizedPages(loadPageFiles(dir), NO_BRAND)).toThrow(`pages: phone-page.js cannot go inline: it holds ${reason}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('escapes template values for attributes and refuses unknown placeholders', () => {
    expect(renderTemplate('<b data-x="{{value}}">', { value: `"><script>'&` })).toBe('<b data-x="&#34;&#62;&#60;script&#62;&#39;&#38;">');
    expect(() => renderTemplate('{{other}}', {})).toThrow(/no value for \{\{other\}\}/);
  });
});

describe('GET /signin', () => {
  it('answers the page with the CSP and the security headers', async () => {
    const reply = await app.inject({ method: 'GET', url: '/signin' });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-type']).toBe('text/html; charset=utf-8');
    // The policy allows the page's own inline style and script by their hashes, and nothing else inline.
    expect(reply.headers['content-security-policy']).toBe(inlinePolicy(reply.body));
    expect(reply.headers['content-security-policy']).not.toMatch(/unsafe-inline/);
    expect(reply.headers['x-content-type-options']).toBe('nosniff');
    expect(reply.headers['referrer-policy']).toBe('no-referrer');
    expect(reply.headers['cache-control']).toBe('no-cache');
    expect(reply.body).not.toMatch(/\{\{/);
    expect(reply.body.match(/<script\b[^>]*>/g)).toEqual(['<script type="application/json" id="page-messages">', '<script type="module">']);
    expect(reply.body.match(/<style\b[^>]*>/g)).toEqual(['<style>']);
    expect(reply.body).not.toMatch(/\sstyle=|\/assets\/[a-z0-9-]+(?:\.[0-9a-f]{16})?\.(?:css|js)\b/);
    expect(dataAttribute(reply.body, 'return-to')).toBe('');
    expect(dataAttribute(reply.body, 'add')).toBe('');
  });

  it('keeps a path or a family URL as return_to, and add=1', async () => {
    const path = await app.inject({ method: 'GET', url: '/signin?return_to=/account&add=1' });
    expect(dataAttribute(path.body, 'return-to')).toBe('/account');
    expect(dataAttribute(path.body, 'add')).toBe('1');
    const family = await app.inject({
      method: 'GET',
      url: `/signin?return_to=${encodeURIComponent('https://app.example.com/x?y=1&z="2"')}`,
    });
    expect(dataAttribute(family.body, 'return-to')).toBe('https://app.example.com/x?y=1&#38;z=%222%22');
    expect(dataAttribute(family.body, 'return-to-refused')).toBe('');
  });

  it('drops a return_to outside the family and says so', async () => {
    for (const foreign of [
      'https://evil.example/',
      '//evil.example/',
      '/\\evil.example',
      'javascript:alert(1)',
      'https://user:pw@app.example.com/',
    ]) {
      const reply = await app.inject({ method: 'GET', url: `/signin?return_to=${encodeURIComponent(foreign)}` });
      expect(reply.statusCode, foreign).toBe(200);
      expect(dataAttribute(reply.body, 'return-to'), foreign).toBe('');
      expect(dataAttribute(reply.body, 'return-to-refused'), foreign).toBe('1');
    }
    // Repeated, it is not one value: refused by being ignored.
    const repeated = await app.inject({ method: 'GET', url: '/signin?return_to=/a&return_to=/b' });
    expect(dataAttribute(repeated.body, 'return-to')).toBe('');
  });

  // docs/protocol.md §6 "return_to": the page's script follows the rendered value as is.
  it.each(hostileReturnTo(PUBLIC_URL))(
    'renders hostile return_to %j refused, or normalised to a path of this service',
    async (returnTo, normalised) => {
      const reply = await app.inject({ method: 'GET', url: `/signin?return_to=${encodeURIComponent(returnTo)}` });
      expect(reply.statusCode).toBe(200);
      expect(dataAttribute(reply.body, 'return-to')).toBe(normalised ?? '');
      expect(dataAttribute(reply.body, 'return-to-refused')).toBe(normalised === null ? '1' : '');
    },
  );

  it('renders a family URL normalised', async () => {
    const reply = await app.inject({
      method: 'GET',
      url: `/signin?return_to=${encodeURIComponent('HTTPS://App.Example.com:443/a/%2e%2e/b?c#d')}`,
    });
    expect(dataAttribute(reply.body, 'return-to')).toBe('https://app.example.com/b?c#d');
  });

  it('answers HEAD and is not in the OpenAPI document', async () => {
    expect((await app.inject({ method: 'HEAD', url: '/signin' })).statusCode).toBe(200);
    const openapi = (await app.inject({ method: 'GET', url: '/api/openapi' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths).filter((path) => /^\/(signin|account|assets)/.test(path))).toEqual([]);
  });
});

describe('GET /account', () => {
  it('redirects to /signin?return_to=/account without a session', async () => {
    const reply = await app.inject({ method: 'GET', url: '/account' });
    expect(reply.statusCode).toBe(302);
    expect(reply.headers.location).toBe('/signin?return_to=/account');
    const stale = await app.inject({ method: 'GET', url: '/account', headers: { cookie: 'oc_session=not.a.token' } });
    expect(stale.statusCode).toBe(302);
  });

  it('answers the page with a live session, and never the token in it', async () => {
    const browser = new Browser(app);
    expect((await browser.signIn(newWallet())).status).toBe(200);
    const reply = await app.inject({ method: 'GET', url: '/account', headers: { cookie: `oc_session=${browser.cookie}` } });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-security-policy']).toBe(inlinePolicy(reply.body));
    expect(inlineParts(reply.body).script).toContain("performance.mark('oc-page-ready')");
    expect(reply.body).not.toContain(browser.cookie!);
  });
});

describe('GET /sudo', () => {
  const asked = '/sudo?return_to=https%3A%2F%2Fshop.example.com%2Fkeys&purpose=register%20a%20hardware%20key';

  it('sends a browser without a session to sign in first, then back to the same /sudo', async () => {
    const reply = await app.inject({ method: 'GET', url: asked });
    expect(reply.statusCode).toBe(302);
    expect(reply.headers.location).toBe(`/signin?return_to=${encodeURIComponent(asked)}`);
    // /signin keeps it: it is a path of this service.
    const signin = await app.inject({ method: 'GET', url: reply.headers.location as string });
    expect(dataAttribute(signin.body, 'return-to')).toBe(asked.replace('&', '&#38;'));
  });

  it('answers the page with the checked return_to and the purpose as text', async () => {
    const browser = new Browser(app);
    expect((await browser.signIn(newWallet())).status).toBe(200);
    const cookie = { cookie: `oc_session=${browser.cookie}` };
    const reply = await app.inject({ method: 'GET', url: asked, headers: cookie });
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-security-policy']).toBe(inlinePolicy(reply.body));
    expect(reply.headers['cache-control']).toBe('no-cache');
    expect(dataAttribute(reply.body, 'return-to')).toBe('https://shop.example.com/keys');
    expect(dataAttribute(reply.body, 'return-to-refused')).toBe('');
    expect(dataAttribute(reply.body, 'purpose')).toBe('register a hardware key');

    const foreign = await app.inject({
      method: 'GET',
      url: '/sudo?return_to=https%3A%2F%2Fevil.example.net%2F&purpose=%22%3E%3Cscript%3E',
      headers: cookie,
    });
    expect(dataAttribute(foreign.body, 'return-to')).toBe('');
    expect(dataAttribute(foreign.body, 'return-to-refused')).toBe('1');
    expect(dataAttribute(foreign.body, 'purpose')).toBe('&#34;&#62;&#60;script&#62;');
    expect(foreign.body).not.toContain('<script>');
  });

  it.each(hostileReturnTo(PUBLIC_URL))(
    'renders hostile return_to %j refused, or normalised to a path of this service',
    async (returnTo, normalised) => {
      const browser = new Browser(app);
      expect((await browser.signIn(newWallet())).status).toBe(200);
      const reply = await app.inject({
        method: 'GET',
        url: `/sudo?return_to=${encodeURIComponent(returnTo)}`,
        headers: { cookie: `oc_session=${browser.cookie}` },
      });
      expect(reply.statusCode).toBe(200);
      expect(dataAttribute(reply.body, 'return-to')).toBe(normalised ?? '');
      expect(dataAttribute(reply.body, 'return-to-refused')).toBe(normalised === null ? '1' : '');
    },
  );

  it('shows purpose as one bounded line', () => {
    expect(sudoPurpose(undefined)).toBe('');
    expect(sudoPurpose('  delete\nthe\u0000 account\u2028now ')).toBe('delete the account now');
    expect([...sudoPurpose('é'.repeat(500))]).toHaveLength(120);
  });
});

describe('GET /assets/<file>', () => {
  it('serves scripts and styles with their types, a short cache and an ETag', async () => {
    const script = await app.inject({ method: 'GET', url: '/assets/common.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('public, max-age=300');
    expect(script.headers['x-content-type-options']).toBe('nosniff');
    const etag = script.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    const again = await app.inject({ method: 'GET', url: '/assets/common.js', headers: { 'if-none-match': etag } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect((await app.inject({ method: 'GET', url: '/assets/app.css' })).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await app.inject({ method: 'GET', url: '/assets/favicon.svg' })).headers['content-type']).toBe('image/svg+xml');
  });

  it('serves what the pages refer to under hashed names, cached for a year and immutable', async () => {
    const browser = new Browser(app);
    expect((await browser.signIn(newWallet())).status).toBe(200);
    const pages = await Promise.all(
      ['/signin', '/sudo', '/api-explorer', '/account'].map((url) =>
        app.inject({ method: 'GET', url, headers: { cookie: `oc_session=${browser.cookie}` } }),
      ),
    );
    for (const [index, page] of pages.entries()) {
      const references = [...page.body.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((match) => match[1]!);
      // The explorer links its styles, script and catalog; the other pages carry them inline and link the icon.
      expect(references.length).toBeGreaterThanOrEqual(index === 2 ? 5 : 1);
      for (const reference of references) {
        expect(reference).toMatch(/^\/assets\/[a-z0-9-]+\.[0-9a-f]{16}\.(css|js|svg)$/);
        const asset = await app.inject({ method: 'GET', url: reference });
        expect(asset.statusCode, reference).toBe(200);
        expect(asset.headers['cache-control'], reference).toBe('public, max-age=31536000, immutable');
      }
    }
  });

  it('serves the single modules as written under their plain names only: no page loads them', async () => {
    const files = loadPageFiles(SRC);
    expect(files.hashedNames.has('common.js')).toBe(false);
    const plain = await app.inject({ method: 'GET', url: '/assets/common.js' });
    expect(plain.body).toBe(readFileSync(join(PAGES_DIR, 'common.js'), 'utf8'));
    expect(plain.headers['cache-control']).toBe('public, max-age=300');
  });

  it('bundles each page script with its imports, minified, without comments, setting the ready mark last; a catalog of only the messages they name', async () => {
    const files = loadPageFiles(SRC);
    const scripts = pageScripts(files.files);
    expect(scripts.sort()).toEqual([
      'account.js',
      'admin.js',
      'consent.js',
      'explorer.js',
      'notice.js',
      'phone.js',
      'signin.js',
      'sudo.js',
    ]);
    const bundles = bundlePageScripts(files.files, scripts);
    for (const script of scripts) {
      const name = script.replace(/\.js$/, '-page.js');
      const served = (await app.inject({ method: 'GET', url: `/assets/${files.hashedNames.get(name)}` })).body;
      expect(served, script).toBe(bundles.get(script)!.code);
      // One module, nothing left to import, no comment, and the mark once, after every module has run.
      expect(served, script).not.toMatch(/(?:^|[;}])\s*import\s*[{*'"a-zA-Z]|\/\*|^\s*\/\//m);
      expect(served.endsWith(`performance.mark('${PAGE_READY_MARK}');\n`), script).toBe(true);
      expect(served.split(PAGE_READY_MARK), script).toHaveLength(2);
      // Minified: far smaller than the modules as written.
      const written = bundles.get(script)!.inputs.reduce((sum, input) => sum + files.assets.get(input)!.body.length, 0);
      expect(served.length, script).toBeLessThan(written / 1.5);
    }
    const graph = bundles.get('signin.js')!.inputs;
    expect(graph).toEqual(expect.arrayContaining(['signin.js', 'common.js', 'i18n.js', 'message-format.js', 'wallets.js']));
    expect(graph).not.toContain('account.js');
    expect(bundles.get('notice.js')!.inputs).not.toContain('i18n.js');
    for (const locale of LOCALES) {
      const catalog = (await app.inject({ method: 'GET', url: `/assets/${files.hashedNames.get(`messages-signin-${locale}.js`)}` })).body;
      const messages = JSON.parse(catalog.replace(/^export const messages = /, '').replace(/;\n$/, '')) as Record<string, string>;
      expect(Object.keys(messages).length).toBeGreaterThan(20);
      for (const [key, value] of Object.entries(messages))
        expect(value, key).toBe(PAGE_CATALOGS[locale][key as keyof (typeof PAGE_CATALOGS)['en']]);
      expect(Object.keys(messages).filter((key) => key.startsWith('explorer.'))).toEqual([]);
    }
  });

  it('reads the bundles npm run build wrote, the same as made at start; a bundle older than a module, or none, stops the start', () => {
    const dir = copyOfPages();
    const out = mkdtempSync(join(tmpdir(), 'oc-built-pages-'));
    try {
      const sources = pageFilesOf(dir);
      const scripts = pageScripts(sources);
      expect(() => readPageBundles(sources, scripts, out)).toThrow(`pages: no page bundles in ${out}: run npm run build`);
      writePageBundles(sources, scripts, out);
      expect(readdirSync(out).sort()).toEqual(['manifest.json', ...scripts.map((script) => script.replace(/\.js$/, '-page.js'))].sort());
      const built = loadPageFiles(dir, out);
      const made = loadPageFiles(dir);
      expect([...built.hashedNames]).toEqual([...made.hashedNames]);
      for (const [name, asset] of made.assets) expect(built.assets.get(name)!.body.equals(asset.body), name).toBe(true);
      // A module moved to another folder as it was is the same module: the bundle still holds.
      mkdirSync(join(dir, 'features', 'contact', 'pages'), { recursive: true });
      cpSync(join(dir, 'pages', 'curl.js'), join(dir, 'features', 'contact', 'pages', 'curl.js'));
      rmSync(join(dir, 'pages', 'curl.js'));
      expect(readPageBundles(pageFilesOf(dir), scripts, out).get('explorer.js')!.code).toBe(
        made.assets.get('explorer-page.js')!.body.toString('utf8'),
      );
      writeFileSync(join(dir, 'pages', 'message-format.js'), `${readFileSync(join(dir, 'pages', 'message-format.js'), 'utf8')}\n`);
      expect(() => readPageBundles(pageFilesOf(dir), scripts, out)).toThrow(
        /^pages: the bundle of [a-z]+\.js in .* is older than message-format\.js: run npm run build$/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
    }
  });

  it('answers brotli, else gzip, else the plain bytes, each with its own ETag and Vary: Accept-Encoding', async () => {
    const name = loadPageFiles(SRC).hashedNames.get('account-page.js');
    const url = `/assets/${name}`;
    const plain = await app.inject({ method: 'GET', url });
    const br = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    const gzip = await app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'gzip;q=1, br;q=0' } });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(br.headers['content-encoding']).toBe('br');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    for (const reply of [plain, br, gzip]) expect(reply.headers.vary).toBe('Accept-Encoding');
    expect(brotliDecompressSync(br.rawPayload).toString('utf8')).toBe(plain.body);
    expect(gunzipSync(gzip.rawPayload).toString('utf8')).toBe(plain.body);
    expect(br.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3);
    expect(new Set([plain.headers.etag, br.headers.etag, gzip.headers.etag]).size).toBe(3);
    const again = await app.inject({
      method: 'GET',
      url,
      headers: { 'accept-encoding': 'br', 'if-none-match': br.headers.etag as string },
    });
    expect(again.statusCode).toBe(304);
  });

  it('refuses anything not in the table: traversal, HTML, unknown names', async () => {
    for (const url of [
      '/assets/../package.json',
      '/assets/..%2F..%2Fpackage.json',
      '/assets/%2e%2e%2fhttp%2fpages.ts',
      '/assets/..%5c..%5cpackage.json',
      '/assets/signin.html',
      '/assets/nope.js',
      '/assets/',
      '/assets/app.css%00.js',
      '/assets/app.0000000000000000.css',
    ]) {
      const reply = await app.inject({ method: 'GET', url });
      expect(reply.statusCode, url).toBe(404);
      expect(reply.body, url).not.toContain('"name"');
    }
  });
});

describe('the front door', () => {
  it('GET / redirects to the account page', async () => {
    const app = await testApp();
    try {
      const reply = await app.inject({ method: 'GET', url: '/' });
      expect(reply.statusCode).toBe(302);
      expect(reply.headers.location).toBe('/account');
    } finally {
      await app.close();
    }
  });
});
