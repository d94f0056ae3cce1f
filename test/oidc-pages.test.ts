/**
 * The OpenID provider's pages in headless Chromium (docs/protocol.md §8
 * "Consent"): the consent page an app's authorization shows, in every
 * language, at desktop and phone width, light and dark, with axe finding
 * nothing and no CSP violation; allowing it reaches the app's redirect URI
 * (the page's `form-action` names it), and the sign-out question of
 * end-session, with its choice of also ending the host session (§8
 * "Logout"), is drawn in the same look. The sign-in page names the app an
 * authorization is for, to the browser that started it alone (§8 "Signing
 * in"), and the account page lists the apps allowed and removes one's
 * access (§8 "Consent").
 */
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { IssuedClient } from '../src/features/oidc/index.js';
import { operatorRegistry } from './support/oidc-rp.js';
import { newWallet } from './support/auth-client.js';
import { axeViolations, CHROMIUM_PATH, DESKTOP, expectLaidOut, HAVE_CHROMIUM, IN_CI, PHONE, pageContext } from './support/chromium.js';
import { usePageHost } from './support/page-host.js';

const REDIRECT = 'https://app.example/callback';
/** A 1×1 PNG: the test app's logo. */
const ONE_PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

/** The consent page's heading in each language, for an app named "Grafana at example" (src/platform/i18n/pages/). */
const HEADINGS: Readonly<Record<string, RegExp>> = {
  'en-GB': /^Grafana at example wants to sign you in with your oc-host account$/,
  'de-DE': /^Grafana at example möchte Sie mit Ihrem oc-host-Konto anmelden$/,
  'fr-FR': /^Grafana at example souhaite vous connecter avec votre compte oc-host$/,
  'es-ES': /^Grafana at example quiere iniciar tu sesión con tu cuenta de oc-host$/,
};

/** The sign-in page's sentence naming the app in each language. */
const CONTINUE_TO: Readonly<Record<string, string>> = {
  'en-GB': 'Sign in to continue to Grafana at example.',
  'de-DE': 'Melden Sie sich an, um mit Grafana at example fortzufahren.',
  'fr-FR': 'Connectez-vous pour continuer vers Grafana at example.',
  'es-ES': 'Inicia sesión para continuar en Grafana at example.',
};

/** The account page's section title in each language. */
const APPS_TITLE: Readonly<Record<string, string>> = {
  'en-GB': 'Apps you signed in to',
  'de-DE': 'Apps, bei denen Sie sich angemeldet haben',
  'fr-FR': 'Applications auxquelles vous vous êtes connecté',
  'es-ES': 'Aplicaciones en las que has iniciado sesión',
};

/** The sign-out question's heading and its two answers in each language (src/platform/i18n/pages/). */
const LOGOUT: Readonly<Record<string, { heading: RegExp; appOnly: string; host: string }>> = {
  'en-GB': {
    heading: /^Sign out of Grafana at example\?$/,
    appOnly: 'Sign out of Grafana at example only',
    host: 'Also sign out of oc-host',
  },
  'de-DE': {
    heading: /^Von Grafana at example abmelden\?$/,
    appOnly: 'Nur von Grafana at example abmelden',
    host: 'Auch von oc-host abmelden',
  },
  'fr-FR': {
    heading: /^Se déconnecter de Grafana at example\s?\?$/,
    appOnly: 'Me déconnecter de Grafana at example seulement',
    host: 'Me déconnecter aussi de oc-host',
  },
  'es-ES': {
    heading: /^¿Cerrar sesión en Grafana at example\?$/,
    appOnly: 'Cerrar sesión solo en Grafana at example',
    host: 'Cerrar también la sesión de oc-host',
  },
};

if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium to drive (CI=true)', () => {
    throw new Error(`oidc-pages: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

/** An API of the operator's that the consent page names (docs/protocol.md §8 "APIs"). */
const API = 'https://dashboards.example/api';

describe.skipIf(!HAVE_CHROMIUM)('the OpenID provider pages in headless Chromium', () => {
  let issued: IssuedClient;
  let hostile: IssuedClient;
  const site = usePageHost({
    ready: async ({ harness, base }) => {
      const oidc = await operatorRegistry(harness.store, base, harness.clock.now);
      issued = await oidc.clients.create({
        client_name: 'Grafana at example',
        redirect_uris: [REDIRECT],
        post_logout_redirect_uris: ['https://app.example/bye'],
        api_scopes: ['read:dashboards'],
      });
      await oidc.resources.add({ uri: API, name: 'Dashboards API', scopes: ['read:dashboards', 'write:dashboards'] });
      hostile = await oidc.clients.create({
        client_name: '<img src=x onerror=alert(1)>',
        logo_uri: 'https://logo.example/app.png',
        redirect_uris: [REDIRECT],
      });
    },
  });
  const problems: string[] = [];

  /**
   * A browser signed in to a new account (its session cookie set as the host
   * set it), or with `signedIn` false a browser without any, in `locale` at `viewport`.
   */
  async function signedInContext(locale: string, viewport: { width: number; height: number }, signedIn = true): Promise<BrowserContext> {
    let cookie: string | undefined;
    if (signedIn) {
      const host = site.harness.browser(site.app, site.base);
      expect((await host.signIn(newWallet())).status).toBe(200);
      cookie = host.cookie as string;
    }
    const context = await pageContext(site.browser, site.base, locale, viewport, cookie);
    // The app is never reached: its redirect URI answers here, and so does its logo.
    await context.route('https://app.example/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<p>app</p>' }));
    await context.route('https://logo.example/**', (route) =>
      route.fulfill({ status: 200, contentType: 'image/png', body: ONE_PIXEL_PNG }),
    );
    return context;
  }

  /**
   * Collects the page's script errors and CSP violations. `anyStatus`: the
   * host's own pages also ask routes this test host answers with an error on
   * purpose (401 before sign-in, 503 for passkeys on a plain-http origin, a
   * stranger's 404), which Chromium logs; only the provider's pages are
   * held to no failed load but the error page's 400.
   */
  function watch(page: Page, anyStatus = false): void {
    page.on('console', (message) => {
      // Chromium logs every answer >= 400; the error page is one on purpose.
      if (/^Failed to load resource: the server responded with a status of 400/.test(message.text())) return;
      if (anyStatus && /^Failed to load resource: the server responded with a status of \d+/.test(message.text())) return;
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
  }

  function authorizeUrl(scope: string, clientId = issued.client_id, extra: Record<string, string> = {}): string {
    const params = new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope,
      state: 'st',
      ...extra,
    });
    return `/oidc/auth?${params.toString()}`;
  }

  it('shows the consent page in every language, at desktop and phone width, light and dark, and allowing it reaches the app', async () => {
    for (const [locale, heading] of Object.entries(HEADINGS)) {
      for (const viewport of [DESKTOP, PHONE]) {
        const context = await signedInContext(locale, viewport);
        const page = await context.newPage();
        watch(page);
        await page.goto(authorizeUrl('openid profile email bitcoin orangecheck read:dashboards', issued.client_id, { resource: API }));
        await page.waitForURL(/\/oidc\/interaction\//);
        expect(await page.locator('h1').textContent()).toMatch(heading);
        expect(await page.locator('.scope-list li').count()).toBe(6);
        // The API by the name its operator gave it, with the scope asked of it.
        expect(await page.locator('.scope-list li').last().textContent()).toMatch(/Dashboards API.*read:dashboards$/);
        await expectLaidOut(page, `${locale} ${viewport.width}px`);
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
    await page.getByRole('button', { name: 'Sign out of Grafana at example only', exact: true }).click();
    await page.waitForURL('https://app.example/bye');

    await page.goto('/oidc/auth?client_id=nobody&response_type=code&scope=openid');
    expect(await page.locator('h1').textContent()).toBe('This sign-in cannot go on');
    expect(await axeViolations(page)).toEqual([]);
    await context.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('names the app on the sign-in page in every language, desktop and phone, light and dark, to the browser that started it alone', async () => {
    for (const [locale, sentence] of Object.entries(CONTINUE_TO)) {
      for (const viewport of [DESKTOP, PHONE]) {
        const context = await signedInContext(locale, viewport, false);
        const page = await context.newPage();
        watch(page, true);
        await page.goto(authorizeUrl('openid profile'));
        await page.waitForURL(/\/signin\?return_to=%2Foidc%2Finteraction%2F/);
        const banner = page.locator('#app-banner');
        await banner.waitFor({ state: 'visible' });
        expect(await banner.locator('p').textContent()).toBe(sentence);
        expect(await banner.locator('strong').textContent()).toBe('Grafana at example');
        expect(await banner.locator('.app-avatar').textContent()).toBe('G');
        await expectLaidOut(page, `${locale} ${viewport.width}px`);
        await context.close();
      }
    }

    // A hostile name is text; the address opened in another browser names nothing.
    const context = await signedInContext('en-GB', DESKTOP, false);
    const page = await context.newPage();
    watch(page, true);
    await page.goto(authorizeUrl('openid', hostile.client_id));
    await page.waitForURL(/\/signin\?return_to=/);
    const banner = page.locator('#app-banner');
    await banner.waitFor({ state: 'visible' });
    expect(await banner.locator('strong').textContent()).toBe('<img src=x onerror=alert(1)>');
    expect(await page.locator('#app-banner strong img').count()).toBe(0);
    // Its https logo shows: the sign-in page's policy names the logo's origin.
    const logo = page.locator('#app-banner img.app-logo-small');
    expect(await logo.getAttribute('src')).toBe('https://logo.example/app.png');
    await expect.poll(() => logo.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth)).toBe(1);
    await expectLaidOut(page, 'with a logo');
    const stranger = await signedInContext('en-GB', DESKTOP, false);
    const other = await stranger.newPage();
    watch(other, true);
    const answered = other.waitForResponse((response) => response.url().endsWith('/app'));
    await other.goto(page.url());
    expect((await answered).status()).toBe(404);
    expect(await other.locator('#app-banner').isHidden()).toBe(true);
    await stranger.close();
    await context.close();
    expect(problems).toEqual([]);
  }, 120_000);

  it('names the app on /sudo when an authorization asks for a fresh proof', async () => {
    const context = await signedInContext('en-GB', PHONE);
    const page = await context.newPage();
    watch(page, true);
    await page.goto(authorizeUrl('openid', issued.client_id, { prompt: 'login' }));
    await page.waitForURL(/\/sudo\?return_to=%2Foidc%2Finteraction%2F/);
    const banner = page.locator('#app-banner');
    await banner.waitFor({ state: 'visible' });
    expect(await banner.locator('p').textContent()).toBe('Confirm it is you to continue to Grafana at example.');
    await page.locator('#proof').waitFor({ state: 'visible' });
    await expectLaidOut(page, 'sudo');
    await context.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('lists the apps allowed on the account page in every language, and removes access after asking, so the app asks again', async () => {
    for (const [locale, title] of Object.entries(APPS_TITLE)) {
      for (const viewport of [DESKTOP, PHONE]) {
        const context = await signedInContext(locale, viewport);
        const page = await context.newPage();
        watch(page, true);
        await page.goto('/account#apps');
        await page.locator('#apps-empty').waitFor({ state: 'visible' });
        expect(await page.locator('#apps li').count()).toBe(0);
        await page.goto(authorizeUrl('openid profile email'));
        await page.locator('#consent-allow').click();
        await page.waitForURL(/^https:\/\/app\.example\/callback\?/);
        await page.goto('/account#apps');
        const item = page.locator('#apps li');
        await item.waitFor({ state: 'visible' });
        expect(await page.locator('#apps-title').textContent()).toBe(title);
        expect(await item.locator('.item-title').textContent()).toBe('Grafana at example');
        expect(await page.locator('#apps-empty').isHidden()).toBe(true);
        await expectLaidOut(page, `account ${locale} ${viewport.width}px`);
        if (locale === 'en-GB' && viewport === DESKTOP) {
          const facts = await item.locator('.item-sub').allTextContents();
          expect(facts[0]).toBe('Can see: an identifier for your account, your display name, and your e-mail address');
          expect(facts[1]).toMatch(/^Allowed on \w+ \d+, \d{4}$/);
          const remove = page.getByRole('button', { name: 'Remove access for Grafana at example' });
          // Cancel keeps it.
          await remove.click();
          const dialog = page.locator('#confirm-dialog');
          expect(await dialog.locator('#confirm-title').textContent()).toBe('Remove access for Grafana at example?');
          expect(await axeViolations(page)).toEqual([]);
          await dialog.getByRole('button', { name: 'Cancel' }).click();
          await expect.poll(() => page.locator('#page-status').textContent()).toBe('No access was removed.');
          // Focus is back on the button that opened the dialog.
          expect(await page.evaluate('document.activeElement?.getAttribute("aria-label")')).toBe('Remove access for Grafana at example');
          expect(await page.locator('#apps li').count()).toBe(1);
          // Confirming removes it and says so.
          await remove.click();
          await dialog.getByRole('button', { name: 'Remove access' }).click();
          await expect
            .poll(() => page.locator('#page-status').textContent())
            .toBe('Grafana at example no longer has access to your account.');
          expect(await page.locator('#apps li').count()).toBe(0);
          expect(await page.locator('#apps-empty').isVisible()).toBe(true);
          expect(await page.evaluate('document.activeElement?.id')).toBe('apps-title');
          // The app's next authorization asks again.
          await page.goto(authorizeUrl('openid profile email'));
          await page.waitForURL(/\/oidc\/interaction\//);
          expect(await page.locator('h1').textContent()).toMatch(HEADINGS['en-GB'] as RegExp);
        }
        await context.close();
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);

  it('asks at the app’s sign-out whether to end the host session too, in every language, desktop and phone, light and dark', async () => {
    for (const [locale, logout] of Object.entries(LOGOUT)) {
      for (const viewport of [DESKTOP, PHONE]) {
        const context = await signedInContext(locale, viewport);
        const page = await context.newPage();
        watch(page);
        await page.goto(authorizeUrl('openid'));
        await page.waitForURL(/\/oidc\/interaction\//);
        await page.locator('form button[type="submit"]').first().click();
        await page.waitForURL(/^https:\/\/app\.example\/callback\?/);
        const params = new URLSearchParams({ client_id: issued.client_id, post_logout_redirect_uri: 'https://app.example/bye' });
        await page.goto(`/oidc/session/end?${params.toString()}`);
        expect(await page.locator('h1').textContent()).toMatch(logout.heading);
        await expect(page.getByRole('button', { name: logout.appOnly, exact: true }).isVisible()).resolves.toBe(true);
        await expect(page.getByRole('button', { name: logout.host, exact: true }).isVisible()).resolves.toBe(true);
        await expectLaidOut(page, `${locale} ${viewport.width}px`);
        if (locale === 'en-GB' && viewport === DESKTOP) {
          // The second answer ends the host session of this browser as well, and still returns to the app.
          expect((await context.request.get('/api/auth/me')).status()).toBe(200);
          await page.getByRole('button', { name: logout.host, exact: true }).click();
          await page.waitForURL('https://app.example/bye');
          expect((await context.request.get('/api/auth/me')).status()).toBe(401);
        }
        await context.close();
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
