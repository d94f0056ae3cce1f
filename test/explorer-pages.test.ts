/**
 * The API explorer (/api-explorer, docs/api.md "Explorer") in headless
 * Chromium: its forms start from the OpenAPI document's examples, so the
 * first "Send" of POST /api/verify is a real attestation that verifies; an
 * error answer is marked as one in words and its code is shown; a success
 * answer shows its description and the document's own example; "Copy as
 * curl" gives a command that the shell reads back as the same request and
 * that real curl sends. In the four languages, at desktop and phone width,
 * light and dark, with axe finding nothing and no CSP violation.
 * `UPDATE_SCREENSHOTS=1` writes docs/screenshots/api-explorer.png.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, DESKTOP, expectLaidOut, HAVE_CHROMIUM, IN_CI, PHONE, pageContext } from './support/chromium.js';
import { usePageHost } from './support/page-host.js';

const run = promisify(execFile);
const CURL = '/usr/bin/curl';
const SCREENSHOT_DIR = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));

/** The explorer's own words in each language (src/platform/i18n/pages/). */
const WORDS: Readonly<Record<string, { send: string; copy: string; url: string; error: string; body: string }>> = {
  'en-GB': { send: 'Send request', copy: 'Copy as curl', url: 'Request URL', error: 'Error', body: 'Request body (JSON)' },
  'de-DE': { send: 'Anfrage senden', copy: 'Als curl kopieren', url: 'Anfrage-URL', error: 'Fehler', body: 'Anfragetext (JSON)' },
  'es-ES': {
    send: 'Enviar la solicitud',
    copy: 'Copiar como curl',
    url: 'URL de la solicitud',
    error: 'Error',
    body: 'Cuerpo de la solicitud (JSON)',
  },
  'fr-FR': {
    send: 'Envoyer la requête',
    copy: 'Copier en curl',
    url: 'URL de la requête',
    error: 'Erreur',
    body: 'Corps de la requête (JSON)',
  },
};

it.runIf(!HAVE_CHROMIUM && IN_CI)('has Chromium to drive (CI=true)', () => {
  throw new Error(`explorer-pages: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
});

describe.skipIf(!HAVE_CHROMIUM)('the API explorer in headless Chromium', () => {
  const site = usePageHost();
  const problems: string[] = [];

  /** The explorer in `locale` at `viewport`, loaded, with every console error and page error counted as a problem. */
  async function openExplorer(locale: string, viewport: { width: number; height: number }): Promise<Page> {
    const context = await pageContext(site.browser, site.base, locale, viewport);
    const page = await context.newPage();
    page.on('console', (message) => {
      // An error answer the explorer was asked for is logged by Chromium as a failed load; it is not a problem of the page.
      if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(message.text())) return;
      if (message.type() === 'error') problems.push(`${locale}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`${locale}: ${error.message}`));
    await page.goto('/api-explorer');
    await expect.poll(() => page.locator('#main').getAttribute('aria-busy')).toBe('false');
    return page;
  }

  /** A test on the explorer in English at desktop width: the page is closed after it, and nothing went wrong on it. */
  function onExplorer(name: string, test: (page: Page) => Promise<void>): void {
    it(name, async () => {
      const page = await openExplorer('en-GB', DESKTOP);
      await test(page);
      await page.context().close();
      expect(problems).toEqual([]);
    }, 60_000);
  }

  /** Opens the route `id` (`post-api-verify`) after narrowing the list to `filter`. */
  async function openRoute(page: Page, filter: string, id: string) {
    await page.locator('#filter').fill(filter);
    const route = page.locator(`details#${id}`);
    await route.locator(':scope > summary').click();
    return route;
  }

  onExplorer('sends the example of POST /api/verify as it is: a real attestation, not a 400', async (page) => {
    const verify = await openRoute(page, 'post verify', 'post-api-verify');
    const body = JSON.parse(await verify.getByLabel('Request body (JSON)').inputValue());
    expect(body).toMatchObject({ addr: 'bc1q0xcqpzrky6eff2g52qdye53xkk9jxkvrh6yhyw', scheme: 'bip322' });
    expect(await verify.locator('.request-url').textContent()).toBe(`${site.base}/api/verify`);
    await verify.getByRole('button', { name: 'Send request' }).click();
    await expect.poll(() => verify.getByRole('status').textContent()).toMatch(/^HTTP 200 OK · \d+ ms · application\/json/);
    expect(await verify.locator('.answer-kind').first().textContent()).toBe('✓ Success');
    const answer = JSON.parse((await verify.locator('pre.answer-body').textContent())!);
    // The signature verifies; the bond needs a chain this host does not reach.
    expect(answer.codes).toContain('sig_ok_bip322');
    expect(await verify.locator('.answer-headers').textContent()).toContain('x-request-id');
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      await page.emulateMedia({ colorScheme: 'light' });
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: `${SCREENSHOT_DIR}api-explorer.png`, fullPage: true });
    }
    // The documented answers, each with its description (Markdown) and an example.
    expect(await verify.locator('.response.is-error .markdown code').first().textContent()).toBe('detail');
    const documented = verify.locator('.responses > li');
    expect(await documented.count()).toBeGreaterThanOrEqual(4);
    expect(await verify.locator('.response.is-error').first().textContent()).toContain('Error');
    const example = verify.locator('.response-example').first();
    await example.locator('summary').click();
    expect(JSON.parse((await example.locator('pre').textContent())!)).toMatchObject({
      ok: true,
      codes: ['sig_ok_bip322', 'bond_confirmed'],
    });
    await expectLaidOut(page, 'verify answered');
  });

  it("shows a success answer's description and the document's own example, desktop and phone, light and dark", async () => {
    type Answer = { description: string; content: { 'application/json': { example: { account: { did_oc: string } } } } };
    const document = (await (await fetch(`${site.base}/api/openapi`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, Answer> }>>;
    };
    const documented = document.paths['/api/auth/me']!.get!.responses['200']!;
    const example = documented.content['application/json'].example;
    // The document's example, not one built from the schema (which would say "string" for every text).
    expect(example.account.did_oc).toBe('did:oc:0123456789abcdef0123456789abcdef');
    for (const viewport of [DESKTOP, PHONE]) {
      const page = await openExplorer('en-GB', viewport);
      const me = await openRoute(page, 'get auth me', 'get-api-auth-me');
      const success = me.locator('.response.is-ok');
      // The route's answers are drawn when it opens: wait for them rather than count at once.
      await expect.poll(() => success.count()).toBe(1);
      expect(await success.locator('.response-status').textContent()).toContain('200');
      expect(await success.locator('.markdown').textContent()).toBe(documented.description);
      const shown = success.locator('.response-example');
      await shown.locator('summary').click();
      expect(JSON.parse((await shown.locator('pre').textContent())!)).toEqual(example);
      await expectLaidOut(page, `the answers of GET /api/auth/me at ${viewport.width}px`);
      await page.context().close();
    }
    expect(problems).toEqual([]);
  }, 90_000);

  onExplorer('shows an error answer as an error, with its code and detail, light and dark', async (page) => {
    const me = await openRoute(page, 'get auth me', 'get-api-auth-me');
    await me.getByRole('button', { name: 'Send request' }).click();
    await expect.poll(() => me.getByRole('status').textContent()).toMatch(/^HTTP 401 Unauthorized · \d+ ms/);
    expect(await me.locator('.answer').getAttribute('class')).toBe('answer is-error');
    expect(await me.locator('.answer-head .answer-kind').textContent()).toBe('✕ Error');
    expect(await me.locator('.answer-error').textContent()).toBe('Error code not_authenticated · session: sign in first');
    // A body the service refuses: its 400 names the field.
    const verify = await openRoute(page, 'post verify', 'post-api-verify');
    await verify.getByLabel('Request body (JSON)').fill('{"addr": ""}');
    await verify.getByRole('button', { name: 'Send request' }).click();
    await expect.poll(() => verify.getByRole('status').textContent()).toMatch(/^HTTP 400 Bad Request/);
    expect(await verify.locator('.answer-error code').textContent()).toBe('bad_request');
    await expectLaidOut(page, 'error answer');
    // The example comes back with one click.
    await verify.getByRole('button', { name: 'Reset the example' }).click();
    expect(JSON.parse(await verify.getByLabel('Request body (JSON)').inputValue()).scheme).toBe('bip322');
  });

  onExplorer('copies the request as a curl command that the shell reads back word for word and that curl sends', async (page) => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: site.base });
    const verify = await openRoute(page, 'post verify', 'post-api-verify');
    await verify.getByRole('button', { name: 'Copy as curl' }).click();
    await expect.poll(() => verify.getByText('The curl command was copied.').count()).toBe(1);
    const copied = (await page.evaluate('navigator.clipboard.readText()')) as string;
    // What was copied is shown.
    expect(await verify.locator('pre.curl').isVisible()).toBe(true);
    expect(copied).toBe(await verify.locator('pre.curl').textContent());
    expect(
      copied.startsWith(`curl '${site.base}/api/verify' -H 'accept: application/json' -H 'content-type: application/json' --data-raw '`),
    ).toBe(true);
    if (existsSync(CURL)) {
      const { stdout } = await run('sh', ['-c', copied.replace(/^curl /, `${CURL} -sS `)]);
      expect(JSON.parse(stdout).codes).toContain('sig_ok_bip322');
    }
    // A body full of what a shell would read: printf gets back exactly the words curl would.
    const hostile = { note: 'it\'s $HOME `id` $(id) \\ "q" ! *' };
    await verify.getByLabel('Request body (JSON)').fill(JSON.stringify(hostile));
    const command = (await verify.locator('pre.curl').textContent())!;
    const { stdout: words } = await run('sh', ['-c', command.replace(/^curl /, "printf '%s\\0' ")]);
    expect(words.split('\0').slice(0, -1)).toEqual([
      `${site.base}/api/verify`,
      '-H',
      'accept: application/json',
      '-H',
      'content-type: application/json',
      '--data-raw',
      JSON.stringify(hostile),
    ]);
  });

  onExplorer('writes no API key into the curl command: the shell reads it from $OC_API_KEY', async (page) => {
    const provision = await openRoute(page, 'provision', 'post-api-connect-provision');
    await provision.getByLabel('API key').fill('ock_secret_value');
    const command = (await provision.locator('pre.curl').textContent())!;
    expect(command).not.toContain('ock_secret_value');
    const { stdout } = await run('sh', ['-c', command.replace(/^curl /, "printf '%s\\0' ")], {
      env: { ...process.env, OC_API_KEY: 'from-the-shell' },
    });
    expect(stdout.split('\0')).toContain('authorization: Bearer from-the-shell');
  });

  onExplorer('opens the route a link names, with its form filled', async (page) => {
    // From another document: a link is followed when the page loads.
    await page.goto('about:blank');
    await page.goto('/api-explorer#get-api-challenge');
    const challenge = page.locator('details#get-api-challenge');
    await expect.poll(() => challenge.getAttribute('open')).toBe('');
    expect(await challenge.getByLabel(/^addr/).inputValue()).toBe('bc1q0xcqpzrky6eff2g52qdye53xkk9jxkvrh6yhyw');
    expect(await challenge.locator('.request-url').textContent()).toBe(
      `${site.base}/api/challenge?addr=bc1q0xcqpzrky6eff2g52qdye53xkk9jxkvrh6yhyw`,
    );
    await challenge.getByRole('button', { name: 'Send request' }).click();
    await expect.poll(() => challenge.getByRole('status').textContent()).toMatch(/^HTTP 200 OK/);
    // A link followed on the page opens its route too.
    await page.evaluate('window.location.hash = "#get-api-family-stats"');
    await expect.poll(() => page.locator('details#get-api-family-stats').getAttribute('open')).toBe('');
  });

  it('speaks the four languages, desktop and phone, light and dark, with an answer shown', async () => {
    for (const [locale, words] of Object.entries(WORDS)) {
      for (const viewport of [DESKTOP, PHONE]) {
        const page = await openExplorer(locale, viewport);
        const verify = await openRoute(page, 'post verify', 'post-api-verify');
        expect(await verify.locator('.request-label').textContent()).toBe(words.url);
        expect(await verify.getByRole('button', { name: words.copy }).count()).toBe(1);
        expect(JSON.parse(await verify.getByLabel(words.body).inputValue()).scheme).toBe('bip322');
        const me = await openRoute(page, 'get auth me', 'get-api-auth-me');
        await me.getByRole('button', { name: words.send }).click();
        await expect.poll(() => me.locator('.answer-head .answer-kind').textContent()).toBe(`✕ ${words.error}`);
        await expectLaidOut(page, `${locale} ${viewport.width}px`);
        await page.context().close();
      }
    }
    expect(problems).toEqual([]);
  }, 240_000);
});
