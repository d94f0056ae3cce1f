/**
 * Provider sign-in through HTTP: a real OpenID provider (oidc-provider) and a
 * loopback GitHub stand-in. Start redirects with a state cookie; the
 * provider's own redirects are followed by hand; the callback sets
 * `oc_session` and redirects to return_to, or to /signin?oauth_error=<code>.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import { testApp } from './support/app.js';
import { Browser, newWallet } from './support/auth-client.js';
import { startGitHubFake, type GitHubFake } from './support/github-fake.js';
import { followRedirects, startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { hostileReturnTo } from './support/return-to.js';
import * as client from 'openid-client';
import { openTestStore, type TestStore } from './support/databases.js';
import { discover, operatorRegistry, ProviderBrowser } from './support/oidc-rp.js';

const PUBLIC_URL = 'http://localhost:8787';
/** Another site of the family, where the OrangeCheck client may have pinned a tab. */
const SHOP = 'https://shop.example.com';
const CLIENT_SECRET = randomBytes(24).toString('hex');

let op: TestOidcProvider;
let github: GitHubFake;
let app: FastifyInstance;
let stored: TestStore;

beforeAll(async () => {
  stored = await openTestStore('sqlite');
  op = await startOidcProvider({ clientId: 'oc-client', clientSecret: CLIENT_SECRET, redirectUri: `${PUBLIC_URL}/api/auth/acme/callback` });
  github = await startGitHubFake({
    clientId: 'gh-client',
    clientSecret: 'gh-secret',
    redirectUri: `${PUBLIC_URL}/api/auth/github/callback`,
  });
  app = await testApp(
    {
      OAUTH_ACME_CLIENT_ID: 'oc-client',
      OAUTH_ACME_CLIENT_SECRET: CLIENT_SECRET,
      OAUTH_ACME_ISSUER: op.issuer,
      OAUTH_GITHUB_CLIENT_ID: 'gh-client',
      OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret',
      FAMILY_ORIGINS: `${PUBLIC_URL},${SHOP}`,
    },
    { githubAuthBase: github.url, githubApiBase: github.url, store: stored.store },
  );
});
afterAll(async () => {
  await app.close();
  await stored.dispose();
  await op.close();
  await github.close();
});

function cookieValue(setCookies: string[], name: string): string | undefined {
  for (const line of setCookies) {
    const match = new RegExp(`^${name}=([^;]*);`).exec(line);
    if (match) return match[1];
  }
  return undefined;
}

/** Runs start → provider → callback, as a browser would, for `browser`. */
async function providerSignIn(browser: Browser, provider: string, query = '') {
  const start = await browser.get(`/api/auth/${provider}/start${query}`);
  expect(start.status).toBe(302);
  const stateCookie = cookieValue(start.setCookies, 'oc_oauth');
  expect(start.setCookies.find((line) => line.startsWith('oc_oauth='))).toMatch(
    /Path=\/api\/auth; HttpOnly; Secure; SameSite=Lax; Max-Age=600/,
  );
  const back = await followRedirects(start.headers.location as string, `${PUBLIC_URL}/api/auth/${provider}/callback`);
  const cookies = [
    browser.cookie ? `oc_session=${browser.cookie}` : '',
    browser.binding ? `__Host-oc_roster=${browser.binding}` : '',
    `oc_oauth=${stateCookie}`,
  ]
    .filter(Boolean)
    .join('; ');
  const callback = await browser.request('GET', `${back.pathname}${back.search}`, undefined, { cookie: cookies });
  return { start, callback, stateCookie, callbackPath: `${back.pathname}${back.search}` };
}

describe('GET /api/auth/providers', () => {
  it('lists the configured providers', async () => {
    const reply = await new Browser(app).get('/api/auth/providers');
    expect(reply.status).toBe(200);
    expect(reply.body.providers).toEqual([
      { id: 'acme', label: 'Acme' },
      { id: 'github', label: 'GitHub' },
    ]);
  });
});

/** A new browser signed in with `provider`, asking to return to `returnTo`, redirected (302) to `location`. */
async function signInReturning(provider: string, returnTo: string, location: string) {
  const browser = new Browser(app);
  const { callback } = await providerSignIn(browser, provider, `?return_to=${returnTo}`);
  expect(callback.status).toBe(302);
  expect(callback.headers.location).toBe(location);
  return { browser, callback };
}

describe('OpenID Connect sign-in', () => {
  it('signs in, creates a federated account, and redirects to return_to', async () => {
    const { browser, callback } = await signInReturning('acme', '/account', '/account');
    expect(cookieValue(callback.setCookies, 'oc_oauth')).toBe('');
    const claims = decodeJwt(browser.cookie!);
    // A provider sign-in: its method, and no amr (docs/protocol.md §3).
    expect(claims.signing_method).toBe('oauth:acme');
    expect(claims).not.toHaveProperty('amr');
    const me = await browser.me();
    expect(me.body.account).toMatchObject({ kind: 'federated', display_name: 'Alice Example' });
    expect(me.body.account.display_identity).toEqual({ kind: 'email', value: 'alice@example.org' });
    // A provider sign-in is no step-up for linking (docs/protocol.md §6 "Step-up"): the provider may have
    // signed the person in from a session of its own.
    const link = await browser.post('/api/auth/link/btc', await browser.prove(newWallet(), 'link'));
    expect(link.status).toBe(401);
    expect(link.body.error).toBe('sudo_required');
  });

  it("leaves amr out of an app's ID token when the host session stands on a provider sign-in (docs/protocol.md §8)", async () => {
    const registry = await operatorRegistry(stored.store, PUBLIC_URL, () => new Date());
    const issued = await registry.clients.create({ client_name: 'Wiki', redirect_uris: ['https://wiki.example/cb'] });
    const browser = new Browser(app);
    op.setAccount({ sub: 'user-amr', email: 'amr@example.org', emailVerified: true, name: 'Amr' });
    expect((await providerSignIn(browser, 'acme')).callback.status).toBe(302);
    const config = await discover(app, issued.client_id, issued.client_secret);
    const rp = new ProviderBrowser(app, browser);
    let hop = await rp.follow(
      client.buildAuthorizationUrl(config, { redirect_uri: 'https://wiki.example/cb', scope: 'openid', state: 'a' }).href,
    );
    if (hop.status === 200) hop = await rp.allow(hop);
    const tokens = await client.authorizationCodeGrant(config, new URL(hop.location as string), { expectedState: 'a' });
    expect(tokens.claims()).toMatchObject({ acr: 'urn:oc:acr:basic' });
    expect(tokens.claims()).not.toHaveProperty('amr');
  });

  it('add=1 joins the caller roster', async () => {
    const browser = new Browser(app);
    const btc = await browser.signIn(newWallet());
    op.setAccount({ sub: 'user-2', email: 'bob@example.org', emailVerified: true, name: 'Bob' });
    const { callback } = await providerSignIn(browser, 'acme', '?add=1');
    expect(callback.status).toBe(302);
    const me = await browser.me();
    expect(me.body.account.display_name).toBe('Bob');
    expect(me.body.roster.map((entry: { did_oc: string }) => entry.did_oc)).toEqual([btc.body.account.did_oc]);
  });

  it('drops a provider name the account edit would refuse, and signs in without one', async () => {
    const browser = new Browser(app);
    op.setAccount({ sub: 'user-rlo', email: 'rlo@example.org', emailVerified: true, name: 'Alice\u202Egnp.exe' });
    const { callback } = await providerSignIn(browser, 'acme');
    expect(callback.status).toBe(302);
    const me = await browser.me();
    expect(me.body.account.display_name).toBeNull();
    const edit = await browser.request('PATCH', '/api/auth/account', { display_name: 'Alice\u202Egnp.exe' });
    expect(edit.status).toBe(400);
  });

  it('cuts a long provider name at 64 characters without splitting an emoji', async () => {
    const browser = new Browser(app);
    // 63 letters, then a family emoji (one grapheme of 5 code points joined by ZWJ), then more.
    const name = `${'a'.repeat(63)}\u{1F468}\u200D\u{1F469}\u200D\u{1F467} and more`;
    op.setAccount({ sub: 'user-long', email: 'long@example.org', emailVerified: true, name });
    await providerSignIn(browser, 'acme');
    const me = await browser.me();
    expect(me.body.account.display_name).toBe('a'.repeat(63));
    op.setAccount({ sub: 'user-emoji', email: 'emoji@example.org', emailVerified: true, name: `${'b'.repeat(62)}\u{1F44B}\u{1F3FD}xyz` });
    const other = new Browser(app);
    await providerSignIn(other, 'acme');
    expect((await other.me()).body.account.display_name).toBe(`${'b'.repeat(62)}\u{1F44B}\u{1F3FD}`);
  });

  it('a replayed callback is refused with oauth_error=state_mismatch', async () => {
    const browser = new Browser(app);
    const { stateCookie, callbackPath } = await providerSignIn(browser, 'acme');
    const replay = await new Browser(app).request('GET', callbackPath, undefined, { cookie: `oc_oauth=${stateCookie}` });
    expect(replay.status).toBe(302);
    expect(replay.headers.location).toBe('/signin?oauth_error=state_mismatch');
  });

  it('a callback without the state cookie is refused', async () => {
    const browser = new Browser(app);
    const start = await browser.get('/api/auth/acme/start');
    const back = await followRedirects(start.headers.location as string, `${PUBLIC_URL}/api/auth/acme/callback`);
    const callback = await browser.get(`${back.pathname}${back.search}`);
    expect(callback.headers.location).toBe('/signin?oauth_error=state_mismatch');
    expect(browser.cookie).toBeUndefined();
  });

  it('denied consent redirects with oauth_error=access_denied', async () => {
    op.setDenyConsent(true);
    try {
      const browser = new Browser(app);
      const { callback } = await providerSignIn(browser, 'acme');
      expect(callback.headers.location).toBe('/signin?oauth_error=access_denied');
      expect(browser.cookie).toBeUndefined();
    } finally {
      op.setDenyConsent(false);
    }
  });

  it('an ID token for another audience is refused', async () => {
    op.setIdTokenTamper('wrong-audience');
    try {
      const { callback } = await providerSignIn(new Browser(app), 'acme');
      expect(callback.headers.location).toBe('/signin?oauth_error=id_token_invalid');
    } finally {
      op.setIdTokenTamper(undefined);
    }
  });

  it.each([
    ['/\u2215\u2215evil.com', '/%E2%88%95%E2%88%95evil.com'],
    ['/\uff0f\uff0fevil.com', '/%EF%BC%8F%EF%BC%8Fevil.com'],
    ['/caf\u00e9?q=\u00fc#\u{1f511}', '/caf%C3%A9?q=%C3%BC#%F0%9F%94%91'],
    ['/a/./b/../c', '/a/c'],
  ])('return_to %j comes back percent-encoded in Location, never a 500, and signs in', async (returnTo, location) => {
    const browser = new Browser(app);
    const { callback } = await providerSignIn(browser, 'acme', `?return_to=${encodeURIComponent(returnTo)}`);
    expect(callback.status).toBe(302);
    expect(callback.headers.location).toBe(location);
    expect(new URL(callback.headers.location as string, PUBLIC_URL).origin).toBe(PUBLIC_URL);
    expect(browser.cookie).toBeDefined();
    expect((await browser.me()).status).toBe(200);
  });

  // docs/protocol.md §6 "return_to": the start refuses it, or the callback's Location is the normalised path.
  it.each(hostileReturnTo(PUBLIC_URL))(
    'hostile return_to %j is refused at start or lands on this service',
    async (returnTo, normalised) => {
      const browser = new Browser(app);
      if (normalised === null) {
        const reply = await browser.get(`/api/auth/acme/start?return_to=${encodeURIComponent(returnTo)}`);
        expect(reply.status).toBe(400);
        expect(reply.body.error).toBe('bad_request');
        expect(reply.setCookies).toEqual([]);
        return;
      }
      const { callback } = await providerSignIn(browser, 'acme', `?return_to=${encodeURIComponent(returnTo)}`);
      expect(callback.status).toBe(302);
      expect(callback.headers.location).toBe(normalised);
      expect(new URL(callback.headers.location as string, PUBLIC_URL).origin).toBe(PUBLIC_URL);
    },
  );

  it('back on another family site the redirect carries #oc-adopt, unless return_to has a fragment of its own or is a page of this service', async () => {
    for (const [returnTo, location] of [
      [`${SHOP}/after`, `${SHOP}/after#oc-adopt`],
      [`${SHOP}/after?tab=2`, `${SHOP}/after?tab=2#oc-adopt`],
      [`${SHOP}/after#section`, `${SHOP}/after#section`],
      [`${PUBLIC_URL}/account`, `${PUBLIC_URL}/account`],
      ['/account', '/account'],
    ] as const) {
      const { callback } = await providerSignIn(new Browser(app), 'acme', `?return_to=${encodeURIComponent(returnTo)}`);
      expect(callback.status, returnTo).toBe(302);
      expect(callback.headers.location, returnTo).toBe(location);
    }
  });

  it('return_to outside the family is refused at start', async () => {
    const reply = await new Browser(app).get('/api/auth/acme/start?return_to=https://evil.test/steal');
    expect(reply.status).toBe(400);
    expect(reply.body.error).toBe('bad_request');
  });

  it('an unknown provider is 404 unknown_provider', async () => {
    const reply = await new Browser(app).get('/api/auth/nope/start');
    expect(reply.status).toBe(404);
    expect(reply.body).toMatchObject({ ok: false, error: 'unknown_provider', reason: 'unknown_provider' });
    expect((await new Browser(app).get('/api/auth/nope/callback?code=x&state=y')).status).toBe(404);
  });
});

describe('GitHub sign-in', () => {
  it('signs in with the numeric user id as subject', async () => {
    const { browser } = await signInReturning('github', 'http://localhost:8787/account', 'http://localhost:8787/account');
    expect(decodeJwt(browser.cookie!)).toMatchObject({ signing_method: 'oauth:github' });
    expect(decodeJwt(browser.cookie!)).not.toHaveProperty('amr');
    const again = new Browser(app);
    await providerSignIn(again, 'github');
    expect((await again.me()).body.account.did_oc).toBe((await browser.me()).body.account.did_oc);
  });
});
