/**
 * A browser app (a single-page app with no server of its own) signs in with
 * oc-host as its OpenID provider, through `oidc-client-ts`, the widely used
 * browser OpenID library nobody here wrote, loaded as its own release build.
 * The app is served from `http://localhost:<port>`, another origin than the
 * host's `http://127.0.0.1:<port>`, so every call it makes to the provider
 * is cross-origin: the token exchange, userinfo with a bearer token (which
 * needs a CORS preflight), the refresh grant of its silent renew, token
 * revocation and RP-initiated logout (docs/protocol.md §8 "Endpoints").
 *
 * Chromium: `scripts/ensure-chromium.sh`. Without it the suite skips with a
 * message, except under `CI=true`, where it fails.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { testApp } from './support/app.js';
import { newWallet } from './support/auth-client.js';
import { forEachEngine } from './support/auth-harness.js';
import { signBip322 } from './support/bitcoin-signer.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, HAVE_CHROMIUM, IN_CI } from './support/chromium.js';
import { openTestStore, type TestEngine, type TestStore } from './support/databases.js';
import { reservePort } from './support/instances.js';
import { operatorRegistry } from './support/oidc-rp.js';

/** The library's own browser build (a script that defines the global `oidc`), from the installed package. */
const LIBRARY = readFileSync(
  join(dirname(fileURLToPath(import.meta.resolve('oidc-client-ts/package.json'))), 'dist/browser/oidc-client-ts.min.js'),
  'utf8',
);

if (!HAVE_CHROMIUM && !IN_CI) console.warn(`oidc-browser-app: skipped: ${CHROMIUM_PATH} missing (run scripts/ensure-chromium.sh as root)`);
if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium (CI=true)', () => {
    throw new Error(`oidc-browser-app: ${CHROMIUM_PATH} missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

/** The browser globals the app and the in-page callbacks touch (the project's tsconfig has no DOM lib). */
interface InPage {
  unisat?: unknown;
  ocTestSignBip322?: (message: string) => Promise<string>;
  spa: {
    signIn(): Promise<void>;
    renew(): Promise<Outcome>;
    revoke(): Promise<Outcome>;
    signOut(): Promise<void>;
  };
  spaResult?: Outcome;
}

/** What the app reports of its signed-in user, or the library's error. */
interface Outcome {
  readonly ok: boolean;
  readonly error?: string;
  readonly profile?: Record<string, unknown>;
  readonly accessToken?: string;
  readonly refreshToken?: string;
  readonly scope?: string;
}

/** The app's script: its settings come from the page it runs on. */
const APP_SCRIPT = `
const settings = JSON.parse(document.getElementById('settings').textContent);
const manager = new oidc.UserManager({
  authority: settings.issuer,
  client_id: settings.clientId,
  redirect_uri: location.origin + '/callback',
  post_logout_redirect_uri: location.origin + '/',
  response_type: 'code',
  scope: 'openid email bitcoin orangecheck offline_access',
  loadUserInfo: true,
  filterProtocolClaims: false,
  automaticSilentRenew: false,
  userStore: new oidc.WebStorageStateStore({ store: window.localStorage }),
});
const report = (user) => ({ ok: true, profile: user.profile, accessToken: user.access_token, refreshToken: user.refresh_token, scope: user.scope });
const failure = (error) => ({ ok: false, error: String(error && error.message || error) });
window.spa = {
  signIn: () => manager.signinRedirect({ prompt: 'consent' }),
  renew: () => manager.signinSilent().then(report, failure),
  revoke: () => manager.revokeTokens().then(() => manager.getUser()).then((user) => ({ ok: true, accessToken: user && user.access_token }), failure),
  signOut: () => manager.signoutRedirect(),
};
if (location.pathname === '/callback') manager.signinRedirectCallback().then((user) => { window.spaResult = report(user); }, (error) => { window.spaResult = failure(error); });
`;

function browserAppSuite(engine: TestEngine): void {
  let testStore: TestStore;
  let app: FastifyInstance;
  let spaServer: Server;
  let browser: Browser;
  let base: string;
  let spaOrigin: string;
  /** The app's one page, at / and at its callback. */
  let spaPage = '';

  beforeAll(async () => {
    testStore = await openTestStore(engine);
    const reserved = await reservePort();
    base = `http://127.0.0.1:${reserved.port}`;
    // The provider library reads the wall clock: so does the host here.
    app = await testApp({ PORT: String(reserved.port), PUBLIC_URL: base }, { store: testStore.store, now: () => new Date() });
    await reserved.release();
    await app.listen({ port: reserved.port, host: '127.0.0.1' });

    spaServer = createServer((request, response) => {
      const path = new URL(request.url ?? '/', 'http://localhost').pathname;
      if (path === '/oidc-client-ts.js' || path === '/app.js') {
        response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(path === '/app.js' ? APP_SCRIPT : LIBRARY);
      } else if (path === '/' || path === '/callback') {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(spaPage);
      } else response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => spaServer.listen(0, '127.0.0.1', resolve));
    spaOrigin = `http://localhost:${(spaServer.address() as { port: number }).port}`;
    const operator = await operatorRegistry(testStore.store, base, () => new Date());
    const issued = await operator.clients.create({
      client_name: 'Browser app',
      redirect_uris: [`${spaOrigin}/callback`],
      post_logout_redirect_uris: [`${spaOrigin}/`],
      token_endpoint_auth_method: 'none',
    });
    const settings = JSON.stringify({ issuer: base, clientId: issued.client_id });
    spaPage =
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Browser app</title></head><body><h1>Browser app</h1>' +
      `<script type="application/json" id="settings">${settings}</script>` +
      '<script src="/oidc-client-ts.js"></script><script src="/app.js"></script></body></html>';
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => spaServer?.close(resolve));
    await app?.close();
    await testStore?.dispose();
  });

  /** The app's outcome once its callback has run. */
  async function callbackOutcome(page: Page): Promise<Outcome> {
    await page.waitForURL((url) => url.href.startsWith(`${spaOrigin}/callback`), { timeout: 30_000 });
    const handle = await page.waitForFunction(() => (globalThis as unknown as InPage).spaResult, undefined, { timeout: 30_000 });
    return (await handle.jsonValue()) as Outcome;
  }

  it('signs in through /signin and consent, reads userinfo, renews by refresh token, revokes, and signs out', {
    timeout: 120_000,
  }, async () => {
    const wallet = newWallet('p2wpkh');
    const context = await browser.newContext({ locale: 'en-GB' });
    await context.exposeFunction('ocTestSignBip322', (message: string) =>
      signBip322({ privateKey: wallet.privateKey, address: wallet.address, message }),
    );
    await context.addInitScript((address: string) => {
      const scope = globalThis as unknown as InPage;
      scope.unisat = { requestAccounts: async () => [address], signMessage: (message: string) => scope.ocTestSignBip322?.(message) };
    }, wallet.address);
    const page = await context.newPage();
    await page.goto(`${spaOrigin}/`);
    await page.evaluate(() => {
      void (globalThis as unknown as InPage).spa.signIn();
    });
    await page.waitForURL((url) => url.href.startsWith(`${base}/signin`), { timeout: 30_000 });
    await page.getByRole('button', { name: 'Connect UniSat' }).click();
    await page.waitForURL((url) => url.href.startsWith(`${base}/oidc/interaction/`), { timeout: 30_000 });
    expect(await page.locator('main h1').textContent()).toContain('Browser app');
    await page.getByRole('button', { name: 'Allow' }).click();

    // The code exchange and userinfo (a bearer token: preflighted) ran cross-origin in the library.
    const signedIn = await callbackOutcome(page);
    expect(signedIn.error).toBeUndefined();
    const me = await context.request.get(`${base}/api/auth/me`);
    const did = ((await me.json()) as { account: { did_oc: string } }).account.did_oc;
    expect(signedIn.profile).toMatchObject({ sub: did, primary_btc: wallet.address, btc_addresses: [wallet.address] });
    expect(signedIn.profile).toHaveProperty('orangecheck');
    expect(signedIn.profile?.auth_time).toBeTypeOf('number');
    expect(signedIn.refreshToken).toBeTypeOf('string');

    // Silent renew: the refresh grant, cross-origin; the refresh token rotates.
    const renewed = await page.evaluate(() => (globalThis as unknown as InPage).spa.renew());
    expect(renewed.error).toBeUndefined();
    expect(renewed.profile?.sub).toBe(did);
    expect(renewed.accessToken).not.toBe(signedIn.accessToken);
    expect(renewed.refreshToken).not.toBe(signedIn.refreshToken);

    // Revocation, cross-origin: the access token stops working.
    const revoked = await page.evaluate(() => (globalThis as unknown as InPage).spa.revoke());
    expect(revoked.error).toBeUndefined();
    const userinfo = await app.inject({ url: '/oidc/userinfo', headers: { authorization: `Bearer ${renewed.accessToken}` } });
    expect(userinfo.statusCode).toBe(401);

    // RP-initiated logout: the question page, then back to the app's registered address.
    await page.evaluate(() => {
      void (globalThis as unknown as InPage).spa.signOut();
    });
    await page.waitForURL((url) => url.href.startsWith(`${base}/oidc/session/end`), { timeout: 30_000 });
    await page.getByRole('button', { name: 'Sign out of Browser app only', exact: true }).click();
    await page.waitForURL((url) => url.href.startsWith(`${spaOrigin}/`), { timeout: 30_000 });
    // The app only: the host session stays.
    expect((await context.request.get(`${base}/api/auth/me`)).status()).toBe(200);
    await context.close();
  });
}

if (HAVE_CHROMIUM) await forEachEngine('a browser app signs in with oidc-client-ts', browserAppSuite);
