/**
 * The OpenID provider's pages in headless Chromium (docs/protocol.md §8
 * "Consent"): the consent page an app's authorization shows, in every
 * language, at desktop and phone width, light and dark, with axe finding
 * nothing and no CSP violation; allowing it reaches the app's redirect URI
 * (the page's `form-action` names it), and the sign-out question of
 * end-session is drawn in the same look.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IssuedClient } from '../src/oidc/index.js';
import { operatorRegistry } from './support/oidc-rp.js';
import { newWallet } from './support/auth-client.js';
import { AuthHarness } from './support/auth-harness.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, HAVE_CHROMIUM, IN_CI } from './support/chromium.js';
import { TestClock } from './support/clock.js';
import { freePort } from './support/instances.js';

const AXE_PATH = fileURLToPath(new URL('../node_modules/axe-core/axe.min.js', import.meta.url));
const REDIRECT = 'https://app.example/callback';
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };

/** The consent page's heading in each language, for an app named "Grafana at example" (src/i18n/pages/). */
const HEADINGS: Readonly<Record<string, RegExp>> = {
  'en-GB': /^Grafana at example wants to sign you in with your oc-host account$/,
  'de-DE': /^Grafana at example möchte Sie mit Ihrem oc-host-Konto anmelden$/,
  'fr-FR': /^Grafana at example souhaite vous connecter avec votre compte oc-host$/,
  'es-ES': /^Grafana at example quiere iniciar tu sesión con tu cuenta de oc-host$/,
};

if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium to drive (CI=true)', () => {
    throw new Error(`oidc-pages: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

describe.skipIf(!HAVE_CHROMIUM)('the OpenID provider pages in headless Chromium', () => {
  let harness: AuthHarness;
  let app: FastifyInstance;
  let browser: Browser;
  let base: string;
  let issued: IssuedClient;
  let axe: string;
  const problems: string[] = [];

  beforeAll(async () => {
    harness = await AuthHarness.open('sqlite', new TestClock(Date.now()));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await harness.app({ PUBLIC_URL: base });
    await app.listen({ host: '127.0.0.1', port });
    const oidc = await operatorRegistry(harness.store, base, harness.clock.now);
    issued = await oidc.clients.create({
      client_name: 'Grafana at example',
      redirect_uris: [REDIRECT],
      post_logout_redirect_uris: ['https://app.example/bye'],
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    axe = await readFile(AXE_PATH, 'utf8');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

  /** A browser signed in to a new account (its session cookie set as the host set it), in `locale` at `viewport`. */
  async function signedInContext(locale: string, viewport: { width: number; height: number }): Promise<BrowserContext> {
    const host = harness.browser(app, base);
    expect((await host.signIn(newWallet())).status).toBe(200);
    const context = await browser.newContext({ baseURL: base, locale, viewport, timezoneId: 'UTC' });
    await context.addCookies([{ name: 'oc_session', value: host.cookie as string, url: base, httpOnly: true, sameSite: 'Lax' }]);
    // The app is never reached: its redirect URI answers here.
    await context.route('https://app.example/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<p>app</p>' }));
    await context.addInitScript(() => {
      (
        globalThis as unknown as {
          document: { addEventListener(type: string, listener: (event: { violatedDirective: string }) => void): void };
        }
      ).document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective}`));
    });
    return context;
  }

  function watch(page: Page): void {
    page.on('console', (message) => {
      // Chromium logs every answer >= 400; the error page is one on purpose.
      if (/^Failed to load resource: the server responded with a status of 400/.test(message.text())) return;
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
  }

  async function axeViolations(page: Page): Promise<string[]> {
    if (!(await page.evaluate('typeof globalThis.axe !== "undefined"'))) await page.evaluate(axe);
    return page.evaluate(
      `globalThis.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => v.id + ' x' + v.nodes.length + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')))`,
    ) as Promise<string[]>;
  }

  function authorizeUrl(scope: string): string {
    const params = new URLSearchParams({ client_id: issued.client_id, redirect_uri: REDIRECT, response_type: 'code', scope, state: 'st' });
    return `/oidc/auth?${params.toString()}`;
  }

  it('shows the consent page in every language, at desktop and phone width, light and dark, and allowing it reaches the app', async () => {
    for (const [locale, heading] of Object.entries(HEADINGS)) {
      for (const viewport of [DESKTOP, PHONE]) {
        const context = await signedInContext(locale, viewport);
        const page = await context.newPage();
        watch(page);
        await page.goto(authorizeUrl('openid profile email bitcoin orangecheck'));
        await page.waitForURL(/\/oidc\/interaction\//);
        expect(await page.locator('h1').textContent()).toMatch(heading);
        expect(await page.locator('.scope-list li').count()).toBe(5);
        const overflow = await page.evaluate('document.documentElement.scrollWidth > window.innerWidth');
        expect(overflow, `${locale} ${viewport.width}px scrolls sideways`).toBe(false);
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          expect(await axeViolations(page), `${locale} ${viewport.width}px ${scheme}`).toEqual([]);
        }
        if (locale === 'en-GB' && viewport === DESKTOP) {
          await page.getByRole('button', { name: 'Allow' }).click();
          await page.waitForURL(/^https:\/\/app\.example\/callback\?/);
          const answer = new URL(page.url());
          expect(answer.searchParams.get('code')).toBeTruthy();
          expect(answer.searchParams.get('state')).toBe('st');
        }
        await context.close();
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);

  it('answers Cancel with access_denied, and draws the sign-out question in the same look', async () => {
    const context = await signedInContext('en-GB', DESKTOP);
    const page = await context.newPage();
    watch(page);
    await page.goto(authorizeUrl('openid'));
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL(/^https:\/\/app\.example\/callback\?/);
    expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied');

    const params = new URLSearchParams({ client_id: issued.client_id, post_logout_redirect_uri: 'https://app.example/bye' });
    await page.goto(`/oidc/session/end?${params.toString()}`);
    expect(await page.locator('h1').textContent()).toBe('Sign out of Grafana at example?');
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      expect(await axeViolations(page), scheme).toEqual([]);
    }
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('https://app.example/bye');

    await page.goto('/oidc/auth?client_id=nobody&response_type=code&scope=openid');
    expect(await page.locator('h1').textContent()).toBe('This sign-in cannot go on');
    expect(await axeViolations(page)).toEqual([]);
    await context.close();
    expect(problems).toEqual([]);
  }, 60_000);
});
