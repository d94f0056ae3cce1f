/**
 * The security-key step-up an app's sign-in asks for (docs/protocol.md §8
 * "How the person signed in"), in headless Chromium with its virtual
 * WebAuthn authenticator: an authorization that demands a key sends the
 * person to /sudo, which offers only the key, in every language, at desktop
 * and phone width, light and dark, with axe finding nothing and no CSP
 * violation; touching the key signs the app in at the key level, and
 * Cancel answers the app `access_denied`. The sign-in page fills its field
 * from the app's `login_hint`.
 */
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PAGE_CATALOGS, type Locale } from '../src/platform/i18n/index.js';
import { ACR_KEY, type IssuedClient } from '../src/features/oidc/index.js';
import { newWallet } from './support/auth-client.js';
import {
  CHROMIUM_PATH,
  DESKTOP,
  HAVE_CHROMIUM,
  IN_CI,
  PHONE,
  pageContext,
  expectLaidOut,
  virtualAuthenticator,
} from './support/chromium.js';
import { usePageHost } from './support/page-host.js';
import { operatorRegistry } from './support/oidc-rp.js';
import { SoftwareAuthenticator } from './support/webauthn-authenticator.js';

const REDIRECT = 'https://app.example/callback';
const LOCALES: ReadonlyArray<readonly [string, Locale]> = [
  ['en-GB', 'en'],
  ['de-DE', 'de'],
  ['fr-FR', 'fr'],
  ['es-ES', 'es'],
];
const ESSENTIAL_KEY = JSON.stringify({ id_token: { acr: { essential: true, values: [ACR_KEY] } } });

if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium to drive (CI=true)', () => {
    throw new Error(`oidc-key-pages: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

describe.skipIf(!HAVE_CHROMIUM)('the key step-up of an app sign-in in headless Chromium', () => {
  let issued: IssuedClient;
  // localhost, not 127.0.0.1: an IP address is no WebAuthn relying party id.
  const site = usePageHost({
    hostname: 'localhost',
    ready: async ({ harness, base }) => {
      const oidc = await operatorRegistry(harness.store, base, harness.clock.now);
      issued = await oidc.clients.create({ client_name: 'Vault at example', redirect_uris: [REDIRECT] });
    },
  });
  const problems: string[] = [];

  /**
   * A browser signed in to a new account that has a security key, registered
   * through the API and then put into Chromium's virtual authenticator.
   */
  async function withKey(locale: string, viewport: { width: number; height: number }): Promise<{ context: BrowserContext; page: Page }> {
    const host = site.harness.browser(site.app, site.base);
    const wallet = newWallet();
    expect((await host.signIn(wallet)).status).toBe(200);
    expect((await host.post('/api/auth/sudo', await host.prove(wallet, 'sudo'))).status).toBe(200);
    const authenticator = new SoftwareAuthenticator({ origin: site.base, alg: 'ES256' });
    const started = await host.post('/api/auth/webauthn/register/options', {});
    const registered = await host.post('/api/auth/webauthn/register/verify', {
      challenge_token: started.body.challenge_token,
      response: authenticator.create(started.body.options),
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    const stored = authenticator.credentials[0];
    if (stored === undefined) throw new Error('no credential');

    const context = await pageContext(site.browser, site.base, locale, viewport, host.cookie as string);
    await context.route('https://app.example/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<p>app</p>' }));
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await virtualAuthenticator(page, 'security key', [
      {
        credentialId: stored.id.toString('base64'),
        isResidentCredential: false,
        rpId: 'localhost',
        privateKey: stored.privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
        signCount: stored.counter,
      },
    ]);
    return { context, page };
  }

  function authorizeUrl(extra: Record<string, string>): string {
    const params = new URLSearchParams({
      client_id: issued.client_id,
      redirect_uri: REDIRECT,
      response_type: 'code',
      scope: 'openid',
      state: 'k',
      ...extra,
    });
    return `/oidc/auth?${params.toString()}`;
  }

  /** The ID token the code at `callback` is exchanged for, decoded. */
  async function idTokenClaims(callback: string): Promise<Record<string, unknown>> {
    const code = new URL(callback).searchParams.get('code') as string;
    const reply = await site.app.inject({
      method: 'POST',
      url: '/oidc/token',
      headers: {
        host: new URL(site.base).host,
        authorization: `Basic ${Buffer.from(`${issued.client_id}:${issued.client_secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT }).toString(),
    });
    expect(reply.statusCode, reply.body).toBe(200);
    const token = (reply.json() as { id_token: string }).id_token;
    return JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString('utf8')) as Record<string, unknown>;
  }

  it('offers only the key, in every language, desktop and phone, light and dark; the key signs the app in, Cancel declines', async () => {
    for (const [tag, locale] of LOCALES) {
      for (const viewport of [DESKTOP, PHONE]) {
        const { context, page } = await withKey(tag, viewport);
        await page.goto(authorizeUrl({ claims: ESSENTIAL_KEY }));
        await page.waitForURL(/\/sudo\?/);
        expect(new URL(page.url()).searchParams.get('require')).toBe('key');
        await expect.poll(() => page.locator('#lead').textContent()).toBe(PAGE_CATALOGS[locale]['sudo.lead_key']);
        await page.locator('#proof').waitFor({ state: 'visible' });
        expect(await page.locator('#sudo-key').isVisible()).toBe(true);
        expect(await page.locator('#sudo-btc').isVisible()).toBe(false);
        expect(await page.locator('#sudo-email').isVisible()).toBe(false);
        expect(await page.locator('#sudo-cancel').getAttribute('href')).toMatch(/^\/oidc\/interaction\/[A-Za-z0-9_-]+\?cancel=1$/);
        await expectLaidOut(page, `${tag} ${viewport.width}px`);
        if (locale === 'en' && viewport === DESKTOP) {
          await page.locator('#sudo-key-button').click();
          // A new app: its consent page comes next.
          await page.waitForURL(/\/oidc\/interaction\//);
          await page.getByRole('button', { name: 'Allow' }).click();
          await page.waitForURL(/^https:\/\/app\.example\/callback\?/);
          expect(await idTokenClaims(page.url())).toMatchObject({ acr: ACR_KEY, amr: ['swk', 'hwk', 'mfa'] });
        }
        if (locale === 'es' && viewport === PHONE) {
          await page.locator('#sudo-cancel').click();
          await page.waitForURL(/^https:\/\/app\.example\/callback\?/);
          expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied');
        }
        await context.close();
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);

  it("fills the sign-in page's e-mail field from the app's login_hint", async () => {
    const context = await pageContext(site.browser, site.base, 'en-GB', DESKTOP);
    const page = await context.newPage();
    await page.goto(authorizeUrl({ login_hint: 'ada@example.org' }));
    await page.waitForURL(/\/signin\?/);
    await expect.poll(() => page.locator('#email-address').inputValue()).toBe('ada@example.org');
    await context.close();
  }, 60_000);
});
