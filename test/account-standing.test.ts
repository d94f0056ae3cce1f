/**
 * Whether an account may act (docs/protocol.md §2 "Disabling and deleting",
 * src/identity/session/standing.ts), played from the attacker's side on every engine:
 * once the operator holds an account, nothing is issued, refreshed or
 * answered for it at any door. Its OpenID refresh token, an unexchanged code
 * and its access token get nothing (token, userinfo, introspection); its
 * Connect API key registers no client and provisions no one, and its app's
 * clients bring nobody to a consent page; a session row or token that
 * outlived the account's standing is not accepted; and the ways in (wallet,
 * passkey, phone hand-off, provider, tab token) refuse it. Lifting the hold
 * brings back the key and the clients, not the tokens the hold ended.
 */
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { IssuedClient, OidcService } from '../src/features/oidc/index.js';
import { newWallet, type Reply, type Wallet } from './support/auth-client.js';
import { AuthHarness, expectError, forEachEngine, LOCAL_ORIGIN, type TimedBrowser } from './support/auth-harness.js';
import { TestClock } from './support/clock.js';
import { startGitHubFake, type GitHubFake } from './support/github-fake.js';
import { followRedirects } from './support/oidc-provider.js';
import { deviceForm, discover, operatorRegistry, ProviderBrowser, type Hop } from './support/oidc-rp.js';
import { SoftwareAuthenticator } from './support/webauthn-authenticator.js';

const REDIRECT = 'https://app.example/callback';

interface TokenReply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

function standingSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let app: FastifyInstance;
  let registry: OidcService;
  let github: GitHubFake;

  beforeAll(async () => {
    // The provider library reads the wall clock: the host's clock starts there too.
    harness = await AuthHarness.open(engine, new TestClock(Date.now()));
    github = await startGitHubFake({
      clientId: 'gh-client',
      clientSecret: 'gh-secret',
      redirectUri: `${LOCAL_ORIGIN}/api/auth/github/callback`,
    });
    app = await harness.app(
      { OAUTH_GITHUB_CLIENT_ID: 'gh-client', OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret' },
      { githubAuthBase: github.url, githubApiBase: github.url },
    );
    registry = await operatorRegistry(harness.store, LOCAL_ORIGIN, harness.clock.now);
  });
  afterAll(async () => {
    await harness.close();
    await github.close();
  });

  function ok(reply: Reply): Reply {
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply;
  }

  async function signedIn(wallet: Wallet = newWallet(), browser: TimedBrowser = harness.browser(app)) {
    const reply = ok(await browser.signIn(wallet));
    return { browser, wallet, did: reply.body.account.did_oc as string, id: reply.body.account.id as string };
  }

  /** The operator's `oc-host accounts disable` / `enable`: the store's transaction. */
  async function hold(accountId: string, held: boolean): Promise<void> {
    expect(await harness.store.setAccountDisabled(accountId, held, harness.clock.ms)).toMatchObject({ changed: true });
  }

  /** An authorization through consent (when asked) to the redirect URI: the callback and its PKCE verifier. */
  async function codeFor(
    config: client.Configuration,
    browser: ProviderBrowser,
    options: { scope?: string; prompt?: string } = {},
  ): Promise<{ callback: URL; verifier: string; consent: boolean }> {
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: options.scope ?? 'openid profile offline_access',
      ...(options.prompt === undefined ? {} : { prompt: options.prompt }),
      state: 'st',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    let hop: Hop = await browser.follow(url.href);
    const consent = hop.status === 200 && hop.url.includes('/oidc/interaction/');
    if (consent) hop = await browser.allow(hop);
    expect(hop.location, `${hop.status} ${hop.url}\n${hop.body.slice(0, 400)}`).toMatch(/^https:\/\/app\.example\/callback\?/);
    return { callback: new URL(hop.location as string), verifier, consent };
  }

  function basic(clientId: string, secret: string): Record<string, string> {
    return { authorization: `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}` };
  }

  async function answer(
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string>,
    form?: Record<string, string>,
  ): Promise<TokenReply> {
    const reply = await app.inject({
      method,
      url,
      headers: form === undefined ? headers : { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
      ...(form === undefined ? {} : { payload: new URLSearchParams(form).toString() }),
    });
    let body: Record<string, unknown>;
    try {
      body = reply.json();
    } catch {
      body = { unparsed: reply.body.slice(0, 200) };
    }
    return { status: reply.statusCode, body };
  }

  /** The doors of the provider for one client's tokens. */
  function doors(clientId: string, secret: string) {
    const auth = basic(clientId, secret);
    return {
      refresh: (refreshToken: string) => answer('POST', '/oidc/token', auth, { grant_type: 'refresh_token', refresh_token: refreshToken }),
      exchange: (callback: URL, verifier: string) =>
        answer('POST', '/oidc/token', auth, {
          grant_type: 'authorization_code',
          code: callback.searchParams.get('code') as string,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        }),
      userinfo: (accessToken: string) => answer('GET', '/oidc/userinfo', { authorization: `Bearer ${accessToken}` }),
      introspect: async (token: string) => (await answer('POST', '/oidc/token/introspection', auth, { token })).body.active,
    };
  }

  /** An operator's client and a person signed in to it with `offline_access`: the tokens, and the browser. */
  async function signedInToClient() {
    const issued: IssuedClient = await registry.clients.create({ client_name: 'Standing app', redirect_uris: [REDIRECT] });
    const config = await discover(app, issued.client_id, issued.client_secret);
    const person = await signedIn();
    const browser = new ProviderBrowser(app, person.browser);
    const { callback, verifier } = await codeFor(config, browser, { prompt: 'consent' });
    const door = doors(issued.client_id, issued.client_secret as string);
    const tokens = await door.exchange(callback, verifier);
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    return {
      issued,
      config,
      person,
      browser,
      door,
      access: tokens.body.access_token as string,
      refresh: tokens.body.refresh_token as string,
    };
  }

  it('gives a held account nothing from the provider: no refresh, no code exchange, userinfo 401, introspection inactive', async () => {
    const { config, person, browser, door, access, refresh } = await signedInToClient();
    // A second code, issued before the hold and kept for later by whoever holds the browser's callback.
    const pending = await codeFor(config, browser);
    expect(await door.introspect(access)).toBe(true);

    await hold(person.id, true);
    expect(await door.refresh(refresh)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await door.refresh(refresh)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await door.exchange(pending.callback, pending.verifier)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await door.userinfo(access)).toMatchObject({ status: 401, body: { error: 'invalid_token' } });
    expect(await door.introspect(access)).toBe(false);
    expect(await door.introspect(refresh)).toBe(false);
    // Nothing new either: the browser's provider session signs nobody in while the account is held.
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      prompt: 'none',
      state: 'st',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const silent = await browser.follow(url.href);
    expect(new URL(silent.location as string).searchParams.get('error')).toBe('login_required');
  });

  it('asks the standing at the device grant: a code approved for an account another instance then held answers nothing, and answers once it stands again', async () => {
    const tv = await registry.clients.create({
      client_name: 'Standing TV',
      redirect_uris: [],
      device: true,
      token_endpoint_auth_method: 'none',
    });
    const asked = await answer('POST', '/oidc/device/auth', {}, { client_id: tv.client_id, scope: 'openid' });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    // The person approves on their signed-in browser: the code typed, the device confirmed, consent given.
    const person = await signedIn();
    const browser = new ProviderBrowser(app, person.browser);
    const typed = deviceForm((await browser.request('GET', '/oidc/device')).body);
    const question = await browser.request('POST', typed.action, { xsrf: typed.xsrf, user_code: asked.body.user_code as string });
    const confirm = deviceForm(question.body);
    const consent = await browser.follow(confirm.action, 'POST', {
      xsrf: confirm.xsrf,
      user_code: asked.body.user_code as string,
      confirm: 'yes',
    });
    expect((await browser.allow(consent)).body).toContain('Your device is signed in');

    // Held by a write no revocation went with (another instance's hold): only the standing check stands between.
    const raw = await harness.raw();
    await raw.db.updateTable('accounts').set({ disabled_at: harness.clock.ms }).where('id', '=', person.id).execute();
    const poll = {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: asked.body.device_code as string,
      client_id: tv.client_id,
    };
    expect(await answer('POST', '/oidc/token', {}, poll)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // The library uses the code before it asks for the account: refused once, it is spent, and the device starts again.
    await raw.db.updateTable('accounts').set({ disabled_at: null }).where('id', '=', person.id).execute();
    expect(await answer('POST', '/oidc/token', {}, poll)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('ends what the provider issued at the hold and keeps the consent: after the hold the old tokens stay dead, a new sign-in asks no consent', async () => {
    const { issued, config, person, door, access, refresh } = await signedInToClient();
    await hold(person.id, true);
    await hold(person.id, false);
    expect(await door.refresh(refresh)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await door.userinfo(access)).toMatchObject({ status: 401, body: { error: 'invalid_token' } });
    expect(await harness.store.findOidcConsent(person.did, issued.client_id)).not.toBeNull();

    const back = await signedIn(person.wallet);
    expect(back.did).toBe(person.did);
    const again = await codeFor(config, new ProviderBrowser(app, back.browser), { scope: 'openid profile' });
    expect(again.consent).toBe(false);
    const tokens = await door.exchange(again.callback, again.verifier);
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect(await door.userinfo(tokens.body.access_token as string)).toMatchObject({ status: 200, body: { sub: person.did } });
  });

  it('asks the standing on every use: a token whose account another instance held, deleted or merged away answers nothing, and answers again once that is undone', async () => {
    const { person, door, access, refresh: first } = await signedInToClient();
    const survivor = await signedIn();
    const raw = await harness.raw();
    let refresh = first;
    const states = [{ disabled_at: harness.clock.ms }, { deleted_at: harness.clock.ms }, { merged_into: survivor.id }] as const;
    for (const state of states) {
      await raw.db.updateTable('accounts').set(state).where('id', '=', person.id).execute();
      const what = Object.keys(state)[0];
      expect(await door.refresh(refresh), what).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
      expect(await door.userinfo(access), what).toMatchObject({ status: 401, body: { error: 'invalid_token' } });
      expect(await door.introspect(access), what).toBe(false);
      expect(await door.introspect(refresh), what).toBe(false);
      await raw.db
        .updateTable('accounts')
        .set({ disabled_at: null, deleted_at: null, merged_into: null })
        .where('id', '=', person.id)
        .execute();
      // A refused refresh used nothing up: the same token works once the account stands again.
      const rotated = await door.refresh(refresh);
      expect(rotated.status, `${what}: ${JSON.stringify(rotated.body)}`).toBe(200);
      refresh = rotated.body.refresh_token as string;
      expect(await door.userinfo(access), what).toMatchObject({ status: 200, body: { sub: person.did } });
    }
  });

  it('accepts no session cookie or tab token of an account whose standing ended without its rows being revoked', async () => {
    const person = await signedIn();
    const raw = await harness.raw();
    await raw.db.updateTable('accounts').set({ disabled_at: harness.clock.ms }).where('id', '=', person.id).execute();
    expectError(await person.browser.me(), 401, 'not_authenticated');
    expectError(await person.browser.post('/api/auth/tab', {}), 401, 'not_authenticated');
    await raw.db.updateTable('accounts').set({ disabled_at: null }).where('id', '=', person.id).execute();
    ok(await person.browser.me());
  });

  it("refuses a held owner's Connect API key (403 account_disabled) and its app's clients, and takes both back after the hold", async () => {
    const owner = await signedIn();
    const created = ok(await owner.browser.post('/api/connect/apps', { name: 'Held shop' }));
    const bearer = { authorization: `Bearer ${created.body.api_key as string}` };
    const register = () =>
      app.inject({
        method: 'POST',
        url: '/oidc/register',
        headers: { ...bearer, 'content-type': 'application/json' },
        payload: { redirect_uris: [REDIRECT], client_name: 'Held shop web', grant_types: ['authorization_code', 'refresh_token'] },
      });
    const provision = (userId: string) =>
      app.inject({ method: 'POST', url: '/api/connect/provision', headers: bearer, payload: { user_id: userId } });
    const registered = await register();
    expect(registered.statusCode, registered.body).toBe(201);
    const { client_id: clientId, client_secret: secret } = registered.json() as { client_id: string; client_secret: string };
    expect((await provision('before')).statusCode).toBe(200);
    // Someone signs in to the app's client before the hold.
    const config = await discover(app, clientId, secret);
    const visitor = await signedIn();
    const visitorBrowser = new ProviderBrowser(app, visitor.browser);
    const first = await codeFor(config, visitorBrowser, { prompt: 'consent' });
    expect(first.consent).toBe(true);
    const door = doors(clientId, secret);
    const tokens = await door.exchange(first.callback, first.verifier);
    expect(tokens.status).toBe(200);

    await hold(owner.id, true);
    const refused = await register();
    expect({ status: refused.statusCode, error: refused.json().error }).toEqual({ status: 403, error: 'account_disabled' });
    const provisioned = await provision('during');
    expect({ status: provisioned.statusCode, error: provisioned.json().error }).toEqual({ status: 403, error: 'account_disabled' });
    const listed = await app.inject({ url: '/api/connect/oidc-clients', headers: bearer });
    expect({ status: listed.statusCode, error: listed.json().error }).toEqual({ status: 403, error: 'account_disabled' });
    // The app's client brings nobody to a consent page: an OAuth error page, no redirect.
    const stranger = new ProviderBrowser(app, (await signedIn()).browser);
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid profile',
      prompt: 'consent',
      state: 'st',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const hop = await stranger.follow(url.href);
    expect(hop.status, hop.body.slice(0, 400)).toBe(400);
    expect(hop.location).toBeUndefined();
    expect(hop.url).not.toContain('/oidc/interaction/');
    expect(hop.body).toContain('invalid_client');
    // And what it holds for people answers nothing meanwhile.
    expect(await door.refresh(tokens.body.refresh_token as string)).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
    expect(await door.userinfo(tokens.body.access_token as string)).toMatchObject({ status: 401, body: { error: 'invalid_token' } });

    await hold(owner.id, false);
    expect((await provision('after')).statusCode).toBe(200);
    expect((await register()).statusCode).toBe(201);
    const refreshed = await door.refresh(tokens.body.refresh_token as string);
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect((await codeFor(config, stranger, { prompt: 'consent' })).consent).toBe(true);
  });

  it('refuses a held account at every way in: wallet, passkey, phone hand-off claim, provider, tab token', async () => {
    // A passkey, a roster that holds the account, and a GitHub identity, made before the hold.
    const person = await signedIn();
    ok(await person.browser.post('/api/auth/sudo', await person.browser.prove(person.wallet, 'sudo')));
    const passkey = new SoftwareAuthenticator({ origin: LOCAL_ORIGIN });
    const options = ok(await person.browser.post('/api/auth/webauthn/register/options', { sign_in: true }));
    ok(
      await person.browser.post('/api/auth/webauthn/register/verify', {
        challenge_token: options.body.challenge_token,
        response: passkey.create(options.body.options),
        label: 'Phone',
      }),
    );
    github.setUser({ id: engine === 'sqlite' ? 4242 : 4343, login: `held-${engine}`, name: 'Held', email: null, emails: [] });
    const githubBrowser = harness.browser(app);
    expect((await githubSignIn(githubBrowser)).status).toBe(302);
    const githubAccount = ok(await githubBrowser.me()).body.account.id as string;
    const roster = await signedIn();
    ok(await roster.browser.signIn(person.wallet, { add: true }));
    ok(await roster.browser.switchTo(roster.did));

    await hold(person.id, true);
    await hold(githubAccount, true);
    expectError(await harness.browser(app).signIn(person.wallet), 403, 'account_disabled');
    const passkeyOptions = ok(await harness.browser(app).post('/api/auth/passkey/options'));
    expectError(
      await harness.browser(app).post('/api/auth/passkey/signin', {
        challenge_token: passkeyOptions.body.challenge_token,
        response: passkey.get(passkeyOptions.body.options),
      }),
      403,
      'account_disabled',
    );
    const desktop = harness.browser(app);
    const started = ok(await desktop.post('/api/auth/handoff', {}));
    const phone = harness.browser(app);
    const proof = await phone.prove(person.wallet, 'login');
    ok(await phone.post('/api/auth/handoff/approve', { key: new URL(started.body.phone_url).hash.slice(1), ...proof }));
    // The desktop confirms the address the phone approved with (docs/protocol.md §6 "Signing in from a phone"): still refused.
    const asked = ok(await desktop.post('/api/auth/handoff/claim', { id: started.body.id, token: started.body.token }));
    expect(asked.body.status).toBe('approved');
    const claimed = await desktop.post('/api/auth/handoff/claim', {
      id: started.body.id,
      token: started.body.token,
      confirm_address: person.wallet.address,
    });
    expectError(claimed, 403, 'account_disabled');
    expect(desktop.cookie).toBeUndefined();
    const provider = await githubSignIn(harness.browser(app));
    expect(provider.headers.location).toBe('/signin?oauth_error=account_disabled');
    expectError(await roster.browser.post('/api/auth/tab', { did_oc: person.did }), 403, 'account_disabled');
    expectError(await roster.browser.switchTo(person.did), 403, 'account_disabled');
  });

  /** GitHub's sign-in through the fake, as a browser runs it: the callback's answer. */
  async function githubSignIn(browser: TimedBrowser, query = ''): Promise<Reply> {
    const start = await browser.get(`/api/auth/github/start${query}`);
    expect(start.status, JSON.stringify(start.body)).toBe(302);
    const state = /^oc_oauth=([^;]*);/.exec(start.setCookies.find((line) => line.startsWith('oc_oauth=')) ?? '')?.[1];
    const back = await followRedirects(start.headers.location as string, `${LOCAL_ORIGIN}/api/auth/github/callback`);
    const cookies = [
      browser.cookie ? `oc_session=${browser.cookie}` : '',
      browser.binding ? `__Host-oc_roster=${browser.binding}` : '',
      `oc_oauth=${state}`,
    ]
      .filter(Boolean)
      .join('; ');
    return browser.request('GET', `${back.pathname}${back.search}`, undefined, { cookie: cookies });
  }
}

await forEachEngine('account standing at every door', standingSuite);
