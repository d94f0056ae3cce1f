/**
 * oc-host as an OpenID provider (docs/protocol.md §8), driven by
 * `openid-client` as a confidential and as a public (PKCE) client: discovery,
 * sign-in through the host session, consent, the code exchange, ID token
 * validation, userinfo, refresh rotation, revocation, introspection and
 * end-session, on every engine.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { ACR_BASIC, ACR_KEY, type IssuedClient, type OidcService } from '../src/features/oidc/index.js';
import { newWallet, type Wallet } from './support/auth-client.js';
import { AuthHarness, forEachEngine, LOCAL_ORIGIN, type TimedBrowser } from './support/auth-harness.js';
import { inlinePolicy } from './support/inline-page.js';
import { WallClock } from './support/clock.js';
import { discover, injectFetch, operatorRegistry, ProviderBrowser, type Hop } from './support/oidc-rp.js';
import { SoftwareAuthenticator } from './support/webauthn-authenticator.js';

const REDIRECT = 'https://app.example/callback';

function providerSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let app: FastifyInstance;
  let registry: OidcService;

  beforeAll(async () => {
    // The provider library reads the wall clock (Date): it is the host's test clock here.
    vi.useFakeTimers({ toFake: ['Date'] });
    harness = await AuthHarness.open(engine, new WallClock(Date.now()));
    app = await harness.app();
    registry = await operatorRegistry(harness.store, LOCAL_ORIGIN, harness.clock.now);
  });
  afterAll(async () => {
    await harness.close();
    vi.useRealTimers();
  });

  async function signedInBrowser(): Promise<{ host: TimedBrowser; did: string; browser: ProviderBrowser; wallet: Wallet }> {
    const host = harness.browser(app);
    const wallet = newWallet();
    const reply = await host.signIn(wallet);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { host, did: reply.body.account.did_oc, browser: new ProviderBrowser(app, host), wallet };
  }

  async function confidential(extra: Partial<Parameters<OidcService['clients']['create']>[0]> = {}): Promise<IssuedClient> {
    return registry.clients.create({ client_name: 'Grafana at example', redirect_uris: [REDIRECT], ...extra });
  }

  /** Runs an authorization to the redirect URI; the callback URL. */
  async function authorize(browser: ProviderBrowser, url: URL): Promise<{ callback: URL; consent: Hop | undefined }> {
    let hop = await browser.follow(url.href);
    let consent: Hop | undefined;
    if (hop.status === 200 && hop.url.includes('/oidc/interaction/')) {
      consent = hop;
      hop = await browser.allow(hop);
    }
    expect(hop.location, `${hop.status} ${hop.url}\n${hop.body.slice(0, 600)}`).toBeDefined();
    return { callback: new URL(hop.location as string), consent };
  }

  it('publishes discovery at the issuer with every endpoint, three signing algorithms and no implicit flow', async () => {
    // Whatever host the request names, the answers name the issuer.
    const reply = await app.inject({
      url: '/.well-known/openid-configuration',
      headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' },
    });
    expect(reply.statusCode).toBe(200);
    const doc = reply.json();
    expect(doc.issuer).toBe(LOCAL_ORIGIN);
    expect(doc.authorization_endpoint).toBe(`${LOCAL_ORIGIN}/oidc/auth`);
    expect(doc.token_endpoint).toBe(`${LOCAL_ORIGIN}/oidc/token`);
    expect(doc.userinfo_endpoint).toBe(`${LOCAL_ORIGIN}/oidc/userinfo`);
    expect(doc.jwks_uri).toBe(`${LOCAL_ORIGIN}/oidc/jwks`);
    expect(doc.revocation_endpoint).toBe(`${LOCAL_ORIGIN}/oidc/token/revocation`);
    expect(doc.introspection_endpoint).toBe(`${LOCAL_ORIGIN}/oidc/token/introspection`);
    expect(doc.end_session_endpoint).toBe(`${LOCAL_ORIGIN}/oidc/session/end`);
    expect(doc.response_types_supported).toEqual(['code']);
    expect(doc.code_challenge_methods_supported).toEqual(['S256']);
    expect([...doc.id_token_signing_alg_values_supported].sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    expect(doc.scopes_supported).toEqual(
      expect.arrayContaining(['openid', 'offline_access', 'profile', 'email', 'bitcoin', 'orangecheck']),
    );
    expect(doc.token_endpoint_auth_methods_supported).not.toContain('client_secret_jwt');
    const jwks = (await app.inject({ url: '/oidc/jwks' })).json();
    expect(jwks.keys.map((key: { alg: string }) => key.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    for (const key of jwks.keys) expect(key).not.toHaveProperty('d');
  });

  it('signs a confidential client in through the host session: consent once, code, ID token, userinfo, refresh rotation, revocation', async () => {
    const issued = await confidential();
    expect(issued.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { did, browser } = await signedInBrowser();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const { url, verifier } = await pkceUrl(config, {
      scope: 'openid profile bitcoin offline_access',
      prompt: 'consent',
      state,
      nonce,
    });
    const { callback, consent } = await authorize(browser, url);
    expect(consent?.body).toContain('Grafana at example');
    expect(consent?.headers['content-security-policy']).toContain("form-action 'self' https://app.example");
    expect(consent?.headers['content-security-policy']).toContain("frame-ancestors 'none'");

    const tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
    });
    const claims = tokens.claims();
    expect(claims?.sub).toBe(did);
    expect(claims?.iss).toBe(LOCAL_ORIGIN);
    expect(claims?.amr).toEqual(['swk']);
    expect(claims?.acr).toBe('urn:oc:acr:basic');
    // The ID token keeps the openid claims; the scope's others are userinfo's.
    expect(claims).not.toHaveProperty('btc_addresses');
    expect(tokens.refresh_token).toBeDefined();

    const info = await client.fetchUserInfo(config, tokens.access_token, did);
    expect(info.sub).toBe(did);
    expect(info.btc_addresses).toHaveLength(1);
    expect(info.primary_btc).toBe((info.btc_addresses as string[])[0]);
    expect(info).not.toHaveProperty('email');

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.refresh_token).toBeDefined();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const live = await client.tokenIntrospection(config, refreshed.access_token);
    expect(live).toMatchObject({ active: true, sub: did, client_id: issued.client_id });
    // Consent is remembered for this account and client: the next authorization goes straight back.
    const again = await authorize(
      browser,
      client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT,
        scope: 'openid profile',
        state,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }),
    );
    expect(again.consent).toBeUndefined();
    const next = await client.authorizationCodeGrant(config, again.callback, { pkceCodeVerifier: verifier, expectedState: state });
    expect((await client.tokenIntrospection(config, next.access_token)).active).toBe(true);
    await client.tokenRevocation(config, next.access_token);
    expect((await client.tokenIntrospection(config, next.access_token)).active).toBe(false);

    // A rotated-out refresh token used again is taken as stolen: it fails, and every token of its grant dies with it.
    await expect(client.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await client.tokenIntrospection(config, refreshed.refresh_token as string)).active).toBe(false);
    expect((await client.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
  });

  it('requires PKCE of a public client and signs it in with S256', async () => {
    const issued = await registry.clients.create({
      client_name: 'Single page',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
    });
    expect(issued.client_secret).toBeUndefined();
    const config = await discover(app, issued.client_id);
    const { did, browser } = await signedInBrowser();
    const withoutPkce = await browser.follow(
      client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', state: 's' }).href,
    );
    expect(new URL(withoutPkce.location as string).searchParams.get('error')).toBe('invalid_request');
    const { url, verifier } = await pkceUrl(config, {
      scope: 'openid',
      state: 'xyz',
    });
    const { callback } = await authorize(browser, url);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'xyz' });
    expect(tokens.claims()?.sub).toBe(did);
  });

  it('sends a browser without a host session to the sign-in page and comes back after it', async () => {
    const issued = await confidential();
    const config = await discover(app, issued.client_id, issued.client_secret);
    const host = harness.browser(app);
    const browser = new ProviderBrowser(app, host);
    const { url, verifier } = await pkceUrl(config, {
      scope: 'openid',
      state: 'abc',
    });
    const first = await browser.follow(url.href);
    expect(first.status).toBe(200);
    const signin = new URL(first.url);
    expect(signin.pathname).toBe('/signin');
    const back = signin.searchParams.get('return_to') as string;
    expect(back).toMatch(/^\/oidc\/interaction\/[A-Za-z0-9_-]+$/);
    const signedIn = await host.signIn(newWallet());
    expect(signedIn.status).toBe(200);
    const { callback } = await authorize(browser, new URL(back, LOCAL_ORIGIN));
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'abc' });
    expect(tokens.claims()?.sub).toBe(signedIn.body.account.did_oc);
  });

  it('follows the host session: after signing out of the host, the provider asks again', async () => {
    const issued = await confidential();
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { host, browser } = await signedInBrowser();
    const { params } = await pkceParams({
      scope: 'openid',
      state: 'abc',
    });
    await authorize(browser, client.buildAuthorizationUrl(config, params));
    expect((await host.logout()).status).toBe(200);
    const hop = await browser.follow(client.buildAuthorizationUrl(config, params).href);
    expect(new URL(hop.url).pathname).toBe('/signin');
    // prompt=none cannot sign anyone in.
    const silent = await browser.follow(client.buildAuthorizationUrl(config, { ...params, prompt: 'none' }).href);
    expect(new URL(silent.location as string).searchParams.get('error')).toBe('login_required');
  });

  it('declines with access_denied when the person cancels', async () => {
    const issued = await confidential();
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { browser } = await signedInBrowser();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid email', state: 'st' });
    const page = await browser.follow(url.href);
    const abort = /formaction="([^"]+)"/.exec(page.body)?.[1] as string;
    const hop = await browser.follow(abort, 'POST');
    const answer = new URL(hop.location as string);
    expect(answer.origin).toBe('https://app.example');
    expect(answer.searchParams.get('error')).toBe('access_denied');
    expect(answer.searchParams.get('state')).toBe('st');
  });

  it('ends the provider session at end-session and returns only to a registered address', async () => {
    const issued = await confidential({ post_logout_redirect_uris: ['https://app.example/bye'] });
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { browser } = await signedInBrowser();
    const signIn = await pkceUrl(config, { state: 'e' });
    const { callback } = await authorize(browser, signIn.url);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: signIn.verifier, expectedState: 'e' });
    const stranger = client.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token as string,
      post_logout_redirect_uri: 'https://evil.example/',
    });
    const refused = await browser.follow(stranger.href);
    expect(refused.status).toBe(400);
    expect(refused.location).toBeUndefined();
    const url = client.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token as string,
      post_logout_redirect_uri: 'https://app.example/bye',
    });
    const question = await browser.follow(url.href);
    expect(question.status).toBe(200);
    expect(question.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question.body)?.[1] as string;
    const done = await browser.follow('/oidc/session/end/confirm', 'POST', { xsrf, logout: 'yes' });
    expect(done.location).toBe('https://app.example/bye');
  });

  it('asks for a fresh proof at /sudo for prompt=login and for a max_age the session is older than', async () => {
    const issued = await confidential();
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { host, browser, wallet } = await signedInBrowser();
    const { params, verifier } = await pkceParams({
      scope: 'openid',
      state: 'p',
    });
    await authorize(browser, client.buildAuthorizationUrl(config, params));
    for (const extra of [{ prompt: 'login' }, { max_age: '0' }]) {
      harness.clock.advance(2000);
      const hop = await browser.follow(client.buildAuthorizationUrl(config, { ...params, ...extra }).href);
      const sudo = new URL(hop.url);
      expect(sudo.pathname, JSON.stringify(extra)).toBe('/sudo');
      const back = sudo.searchParams.get('return_to') as string;
      expect(back).toMatch(/^\/oidc\/interaction\//);
      // Coming back without the proof changes nothing.
      expect(new URL((await browser.follow(back)).url).pathname).toBe('/sudo');
      const proved = await host.post('/api/auth/sudo', await host.prove(wallet, 'sudo'));
      expect(proved.status, JSON.stringify(proved.body)).toBe(200);
      const { callback } = await authorize(browser, new URL(back, LOCAL_ORIGIN));
      const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'p' });
      expect(tokens.claims()?.auth_time).toBe(Math.floor(harness.clock.ms / 1000));
    }
  });

  it("names the app of an authorization to the browser that started it alone, as text, with its https logo allowed by /signin's policy", async () => {
    const hostile = '<img src=x onerror=alert(1)>{{return_to}}';
    const issued = await confidential({ client_name: hostile, logo_uri: 'https://logo.example/app.png' });
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { url } = await pkceUrl(config, {
      scope: 'openid',
      state: 'n',
    });
    // A browser without a host session lands on the sign-in page, which names no app itself; its policy
    // allows the logo's origin, which the page's script learns with the name.
    const host = harness.browser(app);
    const browser = new ProviderBrowser(app, host);
    const signin = await browser.follow(url.href);
    expect(new URL(signin.url).pathname).toBe('/signin');
    const logoCsp = inlinePolicy(signin.body).replace("img-src 'self' data:", "img-src 'self' data: https://logo.example");
    expect(signin.headers['content-security-policy']).toBe(logoCsp);
    expect(signin.body).not.toContain('onerror');
    expect(signin.body).not.toContain('logo.example');
    const back = new URL(signin.url).searchParams.get('return_to') as string;
    expect(back).toMatch(/^\/oidc\/interaction\/[A-Za-z0-9_-]+$/);

    // The browser that started it learns the app's name, as JSON data (the page shows it as text), and its logo.
    const named = await browser.request('GET', `${back}/app`);
    expect(named.status, named.body).toBe(200);
    expect(named.headers['content-type']).toMatch(/^application\/json/);
    expect(named.headers['cache-control']).toBe('no-store, private');
    expect(JSON.parse(named.body)).toEqual({
      ok: true,
      client_id: issued.client_id,
      name: hostile,
      logo_uri: 'https://logo.example/app.png',
    });

    // Another browser, signed in or not, with the same address learns nothing.
    const stranger = await signedInBrowser();
    for (const other of [stranger.browser, new ProviderBrowser(app, harness.browser(app))]) {
      const refused = await other.request('GET', `${back}/app`);
      expect(refused.status).toBe(404);
      expect(JSON.parse(refused.body)).toMatchObject({ ok: false, error: 'not_found' });
      expect(refused.body).not.toContain('onerror');
      // The page's policy names an image origin, nothing of the app.
      const page = await other.request('GET', `/signin?return_to=${encodeURIComponent(back)}`);
      expect(page.headers['content-security-policy']).toBe(logoCsp);
      expect(page.body).not.toContain('onerror');
    }
    // An unknown id, or one that is not an id, is refused the same way.
    expect((await browser.request('GET', '/oidc/interaction/AAAAAAAAAAAAAAAAAAAAA/app')).status).toBe(404);
    const malformed = await browser.request('GET', '/oidc/interaction/a.b/app');
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({ ok: false, error: 'bad_request' });

    // The consent page escapes the name and allows the https logo's origin alone.
    expect((await host.signIn(newWallet())).status).toBe(200);
    const consent = await browser.follow(new URL(back, LOCAL_ORIGIN).href);
    expect(consent.status).toBe(200);
    expect(consent.body).not.toContain('<img src=x');
    expect(consent.body).toContain('&#60;img src=x onerror=alert(1)&#62;&#123;&#123;return_to&#125;&#125;');
    expect(consent.headers['content-security-policy']).toContain("img-src 'self' data: https://logo.example;");
    const done = await browser.allow(consent);
    expect(done.location).toMatch(/^https:\/\/app\.example\/callback\?code=/);
    // Once the authorization is over, its id names nothing.
    expect((await browser.request('GET', `${back}/app`)).status).toBe(404);
  });

  it('names no logo origin for a client whose logo is not https, on the consent page either', async () => {
    const issued = await confidential({ client_name: 'Plain logo', logo_uri: 'http://logo.example/app.png' });
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { browser } = await signedInBrowser();
    const consent = await browser.follow((await pkceUrl(config, { state: 'h' })).url.href);
    expect(consent.status).toBe(200);
    expect(consent.headers['content-security-policy']).toContain("img-src 'self' data:;");
    const back = new URL(consent.url).pathname;
    expect(JSON.parse((await browser.request('GET', `${back}/app`)).body)).toEqual({
      ok: true,
      client_id: issued.client_id,
      name: 'Plain logo',
    });
    const signin = await browser.request('GET', `/signin?return_to=${encodeURIComponent(back)}`);
    expect(signin.headers['content-security-policy']).toBe(inlinePolicy(signin.body));
  });

  it('lists the apps an account allowed and withdraws one: its tokens stop and the next sign-in asks again', async () => {
    const issued = await confidential({ logo_uri: 'https://app.example/logo.png' });
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { host, browser } = await signedInBrowser();
    const { params, verifier } = await pkceParams({
      scope: 'openid profile offline_access',
      prompt: 'consent',
      state: 'w',
    });
    const { callback } = await authorize(browser, client.buildAuthorizationUrl(config, params));
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'w' });

    const listed = await host.get('/api/auth/apps');
    expect(listed.status).toBe(200);
    expect(listed.headers['cache-control']).toBe('no-store, private');
    expect(listed.body.apps).toEqual([
      {
        client_id: issued.client_id,
        name: 'Grafana at example',
        logo_uri: 'https://app.example/logo.png',
        scopes: ['openid', 'profile', 'offline_access'],
        first_allowed_at: expect.any(String),
        last_allowed_at: expect.any(String),
      },
    ]);
    // Another account sees none of it and cannot withdraw it.
    const stranger = (await signedInBrowser()).host;
    expect((await stranger.get('/api/auth/apps')).body.apps).toEqual([]);
    expect((await stranger.request('DELETE', `/api/auth/apps/${issued.client_id}`)).status).toBe(404);
    expect((await client.tokenIntrospection(config, tokens.refresh_token as string)).active).toBe(true);

    expect((await host.request('DELETE', `/api/auth/apps/${issued.client_id}`)).status).toBe(200);
    expect((await host.request('DELETE', `/api/auth/apps/${issued.client_id}`)).status).toBe(404);
    expect((await host.get('/api/auth/apps')).body.apps).toEqual([]);
    expect((await client.tokenIntrospection(config, tokens.refresh_token as string)).active).toBe(false);
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    const { prompt: _consent, ...withoutPrompt } = params;
    const again = await authorize(browser, client.buildAuthorizationUrl(config, withoutPrompt));
    expect(again.consent?.body).toContain('Grafana at example');
    expect((await app.inject({ url: '/api/auth/apps' })).statusCode).toBe(401);
  });

  /** Authorization parameters for REDIRECT with PKCE (scope `openid` and state `s` unless `extra` says otherwise), and the verifier. */
  async function pkceParams(extra: Record<string, string> = {}): Promise<{ params: Record<string, string>; verifier: string }> {
    const verifier = client.randomPKCECodeVerifier();
    const params = {
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 's',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...extra,
    };
    return { params, verifier };
  }

  /** An authorization URL of `config` for REDIRECT with PKCE, and its verifier. */
  async function pkceUrl(config: client.Configuration, extra: Record<string, string> = {}): Promise<{ url: URL; verifier: string }> {
    const { params, verifier } = await pkceParams(extra);
    return { url: client.buildAuthorizationUrl(config, params), verifier };
  }

  it('puts in the ID token the claims the claims parameter names for it, and no other claim of the scope', async () => {
    const issued = await confidential();
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { browser, did, wallet } = await signedInBrowser();
    const { url, verifier } = await pkceUrl(config, {
      scope: 'openid profile bitcoin',
      prompt: 'consent',
      claims: JSON.stringify({ id_token: { btc_addresses: null } }),
    });
    const { callback } = await authorize(browser, url);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's' });
    const claims = tokens.claims();
    expect(claims?.sub).toBe(did);
    expect(claims?.btc_addresses).toEqual([wallet.address]);
    expect(claims).not.toHaveProperty('primary_btc');
  });

  it('honours login_hint: the signed-in account goes through, another is asked to sign in once, a stranger gets the field filled', async () => {
    const issued = await confidential();
    const config = await discover(app, issued.client_id, issued.client_secret);
    const stranger = new ProviderBrowser(app, harness.browser(app));
    const first = await stranger.follow((await pkceUrl(config, { login_hint: 'Someone@Example.org' })).url.href);
    const signin = new URL(first.url);
    expect(signin.pathname).toBe('/signin');
    expect(signin.searchParams.get('login_hint')).toBe('Someone@Example.org');
    expect(signin.searchParams.get('add')).toBeNull();
    expect(signin.searchParams.get('return_to')).toMatch(/^\/oidc\/interaction\/[A-Za-z0-9_-]+\?hinted=1$/);
    expect(first.body).toContain('data-login-hint="Someone@Example.org"');
    // Hostile text stays a field value.
    const hostile = await stranger.follow('/signin?login_hint=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E');
    expect(hostile.body).toContain('data-login-hint="&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;"');
    expect(hostile.body).not.toContain('<script>alert');

    const { browser, did, wallet } = await signedInBrowser();
    for (const hint of [did, wallet.address.toUpperCase()]) {
      const { url, verifier } = await pkceUrl(config, { login_hint: hint });
      const { callback } = await authorize(browser, url);
      const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's' });
      expect(tokens.claims()?.sub, hint).toBe(did);
    }
    const { url, verifier } = await pkceUrl(config, { login_hint: 'other@example.org' });
    const other = await browser.follow(url.href);
    const add = new URL(other.url);
    expect(add.pathname).toBe('/signin');
    expect(add.searchParams.get('add')).toBe('1');
    // The person stays with the account they have: the hint is not asked about again.
    const { callback } = await authorize(browser, new URL(add.searchParams.get('return_to') as string, LOCAL_ORIGIN));
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's' });
    expect(tokens.claims()?.sub).toBe(did);
  });

  it('steps up with a security key when an app demands or prefers one; without a key it is basic or refused; Cancel declines', async () => {
    const issued = await confidential();
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { host, browser, wallet } = await signedInBrowser();
    const essential = JSON.stringify({ id_token: { acr: { essential: true, values: [ACR_KEY] } } });

    const preferred = await pkceUrl(config, { acr_values: `${ACR_KEY} ${ACR_BASIC}` });
    const basic = await client.authorizationCodeGrant(config, (await authorize(browser, preferred.url)).callback, {
      pkceCodeVerifier: preferred.verifier,
      expectedState: 's',
    });
    expect(basic.claims()).toMatchObject({ acr: ACR_BASIC, amr: ['swk'] });
    const refused = await browser.follow((await pkceUrl(config, { claims: essential })).url.href);
    expect(new URL(refused.location as string).searchParams.get('error')).toBe('unmet_authentication_requirements');

    // The account gets a key.
    const authenticator = new SoftwareAuthenticator({ origin: LOCAL_ORIGIN });
    expect((await host.post('/api/auth/sudo', await host.prove(wallet, 'sudo'))).status).toBe(200);
    const started = await host.post('/api/auth/webauthn/register/options', {});
    const registered = await host.post('/api/auth/webauthn/register/verify', {
      challenge_token: started.body.challenge_token,
      response: authenticator.create(started.body.options),
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);

    for (const extra of [{ acr_values: ACR_KEY }, { claims: essential }]) {
      const { url } = await pkceUrl(config, extra);
      const hop = await browser.follow(url.href);
      const sudo = new URL(hop.url);
      expect(sudo.pathname, JSON.stringify(extra)).toBe('/sudo');
      expect(sudo.searchParams.get('require')).toBe('key');
      expect(hop.body).toContain('data-require="key"');
      const back = sudo.searchParams.get('return_to') as string;
      // Coming back without the key changes nothing; the page's Cancel declines.
      expect(new URL((await browser.follow(back)).url).pathname).toBe('/sudo');
      const cancelled = await browser.follow(`${back}?cancel=1`);
      expect(new URL(cancelled.location as string).searchParams.get('error')).toBe('access_denied');
    }

    const { url, verifier } = await pkceUrl(config, { claims: essential });
    const back = new URL((await browser.follow(url.href)).url).searchParams.get('return_to') as string;
    const options = await host.post('/api/auth/webauthn/assertion/options', { purpose: 'oidc' });
    const stepped = await host.post('/api/auth/webauthn/assertion/verify', {
      challenge_token: options.body.challenge_token,
      response: authenticator.get(options.body.options),
    });
    expect(stepped.status, JSON.stringify(stepped.body)).toBe(200);
    const { callback } = await authorize(browser, new URL(back, LOCAL_ORIGIN));
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's' });
    expect(tokens.claims()).toMatchObject({ acr: ACR_KEY, amr: ['swk', 'hwk', 'mfa'] });
    // The provider session is at the key level now: a preference goes straight through.
    const again = await pkceUrl(config, { acr_values: ACR_KEY });
    expect((await authorize(browser, again.url)).consent).toBeUndefined();
  });

  it('signs in the account the browser switched to when consent is answered after the switch', async () => {
    const issued = await confidential();
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { host, browser } = await signedInBrowser();
    const { url, verifier } = await pkceUrl(config, { scope: 'openid email' });
    const page = await browser.follow(url.href);
    expect(page.status).toBe(200);
    const switched = await host.signIn(newWallet(), { add: true });
    expect(switched.status).toBe(200);
    // Allow on the first account's page: the new account is signed in and asked for its own consent.
    const next = await browser.allow(page);
    expect(next.status, next.url).toBe(200);
    expect(next.url).toMatch(/\/oidc\/interaction\//);
    const callbackHop = await browser.allow(next);
    const tokens = await client.authorizationCodeGrant(config, new URL(callbackHop.location as string), {
      pkceCodeVerifier: verifier,
      expectedState: 's',
    });
    expect(tokens.claims()?.sub).toBe(switched.body.account.did_oc);
  });

  it('lets a Connect app register clients with its API key (RFC 7591) and manage only its own', async () => {
    const { host, browser, did } = await signedInBrowser();
    const created = await host.post('/api/connect/apps', { name: 'Forum' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const apiKey = created.body.api_key as string;
    const other = (await host.post('/api/connect/apps', { name: 'Other' })).body.api_key as string;
    const options = { execute: [client.allowInsecureRequests], [client.customFetch]: injectFetch(app) };

    // Without a key, or with a wrong one, nothing is registered.
    await expect(
      client.dynamicClientRegistration(new URL(LOCAL_ORIGIN), { redirect_uris: [REDIRECT] }, undefined, options),
    ).rejects.toMatchObject({ status: 401 });
    await expect(
      client.dynamicClientRegistration(new URL(LOCAL_ORIGIN), { redirect_uris: [REDIRECT] }, undefined, {
        ...options,
        initialAccessToken: `oc_live_${'A'.repeat(43)}`,
      }),
    ).rejects.toMatchObject({ status: 401 });

    const config = await client.dynamicClientRegistration(
      new URL(LOCAL_ORIGIN),
      // openid-client sends the secret in the body; a client authenticates only as it registered.
      {
        redirect_uris: [REDIRECT],
        client_name: 'Forum web',
        oc_owner_app: 'someone-else',
        token_endpoint_auth_method: 'client_secret_post',
      },
      undefined,
      { ...options, initialAccessToken: apiKey },
    );
    const metadata = config.clientMetadata();
    expect(metadata.client_id).toMatch(/^oc_[0-9a-f]{32}$/);
    expect(metadata.client_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stored = await harness.store.findOidcClient(metadata.client_id);
    expect(stored?.owner_app_id).toBe(created.body.app.id);
    expect(stored?.metadata).not.toContain(metadata.client_secret as string);

    // The registered client signs people in like any other.
    const { url, verifier } = await pkceUrl(config, { state: 'r' });
    const { callback } = await authorize(browser, url);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'r' });
    expect(tokens.claims()?.sub).toBe(did);

    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    const listed = await app.inject({ url: '/api/connect/oidc-clients', headers: bearer(apiKey) });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().clients.map((one: { client_id: string }) => one.client_id)).toEqual([metadata.client_id]);
    expect(listed.json().clients[0].metadata).not.toHaveProperty('client_secret');
    expect((await app.inject({ url: '/api/connect/oidc-clients', headers: bearer(other) })).json().clients).toEqual([]);
    expect((await app.inject({ url: '/api/connect/oidc-clients' })).statusCode).toBe(401);
    const path = `/api/connect/oidc-clients/${metadata.client_id}`;
    expect((await app.inject({ method: 'POST', url: `${path}/rotate-secret`, headers: bearer(other) })).statusCode).toBe(404);
    expect((await app.inject({ method: 'DELETE', url: path, headers: bearer(other) })).statusCode).toBe(404);

    const rotated = await app.inject({ method: 'POST', url: `${path}/rotate-secret`, headers: bearer(apiKey) });
    expect(rotated.statusCode).toBe(200);
    const secret = rotated.json().client_secret as string;
    // The old secret no longer authenticates the client; the new one does.
    await expect(client.tokenIntrospection(config, tokens.access_token)).rejects.toMatchObject({ status: 401 });
    const fresh = await discover(app, metadata.client_id, secret, { auth: 'post' });
    expect((await client.tokenIntrospection(fresh, tokens.access_token)).active).toBe(true);

    expect((await app.inject({ method: 'DELETE', url: path, headers: bearer(apiKey) })).statusCode).toBe(200);
    await expect(client.tokenIntrospection(fresh, tokens.access_token)).rejects.toMatchObject({ status: 401 });

    // Deleting the Connect app takes its clients with it.
    const second = await client.dynamicClientRegistration(
      new URL(LOCAL_ORIGIN),
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_post' },
      undefined,
      {
        ...options,
        initialAccessToken: apiKey,
      },
    );
    expect((await client.tokenIntrospection(second, 'unknown')).active).toBe(false);
    expect((await host.request('DELETE', `/api/connect/apps/${created.body.app.id}`)).status).toBe(200);
    await expect(client.tokenIntrospection(second, 'unknown')).rejects.toMatchObject({ status: 401 });
  });
  it('answers every endpoint discovery advertises, and runs every grant it lists, a pushed authorization request included', async () => {
    const doc = (await app.inject({ url: '/.well-known/openid-configuration' })).json() as Record<string, unknown>;
    const issued = await confidential();
    const basic = `Basic ${Buffer.from(`${issued.client_id}:${issued.client_secret}`).toString('base64')}`;
    const form = { 'content-type': 'application/x-www-form-urlencoded', authorization: basic };
    /** How each advertised endpoint is called, and the statuses an answer of the library (not a missing route) has. */
    const calls: Record<string, { method: 'GET' | 'POST'; headers?: Record<string, string>; payload?: string; statuses: number[] }> = {
      authorization_endpoint: { method: 'GET', statuses: [400] },
      token_endpoint: { method: 'POST', headers: form, payload: 'grant_type=authorization_code&code=x', statuses: [400] },
      userinfo_endpoint: { method: 'GET', statuses: [401] },
      jwks_uri: { method: 'GET', statuses: [200] },
      registration_endpoint: { method: 'POST', headers: { 'content-type': 'application/json' }, payload: '{}', statuses: [401] },
      revocation_endpoint: { method: 'POST', headers: form, payload: 'token=x', statuses: [200] },
      introspection_endpoint: { method: 'POST', headers: form, payload: 'token=x', statuses: [200] },
      end_session_endpoint: { method: 'GET', statuses: [200] },
      // This client is not registered for the device grant: the library's refusal (test/oidc-device.test.ts runs the grant).
      device_authorization_endpoint: { method: 'POST', headers: form, payload: 'scope=openid', statuses: [400] },
      pushed_authorization_request_endpoint: {
        method: 'POST',
        headers: form,
        payload: `client_id=${issued.client_id}&redirect_uri=${encodeURIComponent(REDIRECT)}&scope=openid&response_type=code`,
        statuses: [201],
      },
    };
    const advertised = Object.keys(doc).filter((key) => key.endsWith('_endpoint') || key === 'jwks_uri');
    expect(advertised.sort()).toEqual(Object.keys(calls).sort());
    for (const key of advertised) {
      const url = new URL(String(doc[key]));
      expect(url.origin, key).toBe(LOCAL_ORIGIN);
      const call = calls[key] as (typeof calls)[string];
      const reply = await app.inject({
        method: call.method,
        url: url.pathname,
        ...(call.headers === undefined ? {} : { headers: call.headers }),
        ...(call.payload === undefined ? {} : { payload: call.payload }),
      });
      expect(call.statuses, `${key} ${url.pathname}: ${reply.statusCode} ${reply.body.slice(0, 300)}`).toContain(reply.statusCode);
    }

    // client_credentials above; authorization_code, its request pushed first, then refresh_token; the device
    // grant (RFC 8628) in test/oidc-device.test.ts.
    expect(doc.grant_types_supported).toEqual([
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:device_code',
    ]);
    const machine = await registry.clients.create({ client_name: 'Discovery job', redirect_uris: [], machine: true });
    const machineToken = await client.clientCredentialsGrant(await discover(app, machine.client_id, machine.client_secret), {});
    expect(machineToken.token_type.toLowerCase()).toBe('bearer');
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { did, browser } = await signedInBrowser();
    const { params, verifier } = await pkceParams({ scope: 'openid offline_access', prompt: 'consent', state: 'pushed' });
    const pushed = await client.buildAuthorizationUrlWithPAR(config, params);
    expect([...pushed.searchParams.keys()].sort()).toEqual(['client_id', 'request_uri']);
    const { callback } = await authorize(browser, pushed);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'pushed' });
    expect(tokens.claims()?.sub).toBe(did);
    // No max_age was asked: the ID token still says when the person signed in.
    expect(tokens.claims()?.auth_time).toBeTypeOf('number');
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string);
    expect(refreshed.claims()?.auth_time).toBe(tokens.claims()?.auth_time);
    // A pushed request is used once.
    const again = await browser.follow(pushed.href);
    expect(again.status).toBe(400);
    expect(again.location).toBeUndefined();
    expect(again.body).toContain('invalid_request_uri');
  });

  it('holds a client registered to require pushed requests to them, and every client to auth_time, whatever it registered', async () => {
    const issued = await confidential({ require_pushed_authorization_requests: true });
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { browser } = await signedInBrowser();
    const { params, verifier } = await pkceParams({ state: 'plain' });
    const plain = await browser.follow(client.buildAuthorizationUrl(config, params).href);
    const refused = new URL(plain.location as string);
    expect(refused.searchParams.get('error')).toBe('invalid_request');
    expect(refused.searchParams.get('error_description')).toMatch(/pushed authorization request/i);
    const { callback } = await authorize(browser, await client.buildAuthorizationUrlWithPAR(config, params));
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'plain' });
    expect(tokens.claims()?.auth_time).toBeTypeOf('number');

    // A client that registered require_auth_time false gets it all the same.
    const own = await registry.clients.create({ client_name: 'No auth time', redirect_uris: [REDIRECT] });
    const stored = await harness.store.findOidcClient(own.client_id);
    await harness.store.updateOidcClient(
      own.client_id,
      { metadata: JSON.stringify({ ...JSON.parse(stored?.metadata ?? '{}'), require_auth_time: false }) },
      harness.clock.ms,
    );
    const ownConfig = await discover(app, own.client_id, own.client_secret);
    const second = await pkceParams({ state: 'own' });
    const back = await authorize(browser, client.buildAuthorizationUrl(ownConfig, second.params));
    const ownTokens = await client.authorizationCodeGrant(ownConfig, back.callback, {
      pkceCodeVerifier: second.verifier,
      expectedState: 'own',
    });
    expect(ownTokens.claims()?.auth_time).toBeTypeOf('number');
  });
  it("answers a browser app's CORS preflight for its redirect URIs' origins alone, and the calls themselves for its own client", async () => {
    const spa = 'https://spa.example';
    const issued = await registry.clients.create({
      client_name: 'Single page app',
      redirect_uris: [`${spa}/callback`],
      token_endpoint_auth_method: 'none',
    });
    const preflight = (url: string, origin: string, method = 'POST') =>
      app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, dpop' },
      });
    for (const [url, method] of [
      ['/oidc/token', 'POST'],
      ['/oidc/userinfo', 'GET'],
      ['/oidc/token/revocation', 'POST'],
      ['/.well-known/openid-configuration', 'GET'],
      ['/oidc/jwks', 'GET'],
    ] as const) {
      const allowed = await preflight(url, spa, method);
      expect(allowed.statusCode, url).toBe(204);
      expect(allowed.headers['access-control-allow-origin'], url).toBe(spa);
      expect(String(allowed.headers['access-control-allow-methods']), url).toContain(method);
      expect(String(allowed.headers['access-control-allow-headers']).toLowerCase(), url).toContain('authorization');
      expect(allowed.headers['access-control-max-age'], url).toBe('3600');
      expect(String(allowed.headers.vary), url).toContain('Origin');
      // A site no client redirects to learns nothing from the client-bound endpoints; the public reads answer anyone.
      const stranger = await preflight(url, 'https://evil.example', method);
      expect(stranger.statusCode, url).toBe(204);
      expect(stranger.headers['access-control-allow-origin'], url).toBe(
        url.startsWith('/oidc/jwks') || url.startsWith('/.well-known') ? 'https://evil.example' : undefined,
      );
      expect(String(stranger.headers.vary), url).toContain('Origin');
    }
    // An OPTIONS that is no preflight is no error.
    expect((await app.inject({ method: 'OPTIONS', url: '/oidc/userinfo', headers: { origin: spa } })).statusCode).toBeLessThan(500);

    // The calls: userinfo and revocation answer the client's own origin, and refuse another client's origin.
    const config = await discover(app, issued.client_id);
    const { browser } = await signedInBrowser();
    const { url, verifier } = await pkceUrl(config, { redirect_uri: `${spa}/callback`, scope: 'openid bitcoin' });
    const { callback } = await authorize(browser, url);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 's' });
    const userinfo = await app.inject({ url: '/oidc/userinfo', headers: { origin: spa, authorization: `Bearer ${tokens.access_token}` } });
    expect(userinfo.statusCode).toBe(200);
    expect(userinfo.headers['access-control-allow-origin']).toBe(spa);
    const elsewhere = await confidential();
    const foreign = await app.inject({
      url: '/oidc/userinfo',
      headers: { origin: new URL(REDIRECT).origin, authorization: `Bearer ${tokens.access_token}` },
    });
    expect(elsewhere.client_id).not.toBe(issued.client_id);
    expect(foreign.statusCode).toBe(400);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    const revoked = await app.inject({
      method: 'POST',
      url: '/oidc/token/revocation',
      headers: { origin: spa, 'content-type': 'application/x-www-form-urlencoded' },
      payload: `client_id=${issued.client_id}&token=${tokens.access_token}`,
    });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.headers['access-control-allow-origin']).toBe(spa);
    const after = await app.inject({ url: '/oidc/userinfo', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(after.statusCode).toBe(401);
  });
  it('lets a registered client read, update and delete its own registration with its registration access token (RFC 7592)', async () => {
    const { host, browser } = await signedInBrowser();
    const apiKey = (await host.post('/api/connect/apps', { name: 'Self-managed' })).body.api_key as string;
    const register = (body: Record<string, unknown>) =>
      app.inject({
        method: 'POST',
        url: '/oidc/register',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        payload: body,
      });
    const first = await register({
      redirect_uris: [REDIRECT],
      client_name: 'Kiosk',
      token_endpoint_auth_method: 'client_secret_post',
      oc_api_scopes: ['write:invoices'],
    });
    expect(first.statusCode, first.body).toBe(201);
    // Which APIs a client reaches is the operator's to say, not the registering app's.
    expect(first.json()).not.toHaveProperty('oc_api_scopes');
    const issued = first.json() as Record<string, string>;
    expect(issued.registration_access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const uri = new URL(issued.registration_client_uri as string);
    expect(uri.href).toBe(`${LOCAL_ORIGIN}/oidc/register/${issued.client_id}`);
    const owner = (await harness.store.findOidcClient(issued.client_id as string))?.owner_app_id;
    const other = (await register({ redirect_uris: [REDIRECT] })).json() as Record<string, string>;
    const manage = (method: 'GET' | 'PUT' | 'DELETE', token: string, payload?: Record<string, unknown>) =>
      app.inject({
        method,
        url: uri.pathname,
        headers: { authorization: `Bearer ${token}`, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(payload === undefined ? {} : { payload }),
      });

    // Read: its metadata, never the stored hash of its secret.
    const read = await manage('GET', issued.registration_access_token as string);
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({ client_id: issued.client_id, client_name: 'Kiosk', redirect_uris: [REDIRECT] });
    expect(read.json()).not.toHaveProperty('client_secret');
    expect(read.body).not.toContain('sha256:');
    // Another client's token, or none, reads nothing.
    expect((await manage('GET', other.registration_access_token as string)).statusCode).toBe(401);
    expect((await app.inject({ url: uri.pathname })).statusCode).toBe(401);

    // Update: a new name and redirect URI; the app stays the key's, the secret stays, the token rotates.
    const later = 'https://app.example/later';
    const updated = await manage('PUT', issued.registration_access_token as string, {
      client_id: issued.client_id,
      redirect_uris: [REDIRECT, later],
      client_name: 'Kiosk 2',
      token_endpoint_auth_method: 'client_secret_post',
      oc_owner_app: 'someone-else',
    });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ client_name: 'Kiosk 2', redirect_uris: [REDIRECT, later] });
    expect(updated.json()).not.toHaveProperty('client_secret');
    const rotated = updated.json().registration_access_token as string;
    expect(rotated).not.toBe(issued.registration_access_token);
    expect((await manage('GET', issued.registration_access_token as string)).statusCode).toBe(401);
    expect((await harness.store.findOidcClient(issued.client_id as string))?.owner_app_id).toBe(owner);
    const config = await discover(app, issued.client_id as string, issued.client_secret, { auth: 'post' });
    const { url, verifier } = await pkceUrl(config, { redirect_uri: later, state: 'l' });
    const { callback } = await authorize(browser, url);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'l' });
    // A client that sends its secret back (its registration answer, edited) is taken at its word when the secret is right.
    // RFC 7592 §2.2: the answer's registration members and times are not sent back.
    const {
      registration_access_token: _token,
      registration_client_uri: _uri,
      client_secret_expires_at: _expires,
      client_id_issued_at: _issued,
      ...registration
    } = issued;
    const withSecret = await manage('PUT', rotated, { ...registration, client_name: 'Kiosk 3', redirect_uris: [REDIRECT, later] });
    expect(withSecret.statusCode, withSecret.body).toBe(200);
    expect(withSecret.json()).toMatchObject({ client_name: 'Kiosk 3' });
    expect(withSecret.json()).not.toHaveProperty('client_secret');
    const current = withSecret.json().registration_access_token as string;
    const wrongSecret = await manage('PUT', current, { ...registration, client_secret: 'not-the-secret' });
    expect(wrongSecret.statusCode).toBe(400);
    expect(wrongSecret.json().error_description).toMatch(/client_secret does not match/);
    expect((await discover(app, issued.client_id as string, issued.client_secret, { auth: 'post' })).clientMetadata().client_id).toBe(
      issued.client_id,
    );
    // A refused change changes nothing.
    const refused = await manage('PUT', current, { client_id: issued.client_id, redirect_uris: ['javascript:alert(1)'] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatch(/^invalid_(redirect_uri|client_metadata)$/);

    // Delete: the client goes, its tokens stop, its token manages nothing more.
    expect((await manage('DELETE', current)).statusCode).toBe(204);
    expect(await harness.store.findOidcClient(issued.client_id as string)).toBeNull();
    const info = await app.inject({ url: '/oidc/userinfo', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(info.statusCode).toBe(401);
    expect((await manage('GET', current)).statusCode).toBe(401);
  });
  it('issues JWT access tokens (RFC 9068) for a registered API, to a person through an app and to a machine client', async () => {
    const api = 'https://invoices.example/api';
    await registry.resources.add({ uri: api, name: 'Invoices', scopes: ['read:invoices', 'write:invoices'] });
    const keys = createLocalJWKSet((await app.inject({ url: '/oidc/jwks' })).json());
    const checked = async (token: string) => {
      expect(decodeProtectedHeader(token)).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
      return (await jwtVerify(token, keys, { issuer: LOCAL_ORIGIN, audience: api, typ: 'at+jwt' })).payload;
    };

    // A person, through an app: the token names the account, the app, the scope granted, when and how the person signed in.
    const issued = await confidential({ api_scopes: ['read:invoices'] });
    const config = await discover(app, issued.client_id, issued.client_secret);
    const { did, browser } = await signedInBrowser();
    const { url, verifier } = await pkceUrl(config, { scope: 'openid read:invoices', resource: api, state: 'api' });
    const { callback, consent } = await authorize(browser, url);
    // The consent names the API by its name, with the scopes asked of it.
    expect(consent?.body).toContain('Use <strong>Invoices</strong> for you, with these permissions: read:invoices');
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'api' });
    const person = await checked(tokens.access_token);
    expect(person).toMatchObject({ sub: did, client_id: issued.client_id, scope: 'read:invoices', acr: ACR_BASIC });
    expect(person.jti).toBeTypeOf('string');
    expect((person.exp as number) - (person.iat as number)).toBe(600);
    expect(person.auth_time).toBe(tokens.claims()?.auth_time);
    // The token is the API's, not the provider's: userinfo does not take it.
    expect((await app.inject({ url: '/oidc/userinfo', headers: { authorization: `Bearer ${tokens.access_token}` } })).statusCode).not.toBe(
      200,
    );

    // A machine client: the client_credentials grant, no person, no refresh token; a scope outside its own is refused.
    const machine = await registry.clients.create({
      client_name: 'Billing job',
      redirect_uris: [],
      machine: true,
      api_scopes: ['read:invoices'],
    });
    const machineConfig = await discover(app, machine.client_id, machine.client_secret);
    const granted = await client.clientCredentialsGrant(machineConfig, { scope: 'read:invoices', resource: api });
    expect(granted.refresh_token).toBeUndefined();
    const service = await checked(granted.access_token);
    expect(service).toMatchObject({ sub: machine.client_id, client_id: machine.client_id, scope: 'read:invoices' });
    expect(service).not.toHaveProperty('auth_time');
    await expect(client.clientCredentialsGrant(machineConfig, { scope: 'write:invoices', resource: api })).rejects.toMatchObject({
      error: 'invalid_scope',
    });
    // An API nobody registered is no target; without a resource the token stays opaque, and introspection knows it.
    await expect(
      client.clientCredentialsGrant(machineConfig, { scope: 'read:invoices', resource: 'https://nowhere.example/' }),
    ).rejects.toMatchObject({
      error: 'invalid_target',
    });
    const opaque = await client.clientCredentialsGrant(machineConfig, {});
    expect(opaque.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await client.tokenIntrospection(machineConfig, opaque.access_token)).active).toBe(true);
    // A person's app cannot use the machine grant.
    await expect(client.clientCredentialsGrant(config, { resource: api })).rejects.toMatchObject({
      error: 'invalid_request',
      error_description: 'requested grant type is not allowed for this client',
    });
    // A client the operator allowed no scope of the API is no client of it.
    const stranger = await confidential({ redirect_uris: [REDIRECT] });
    const strangerConfig = await discover(app, stranger.client_id, stranger.client_secret);
    const denied = await pkceUrl(strangerConfig, { scope: 'openid read:invoices', resource: api, state: 'x' });
    const hop = await browser.follow(denied.url.href);
    expect(new URL(hop.location as string).searchParams.get('error')).toBe('invalid_target');
  });
}

await forEachEngine('the OpenID provider', providerSuite);
