/**
 * What oc-host's OpenID provider refuses (docs/protocol.md §8), driven by
 * `openid-client` and by raw requests through the app: a redirect URI that
 * was not registered gets an error page and no redirect; an authorization
 * code works once, for its own client, with its own PKCE verifier, within
 * its lifetime, and using it twice revokes what the first use issued; an
 * access token ends with its lifetime; an unsigned or key-confused ID token
 * is no id_token_hint; an unregistered post_logout_redirect_uri gets no
 * redirect; the consent page cannot be framed; and malformed or hostile
 * requests to the token endpoint get an OAuth error, never a 500.
 *
 * A replayed refresh token is test/oidc-provider.test.ts's. The provider
 * library reads the wall clock (`Date.now`), so the expiry tests move it
 * with vitest's fake timers for `Date` alone, and the host's clock with it.
 */
import { createHmac, createPublicKey } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import type { IssuedClient, OidcService } from '../src/features/oidc/index.js';
import { newWallet } from './support/auth-client.js';
import { AuthHarness, forEachEngine, LOCAL_ORIGIN } from './support/auth-harness.js';
import { HOUR, SECOND, TestClock } from './support/clock.js';
import { discover, operatorRegistry, ProviderBrowser, type Hop } from './support/oidc-rp.js';

const REDIRECT = 'https://app.example/callback';
const LOGOUT_REDIRECT = 'https://app.example/bye';

function negativeSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let app: FastifyInstance;
  let registry: OidcService;

  beforeAll(async () => {
    // The provider library reads the wall clock: the host's clock starts there too.
    harness = await AuthHarness.open(engine, new TestClock(Date.now()));
    app = await harness.app();
    registry = await operatorRegistry(harness.store, LOCAL_ORIGIN, harness.clock.now);
  });
  afterAll(async () => {
    await harness.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** Moves the wall clock the provider reads, and the host's, by `ms`. */
  function advance(ms: number): void {
    if (!vi.isFakeTimers()) vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    vi.setSystemTime(Date.now() + ms);
    harness.clock.set(Date.now());
  }

  async function registered(extra: Partial<Parameters<OidcService['clients']['create']>[0]> = {}): Promise<{
    issued: IssuedClient;
    config: client.Configuration;
  }> {
    const issued = await registry.clients.create({
      client_name: 'Negative app',
      redirect_uris: [REDIRECT],
      post_logout_redirect_uris: [LOGOUT_REDIRECT],
      ...extra,
    });
    return { issued, config: await discover(app, issued.client_id, issued.client_secret) };
  }

  async function signedInBrowser(): Promise<ProviderBrowser> {
    const host = harness.browser(app);
    const reply = await host.signIn(newWallet());
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return new ProviderBrowser(app, host);
  }

  /** An authorization through consent to the redirect URI: the callback URL and its PKCE verifier. */
  async function codeFor(
    config: client.Configuration,
    browser?: ProviderBrowser,
    scope = 'openid offline_access',
  ): Promise<{ callback: URL; verifier: string; browser: ProviderBrowser }> {
    const signedIn = browser ?? (await signedInBrowser());
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope,
      prompt: 'consent',
      state: 'st',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    let hop: Hop = await signedIn.follow(url.href);
    if (hop.status === 200 && hop.url.includes('/oidc/interaction/')) hop = await signedIn.allow(hop);
    expect(hop.location, `${hop.status} ${hop.url}\n${hop.body.slice(0, 400)}`).toMatch(/^https:\/\/app\.example\/callback\?/);
    return { callback: new URL(hop.location as string), verifier, browser: signedIn };
  }

  /** A raw token request: its status and JSON body. */
  async function tokenRequest(
    payload: string,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: Record<string, unknown>; type: string }> {
    const reply = await app.inject({
      method: 'POST',
      url: '/oidc/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload,
    });
    let body: Record<string, unknown> = {};
    try {
      body = reply.json();
    } catch {
      body = { unparsed: reply.body.slice(0, 200) };
    }
    return { status: reply.statusCode, body, type: String(reply.headers['content-type'] ?? '') };
  }

  function basic(issued: IssuedClient): Record<string, string> {
    const pair = `${encodeURIComponent(issued.client_id)}:${encodeURIComponent(issued.client_secret as string)}`;
    return { authorization: `Basic ${Buffer.from(pair).toString('base64')}` };
  }

  it('answers a redirect URI that was not registered with an error page, never a redirect to it', async () => {
    const { config } = await registered();
    const browser = await signedInBrowser();
    for (const redirect of [
      'https://evil.example/callback',
      'https://app.example/callback/extra',
      'https://app.example/callback?next=https://evil.example',
      'https://app.example/Callback',
      'http://app.example/callback',
    ]) {
      const url = client.buildAuthorizationUrl(config, { redirect_uri: redirect, scope: 'openid', state: 'st' });
      const hop = await browser.follow(url.href);
      expect(hop.status, redirect).toBe(400);
      expect(hop.location, redirect).toBeUndefined();
      expect(hop.headers['content-type']).toMatch(/^text\/html/);
      expect(hop.body).not.toContain('evil.example');
    }
  });

  it('takes an authorization code once: a second exchange is invalid_grant and revokes the tokens of the first', async () => {
    const { issued, config } = await registered();
    const { callback, verifier } = await codeFor(config);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'st' });
    expect(tokens.refresh_token).toBeDefined();
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(true);
    const again = await tokenRequest(
      new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code') as string,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      }).toString(),
      basic(issued),
    );
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    expect((await client.tokenIntrospection(config, tokens.refresh_token as string)).active).toBe(false);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it("refuses a code at another client's token request, even from a client with the same redirect URI", async () => {
    const first = await registered();
    const second = await registered();
    const { callback, verifier } = await codeFor(first.config);
    await expect(
      client.authorizationCodeGrant(second.config, callback, { pkceCodeVerifier: verifier, expectedState: 'st' }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('refuses a code with the wrong PKCE verifier, or with none', async () => {
    const { issued, config } = await registered();
    const { callback } = await codeFor(config);
    const code = callback.searchParams.get('code') as string;
    const wrong = await tokenRequest(
      new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: REDIRECT,
        code_verifier: client.randomPKCECodeVerifier(),
      }).toString(),
      basic(issued),
    );
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const { callback: other } = await codeFor(config);
    const none = await tokenRequest(
      new URLSearchParams({
        grant_type: 'authorization_code',
        code: other.searchParams.get('code') as string,
        redirect_uri: REDIRECT,
      }).toString(),
      basic(issued),
    );
    expect(none).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('refuses a code past its 60 s and an access token past its hour', async () => {
    const { config } = await registered();
    const { callback, verifier, browser } = await codeFor(config);
    advance(61 * SECOND);
    await expect(
      client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'st' }),
    ).rejects.toMatchObject({ error: 'invalid_grant' });

    const fresh = await codeFor(config, browser);
    const tokens = await client.authorizationCodeGrant(config, fresh.callback, { pkceCodeVerifier: fresh.verifier, expectedState: 'st' });
    const sub = tokens.claims()?.sub as string;
    expect((await client.fetchUserInfo(config, tokens.access_token, sub)).sub).toBe(sub);
    advance(HOUR + SECOND);
    expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
    const userinfo = await app.inject({ url: '/oidc/userinfo', headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(userinfo.statusCode).toBe(401);
    expect(userinfo.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('refuses an unsigned ID token and one signed HS256 with the RS256 public key as id_token_hint at end-session', async () => {
    const { issued, config } = await registered();
    const { callback, verifier, browser } = await codeFor(config);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: 'st' });
    const genuine = tokens.id_token as string;
    const [, payload] = genuine.split('.') as [string, string];
    const rsa = registry.keys().find((key) => key.alg === 'RS256');
    expect(rsa).toBeDefined();
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = rsa as unknown as Record<string, string>;
    const publicPem = createPublicKey({ key: publicJwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
    const segment = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    const unsigned = `${segment({ alg: 'none', typ: 'JWT' })}.${payload}.`;
    const confusedInput = `${segment({ alg: 'HS256', typ: 'JWT', kid: (rsa as { kid?: string }).kid })}.${payload}`;
    const confused = `${confusedInput}.${createHmac('sha256', publicPem).update(confusedInput).digest('base64url')}`;
    const confusedJwk = `${confusedInput}.${createHmac('sha256', JSON.stringify(publicJwk)).update(confusedInput).digest('base64url')}`;
    for (const [name, hint] of [
      ['alg none', unsigned],
      ['HS256 with the PEM public key', confused],
      ['HS256 with the JWK public key', confusedJwk],
    ] as const) {
      const url = client.buildEndSessionUrl(config, { id_token_hint: hint, post_logout_redirect_uri: LOGOUT_REDIRECT });
      const hop = await browser.follow(url.href);
      expect(hop.status, name).toBe(400);
      expect(hop.location, name).toBeUndefined();
      expect(hop.body, name).not.toContain('op.logoutForm');
    }
    // The genuine token is taken: the refusals above were the forgeries'.
    const genuineHop = await browser.follow(
      client.buildEndSessionUrl(config, { id_token_hint: genuine, post_logout_redirect_uri: LOGOUT_REDIRECT }).href,
    );
    expect(genuineHop.status).toBe(200);
    expect(genuineHop.body).toContain('op.logoutForm');
    expect(issued.client_id).toMatch(/^oc_/);
  });

  it('answers an unregistered post_logout_redirect_uri with an error page and no redirect', async () => {
    const { issued, config } = await registered();
    const browser = await signedInBrowser();
    for (const target of [
      'https://evil.example/',
      'https://app.example/bye/../evil',
      'https://app.example/bye?next=https://evil.example',
      'https://app.example.evil.example/bye',
      'javascript:alert(1)',
    ]) {
      const hop = await browser.follow(
        client.buildEndSessionUrl(config, { client_id: issued.client_id, post_logout_redirect_uri: target }).href,
      );
      expect(hop.status, target).toBe(400);
      expect(hop.location, target).toBeUndefined();
    }
    // Without a client to register it, the return address is dropped: signing out ends on the host's own page
    // (with no provider session to end, the library submits its own confirmation).
    const anonymous = await browser.follow(`/oidc/session/end?post_logout_redirect_uri=${encodeURIComponent(LOGOUT_REDIRECT)}`);
    expect(anonymous.status).toBe(200);
    expect(new URL(anonymous.url).pathname).toBe('/oidc/session/end/success');
  });

  it('serves the consent page so that no other site can frame it', async () => {
    const { config } = await registered();
    const browser = await signedInBrowser();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', state: 'st' });
    const hop = await browser.follow(url.href);
    expect(hop.status).toBe(200);
    expect(hop.url).toContain('/oidc/interaction/');
    const csp = String(hop.headers['content-security-policy']);
    expect(csp.split(';').map((directive) => directive.trim())).toContain("frame-ancestors 'none'");
    const frameOptions = hop.headers['x-frame-options'];
    if (frameOptions !== undefined) expect(String(frameOptions).toUpperCase()).toBe('DENY');
    expect(hop.headers['cache-control']).toBe('no-store');
  });

  it('answers malformed and hostile token requests with an OAuth error, never a 500', async () => {
    const { issued } = await registered();
    const auth = basic(issued);
    const cases: ReadonlyArray<readonly [string, string, Record<string, string>, number, string]> = [
      ['unknown grant_type', 'grant_type=urn:example:nothing', auth, 400, 'unsupported_grant_type'],
      ['no grant_type', 'code=abc', auth, 400, 'invalid_request'],
      // The library's answer (RFC 6749 §5.2 would also allow invalid_client).
      [
        'no client authentication',
        'grant_type=authorization_code&code=abc&redirect_uri=https%3A%2F%2Fapp.example%2Fcallback',
        {},
        400,
        'invalid_request',
      ],
      ['a wrong secret', 'grant_type=authorization_code&code=abc', basic({ ...issued, client_secret: 'wrong' }), 401, 'invalid_client'],
      [
        'a Basic header that is not base64',
        'grant_type=authorization_code&code=abc',
        { authorization: 'Basic !!!' },
        400,
        'invalid_request',
      ],
      [
        'two ways of client authentication',
        `grant_type=authorization_code&code=abc&client_id=${issued.client_id}&client_secret=x`,
        auth,
        400,
        'invalid_request',
      ],
      ['a malformed body', 'grant_type=%ZZ&&&==code', auth, 400, 'unsupported_grant_type'],
      ['a repeated parameter', 'grant_type=authorization_code&grant_type=refresh_token&code=abc', auth, 400, 'invalid_request'],
      [
        'an unknown code',
        'grant_type=authorization_code&code=abc&redirect_uri=https%3A%2F%2Fapp.example%2Fcallback',
        auth,
        400,
        'invalid_grant',
      ],
      ['a huge code', `grant_type=authorization_code&code=${'a'.repeat(40_000)}&redirect_uri=x`, auth, 400, 'invalid_grant'],
    ];
    for (const [name, payload, headers, status, error] of cases) {
      const reply = await tokenRequest(payload, headers);
      expect({ name, status: reply.status, error: reply.body.error }).toEqual({ name, status, error });
      expect(reply.type, name).toMatch(/^application\/json/);
    }
    for (const [name, headers, payload] of [
      ['a JSON body', { 'content-type': 'application/json' }, '{"grant_type":'],
      ['a text body', { 'content-type': 'text/plain' }, 'grant_type=authorization_code'],
      ['no body', {}, ''],
      ['a huge body', {}, `grant_type=authorization_code&code=${'a'.repeat(2_000_000)}`],
    ] as const) {
      const reply = await tokenRequest(payload, { ...auth, ...headers });
      expect(reply.status, `${name}: ${JSON.stringify(reply.body)}`).toBeGreaterThanOrEqual(400);
      expect(reply.status, `${name}: ${JSON.stringify(reply.body)}`).toBeLessThan(500);
      expect(typeof reply.body.error, name).toBe('string');
    }
  });

  it('answers hostile input on every endpoint of the provider without a 500 or a stack trace', async () => {
    const { issued } = await registered();
    const auth = basic(issued);
    const huge = 'x'.repeat(20_000);
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const requests: ReadonlyArray<{ method: 'GET' | 'POST'; url: string; headers?: Record<string, string>; payload?: string }> = [
      { method: 'GET', url: `/oidc/auth?client_id=${huge}&response_type=code&scope=openid&redirect_uri=${REDIRECT}` },
      {
        method: 'GET',
        url: `/oidc/auth?client_id=${issued.client_id}&response_type=code&scope=openid&redirect_uri=${REDIRECT}&state=${huge}`,
      },
      { method: 'GET', url: '/oidc/auth?client_id=%ZZ&response_type=token' },
      { method: 'GET', url: `/oidc/auth?client_id=${issued.client_id}&request=not.a.jwt` },
      { method: 'POST', url: '/oidc/auth', headers: { ...form, origin: LOCAL_ORIGIN }, payload: '%%%' },
      { method: 'GET', url: '/oidc/auth/not-a-uid' },
      { method: 'GET', url: '/oidc/interaction/not-a-uid' },
      { method: 'POST', url: '/oidc/interaction/not-a-uid/confirm', headers: { ...form, origin: LOCAL_ORIGIN }, payload: '' },
      { method: 'POST', url: '/oidc/interaction/not-a-uid/abort', headers: { ...form, origin: LOCAL_ORIGIN }, payload: '' },
      { method: 'GET', url: '/oidc/userinfo', headers: { authorization: `Bearer ${huge}` } },
      { method: 'GET', url: '/oidc/userinfo', headers: { authorization: 'Bearer' } },
      { method: 'POST', url: '/oidc/userinfo', headers: form, payload: 'access_token=%ZZ' },
      { method: 'POST', url: '/oidc/token/revocation', headers: { ...form, ...auth }, payload: `token=${huge}` },
      { method: 'POST', url: '/oidc/token/revocation', headers: { ...form, ...auth }, payload: '' },
      { method: 'POST', url: '/oidc/token/introspection', headers: { ...form, ...auth }, payload: 'token=%ZZ&token_type_hint=nonsense' },
      { method: 'POST', url: '/oidc/token/introspection', headers: { 'content-type': 'application/json', ...auth }, payload: '[' },
      { method: 'GET', url: `/oidc/session/end?id_token_hint=${huge}` },
      { method: 'GET', url: '/oidc/session/end?id_token_hint=a.b.c&client_id=nobody' },
      { method: 'POST', url: '/oidc/session/end/confirm', headers: { ...form, origin: LOCAL_ORIGIN }, payload: 'xsrf=forged&logout=yes' },
      // PostgreSQL text cannot hold NUL: an id with one is found nowhere, not a database error.
      { method: 'GET', url: '/oidc/session/end/success?client_id=%00' },
      { method: 'GET', url: '/oidc/session/end?client_id=oc_%00' },
      { method: 'GET', url: `/oidc/auth?client_id=%00&response_type=code&scope=openid&redirect_uri=${REDIRECT}` },
      { method: 'GET', url: '/oidc/auth/%00' },
      { method: 'GET', url: '/oidc/interaction/%00' },
      {
        method: 'POST',
        url: '/oidc/token',
        headers: { ...form, ...auth },
        payload: `grant_type=authorization_code&code=%00&redirect_uri=${REDIRECT}`,
      },
      { method: 'POST', url: '/oidc/token', headers: { ...form, ...auth }, payload: 'grant_type=refresh_token&refresh_token=a%00b' },
      { method: 'POST', url: '/oidc/token', headers: form, payload: 'grant_type=authorization_code&code=x&client_id=%00&client_secret=y' },
      { method: 'POST', url: '/oidc/token/introspection', headers: { ...form, ...auth }, payload: 'token=%00' },
      { method: 'POST', url: '/oidc/token/revocation', headers: { ...form, ...auth }, payload: 'token=%00&token_type_hint=refresh_token' },
      { method: 'POST', url: '/oidc/userinfo', headers: form, payload: 'access_token=%00' },
      { method: 'POST', url: '/oidc/token', headers: { ...form, ...auth }, payload: `grant_type=refresh_token&refresh_token=${huge}` },
      { method: 'POST', url: '/oidc/token', headers: { ...form, ...auth }, payload: 'grant_type=client_credentials' },
      {
        method: 'POST',
        url: '/oidc/token',
        headers: form,
        payload: `client_id=${issued.client_id}&client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer&client_assertion=a.b.c&grant_type=authorization_code&code=x`,
      },
    ];
    for (const request of requests) {
      const reply = await app.inject(request);
      const name = `${request.method} ${request.url.slice(0, 80)}`;
      expect.soft(reply.statusCode, `${name}: ${reply.body.slice(0, 300)}`).toBeLessThan(500);
      expect(reply.body, name).not.toMatch(/\bat [A-Za-z.<>]+ \(|node_modules/);
    }
  });
}

await forEachEngine('the OpenID provider refuses', negativeSuite);
