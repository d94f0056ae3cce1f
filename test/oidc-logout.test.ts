/**
 * Back-channel logout and RP-initiated logout (docs/protocol.md §8
 * "Logout"), with real parts on loopback: `openid-client` registers its
 * client with a `backchannel_logout_uri` on an HTTP server this test runs on
 * 127.0.0.1, signs in through the host, and every way the host ends a
 * session (sign-out, device sign-out, account deletion, merge, the app's own
 * end-session with "also sign out of oc-host") delivers a logout token that
 * `jose` verifies against the provider's published keys. Deliveries survive
 * a restart and are retried after a 500; no token reaches a client that was
 * not signed in through the session, nor for another account.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';
import { newWallet, type Wallet } from './support/auth-client.js';
import { AuthHarness, forEachEngine, LOCAL_ORIGIN, type TimedBrowser } from './support/auth-harness.js';
import { WallClock } from './support/clock.js';
import { injectFetch, ProviderBrowser } from './support/oidc-rp.js';

const REDIRECT = 'https://app.example/callback';
const EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** An app's back-channel logout endpoint on loopback: records each token, answers 200 or, while `failing`, 500. */
class LogoutReceiver {
  failing = 0;
  readonly received: { path: string; contentType: string | undefined; token: string; status: number }[] = [];
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<LogoutReceiver> {
    const receiver: LogoutReceiver = new LogoutReceiver(
      createServer((request, response) => {
        let body = '';
        request.setEncoding('utf8');
        request.on('data', (chunk: string) => (body += chunk));
        request.on('end', () => {
          const status = receiver.failing > 0 ? 500 : 200;
          if (receiver.failing > 0) receiver.failing -= 1;
          receiver.received.push({
            path: request.url ?? '',
            contentType: request.headers['content-type'],
            token: new URLSearchParams(body).get('logout_token') ?? '',
            status,
          });
          response.writeHead(status).end();
        });
      }),
    );
    await new Promise<void>((resolve) => receiver.#server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.#server.address() as { port: number }).port}${path}`;
  }

  /** The tokens answered 200 at `path`. */
  delivered(path: string): string[] {
    return this.received.filter((entry) => entry.path === path && entry.status === 200).map((entry) => entry.token);
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

function logoutSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let app: FastifyInstance;
  let receiver: LogoutReceiver;
  let apiKey: string;
  let paths = 0;

  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    harness = await AuthHarness.open(engine, new WallClock(Date.now()));
    app = await harness.app({ WEBHOOK_TIMEOUT_SECONDS: '2', WEBHOOK_RETRY_SECONDS: '1' }, { webhookPollMs: 40 });
    receiver = await LogoutReceiver.start();
    const owner = harness.browser(app);
    expect((await owner.signIn(newWallet())).status).toBe(200);
    apiKey = (await owner.post('/api/connect/apps', { name: 'Forum' })).body.api_key as string;
  });
  afterAll(async () => {
    await receiver?.close();
    await harness?.close();
    vi.useRealTimers();
  });

  /** openid-client registers a client with a back-channel logout endpoint of its own on the receiver. */
  async function register(
    on: FastifyInstance = app,
    extra: Record<string, unknown> = {},
  ): Promise<{ config: client.Configuration; path: string }> {
    paths += 1;
    const path = `/logout/${paths}`;
    const config = await client.dynamicClientRegistration(
      new URL(LOCAL_ORIGIN),
      {
        redirect_uris: [REDIRECT],
        client_name: `Forum ${paths}`,
        backchannel_logout_uri: receiver.url(path),
        backchannel_logout_session_required: true,
        post_logout_redirect_uris: ['https://app.example/bye'],
        // openid-client sends the secret in the body; a client authenticates only as it registered.
        token_endpoint_auth_method: 'client_secret_post',
        ...extra,
      },
      undefined,
      { execute: [client.allowInsecureRequests], [client.customFetch]: injectFetch(on), initialAccessToken: apiKey },
    );
    return { config, path };
  }

  async function signedIn(wallet: Wallet = newWallet(), host: TimedBrowser = harness.browser(app)) {
    const reply = await host.signIn(wallet, { add: true });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { host, wallet, did: reply.body.account.did_oc as string, browser: new ProviderBrowser(app, host) };
  }

  /** Signs the browser in to the client and exchanges the code; the ID token's claims and the raw ID token. */
  async function signInTo(
    browser: ProviderBrowser,
    config: client.Configuration,
    offline = false,
  ): Promise<{ claims: JWTPayload; idToken: string; accessToken: string; refreshToken: string | undefined }> {
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      ...(offline ? { scope: 'openid offline_access', prompt: 'consent' } : { scope: 'openid' }),
      state: 's',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    let hop = await browser.follow(url.href);
    if (hop.status === 200 && hop.url.includes('/oidc/interaction/')) hop = await browser.allow(hop);
    expect(hop.location, `${hop.status} ${hop.url}\n${hop.body.slice(0, 400)}`).toBeDefined();
    const tokens = await client.authorizationCodeGrant(config, new URL(hop.location as string), {
      pkceCodeVerifier: verifier,
      expectedState: 's',
    });
    const claims = tokens.claims();
    expect(claims?.sid).toEqual(expect.any(String));
    return {
      claims: claims as JWTPayload,
      idToken: tokens.id_token as string,
      accessToken: tokens.access_token,
      refreshToken: tokens.refresh_token,
    };
  }

  /** Waits for `count` tokens at `path`, then verifies each as a logout token of the client. */
  async function logoutTokens(path: string, config: client.Configuration, count = 1): Promise<JWTPayload[]> {
    await expect.poll(() => receiver.delivered(path).length, { timeout: 10_000, interval: 20 }).toBeGreaterThanOrEqual(count);
    const jwks = createLocalJWKSet((await app.inject({ url: '/oidc/jwks' })).json());
    const discovery = (await app.inject({ url: '/.well-known/openid-configuration' })).json();
    const verified: JWTPayload[] = [];
    for (const token of receiver.delivered(path)) {
      const { payload, protectedHeader } = await jwtVerify(token, jwks, {
        issuer: discovery.issuer,
        audience: config.clientMetadata().client_id,
        typ: 'logout+jwt',
      });
      expect(protectedHeader.alg).toBe('RS256');
      expect(payload.events).toEqual({ [EVENT]: {} });
      expect(payload).not.toHaveProperty('nonce');
      expect(payload.jti).toEqual(expect.any(String));
      expect(payload.iat).toEqual(expect.any(Number));
      verified.push(payload);
    }
    for (const entry of receiver.received.filter((one) => one.path === path)) {
      expect(entry.contentType).toBe('application/x-www-form-urlencoded');
    }
    return verified;
  }

  /**
   * Lets the worker run a while and says nothing reached `path`. A bounded
   * wait, kept on purpose: no later event marks that a delivery will never
   * come, and in the restart case the logout stays queued by design.
   */
  async function nothingAt(path: string): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received.filter((entry) => entry.path === path)).toEqual([]);
  }

  /**
   * Waits until the outbox holds nothing pending for the client (every queued
   * logout sent and answered), then says exactly `count` were queued and
   * delivered: a second logout, queued or sent, fails here without a sleep.
   */
  async function onlyDelivered(registered: { config: client.Configuration; path: string }, count = 1): Promise<void> {
    const clientId = registered.config.clientMetadata().client_id;
    const db = await harness.raw();
    const rows = () => db.db.selectFrom('oidc_logouts').select('state').where('client_id', '=', clientId).execute();
    await expect
      .poll(async () => (await rows()).filter((row) => row.state === 'pending').length, { timeout: 10_000, interval: 20 })
      .toBe(0);
    expect(await rows()).toHaveLength(count);
    expect(receiver.delivered(registered.path)).toHaveLength(count);
  }

  it('says in discovery that it sends back-channel logouts with a sid', async () => {
    const doc = (await app.inject({ url: '/.well-known/openid-configuration' })).json();
    expect(doc.backchannel_logout_supported).toBe(true);
    expect(doc.backchannel_logout_session_supported).toBe(true);
  });

  it('refuses a back-channel URI the webhook endpoint rules refuse', async () => {
    const options = { execute: [client.allowInsecureRequests], [client.customFetch]: injectFetch(app), initialAccessToken: apiKey };
    for (const uri of ['http://app.example/logout', 'https://10.1.2.3/logout', 'https://user:secret@app.example/logout']) {
      await expect(
        client.dynamicClientRegistration(
          new URL(LOCAL_ORIGIN),
          { redirect_uris: [REDIRECT], backchannel_logout_uri: uri },
          undefined,
          options,
        ),
        uri,
      ).rejects.toMatchObject({
        error: 'invalid_client_metadata',
        // The reason in the rules' own words, without an error code in the middle of the sentence.
        error_description: expect.stringMatching(/^backchannel_logout_uri: [a-z]/),
      });
    }
  });

  it('sends a verified logout token when the person signs out of the host, and only to the clients of that session', async () => {
    const signedTo = await register();
    const bystander = await register();
    const { host, browser } = await signedIn();
    const { claims, accessToken } = await signInTo(browser, signedTo.config);
    expect((await client.tokenIntrospection(signedTo.config, accessToken)).active).toBe(true);
    // The bystander's client is signed in elsewhere, by someone else.
    const other = await signedIn();
    await signInTo(other.browser, bystander.config);

    expect((await host.logout('current')).status).toBe(200);
    const [token] = await logoutTokens(signedTo.path, signedTo.config);
    expect(token?.sub).toBe(claims.sub);
    expect(token?.sid).toBe(claims.sid);
    await nothingAt(bystander.path);
    // The provider session ended with the host session: a silent sign-in finds nobody.
    const silent = await browser.follow(
      client.buildAuthorizationUrl(signedTo.config, { redirect_uri: REDIRECT, scope: 'openid', prompt: 'none', state: 'x' }).href,
    );
    expect(new URL(silent.location as string).searchParams.get('error')).toBe('login_required');
    // And the tokens tied to that session stop.
    expect((await client.tokenIntrospection(signedTo.config, accessToken)).active).toBe(false);
  });

  it('signs out only the account that signed out: another account of the same browser keeps its clients', async () => {
    const registered = await register();
    const first = await signedIn();
    await signInTo(first.browser, registered.config);
    // A second account joins the same browser, signs in to the same client, and signs out.
    const second = await signedIn(newWallet(), first.host);
    const { claims } = await signInTo(second.browser, registered.config);
    expect((await second.host.logout('current')).status).toBe(200);
    const tokens = await logoutTokens(registered.path, registered.config);
    expect(tokens.map((token) => token.sub)).toEqual([claims.sub]);
    await onlyDelivered(registered);
  });

  it('sends one when another device signs this browser out, with a pairwise sub for a pairwise client', async () => {
    const registered = await register(app, { subject_type: 'pairwise' });
    const wallet = newWallet();
    const phone = await signedIn(wallet);
    const { claims } = await signInTo(phone.browser, registered.config);
    expect(claims.sub).not.toBe(phone.did);
    const laptop = await signedIn(wallet);
    const listed = await laptop.host.get('/api/auth/sessions');
    const phoneSession = (listed.body.sessions as { id: string; current: boolean }[]).find((one) => !one.current);
    expect(phoneSession).toBeDefined();
    expect((await laptop.host.post('/api/auth/sudo', await laptop.host.prove(wallet, 'sudo'))).status).toBe(200);
    expect((await laptop.host.request('DELETE', `/api/auth/sessions/${phoneSession?.id}`)).status).toBe(200);
    const [token] = await logoutTokens(registered.path, registered.config);
    expect(token?.sub).toBe(claims.sub);
    expect(token?.sid).toBe(claims.sid);
  });

  it('sends one to every client of an account that is deleted, whose tokens stop', async () => {
    const a = await register(app, { grant_types: ['authorization_code', 'refresh_token'] });
    const b = await register();
    const wallet = newWallet();
    const one = await signedIn(wallet);
    const two = await signedIn(wallet);
    const first = await signInTo(one.browser, a.config, true);
    const second = await signInTo(two.browser, b.config);
    // A refresh token of offline_access outlives the provider session, but not the account.
    expect(first.refreshToken).toEqual(expect.any(String));
    expect((await one.host.post('/api/auth/sudo', await one.host.prove(wallet, 'sudo'))).status).toBe(200);
    const deleted = await one.host.request('DELETE', '/api/auth/account', { confirm: one.did });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect((await logoutTokens(a.path, a.config))[0]?.sid).toBe(first.claims.sid);
    expect((await logoutTokens(b.path, b.config))[0]?.sid).toBe(second.claims.sid);
    // What the provider issued the account stops too.
    await expect(client.refreshTokenGrant(a.config, first.refreshToken as string)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('sends one for the sessions of an account merged away, not for the surviving account, and ends its offline access', async () => {
    const registered = await register(app, { grant_types: ['authorization_code', 'refresh_token'] });
    const keeper = newWallet();
    const merged = newWallet();
    const survivor = await signedIn(keeper);
    const leaving = await signedIn(merged);
    const kept = await signInTo(survivor.browser, registered.config, true);
    const { claims, refreshToken } = await signInTo(leaving.browser, registered.config, true);
    expect((await survivor.host.post('/api/auth/sudo', await survivor.host.prove(keeper, 'sudo'))).status).toBe(200);
    const linked = await survivor.host.post('/api/auth/link/btc', {
      ...(await survivor.host.prove(merged, 'link')),
      confirm_transfer: true,
    });
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    const tokens = await logoutTokens(registered.path, registered.config);
    expect(tokens.map((token) => token.sub)).toEqual([claims.sub]);
    expect(tokens[0]?.sid).toBe(claims.sid);
    // The app can no longer act for the account that is gone; the survivor's grant is untouched.
    await expect(client.refreshTokenGrant(registered.config, refreshToken as string)).rejects.toMatchObject({ error: 'invalid_grant' });
    expect((await client.refreshTokenGrant(registered.config, kept.refreshToken as string)).access_token).toEqual(expect.any(String));
  });

  it('retries after a 500 from the app', async () => {
    const registered = await register();
    const { host, browser } = await signedIn();
    const { claims } = await signInTo(browser, registered.config);
    receiver.failing = 1;
    expect((await host.logout('all')).status).toBe(200);
    await expect
      .poll(() => receiver.received.filter((entry) => entry.path === registered.path).length, { timeout: 10_000, interval: 20 })
      .toBe(1);
    // The retry waits for its backoff (WEBHOOK_RETRY_SECONDS, ±20%): the clock moves past it until the app has it
    // (on a loaded machine an attempt may time out and wait for another backoff).
    await expect
      .poll(
        () => {
          harness.clock.advance(1500);
          return receiver.delivered(registered.path).length;
        },
        { timeout: 20_000, interval: 100 },
      )
      .toBeGreaterThanOrEqual(1);
    const [token] = await logoutTokens(registered.path, registered.config);
    expect(token?.sid).toBe(claims.sid);
    const [failed, delivered] = receiver.received.filter((entry) => entry.path === registered.path);
    expect(failed?.status).toBe(500);
    // Each attempt carries a token built for it: delivery is at least once, and the app
    // recognises a second delivery of one logout by its sid, never by its jti (docs/protocol.md §8 "Logout").
    expect(decodeJwt(failed?.token ?? '').jti).not.toBe(decodeJwt(delivered?.token ?? '').jti);
    expect(decodeJwt(failed?.token ?? '').sid).toBe(claims.sid);
  });

  it('keeps a logout across a restart: queued by one instance, sent by the next', async () => {
    await harness.closeApps();
    // An instance whose worker does not poll while the test runs: the sign-out only queues.
    const quiet = await harness.app({}, { webhookPollMs: 3_600_000 });
    app = quiet;
    const registered = await register(quiet);
    const { host, browser } = await signedIn();
    const { claims } = await signInTo(browser, registered.config);
    expect((await host.logout('all')).status).toBe(200);
    await nothingAt(registered.path);
    await harness.closeApps();
    app = await harness.app({ WEBHOOK_TIMEOUT_SECONDS: '2', WEBHOOK_RETRY_SECONDS: '1' }, { webhookPollMs: 40 });
    await app.ready();
    const [token] = await logoutTokens(registered.path, registered.config);
    expect(token?.sid).toBe(claims.sid);
    expect(decodeProtectedHeader(receiver.delivered(registered.path)[0] ?? '').typ).toBe('logout+jwt');
  });

  it('ends the host session of the account at the app’s end-session only on the confirmed choice, never on a GET', async () => {
    const registered = await register();
    const first = await signedIn();
    const second = await signedIn(newWallet(), first.host);
    const { claims, idToken } = await signInTo(second.browser, registered.config);
    const end = client.buildEndSessionUrl(registered.config, {
      id_token_hint: idToken,
      post_logout_redirect_uri: 'https://app.example/bye',
    });
    // A GET, even one that names the choice, only asks.
    const question = await second.browser.follow(`${end.href}&logout=host`);
    expect(question.status).toBe(200);
    expect(question.body).toContain('name="logout" value="host"');
    expect(await harness.liveRows(claims.sub?.slice('did:oc:'.length) ?? '')).toHaveLength(1);
    // A confirm without the page's anti-forgery value is refused.
    const forged = await second.browser.follow('/oidc/session/end/confirm', 'POST', { xsrf: 'forged', logout: 'host' });
    expect(forged.status).toBe(400);
    expect(await harness.liveRows(claims.sub?.slice('did:oc:'.length) ?? '')).toHaveLength(1);

    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question.body)?.[1] as string;
    const done = await second.browser.request('POST', '/oidc/session/end/confirm', { xsrf, logout: 'host' });
    expect(done.status).toBe(303);
    expect(done.location).toBe('https://app.example/bye');
    // Only that account's host session ended; the browser moved to the other account of its roster.
    expect(await harness.liveRows(claims.sub?.slice('did:oc:'.length) ?? '')).toHaveLength(0);
    expect(await harness.liveRows(first.did.slice('did:oc:'.length))).toHaveLength(1);
    const moved = /oc_session=([^;]+)/.exec(String(done.headers['set-cookie']))?.[1] ?? '';
    expect((await harness.rowOf(moved))?.account_id).toBe(first.did.slice('did:oc:'.length));
    // One logout token for the app's session, though both the library and the host session asked for it.
    const tokens = await logoutTokens(registered.path, registered.config);
    expect(tokens.map((token) => token.sid)).toEqual([claims.sid]);
    await onlyDelivered(registered);
  });

  it('ends only the account that signed in to the app when the browser has switched to another since', async () => {
    const registered = await register();
    const first = await signedIn();
    const second = await signedIn(newWallet(), first.host);
    const { claims, idToken } = await signInTo(second.browser, registered.config);
    expect((await first.host.switchTo(first.did)).status).toBe(200);
    const question = await second.browser.follow(client.buildEndSessionUrl(registered.config, { id_token_hint: idToken }).href);
    // The page names no account it cannot see as the active one.
    expect(question.body).not.toContain(second.wallet.address);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question.body)?.[1] as string;
    const done = await second.browser.request('POST', '/oidc/session/end/confirm', { xsrf, logout: 'host' });
    expect(done.status).toBe(303);
    expect(await harness.liveRows(second.did.slice('did:oc:'.length))).toHaveLength(0);
    expect(await harness.liveRows(first.did.slice('did:oc:'.length))).toHaveLength(1);
    // The active account's cookie is left as it is.
    expect(String(done.headers['set-cookie'] ?? '')).not.toContain('oc_session=');
    expect((await first.host.get('/api/auth/me')).body.account.did_oc).toBe(first.did);
    expect((await logoutTokens(registered.path, registered.config)).map((token) => token.sid)).toEqual([claims.sid]);
  });

  it('keeps the previous account’s app session when the browser signs in to an app as another account of its roster', async () => {
    const registered = await register();
    const first = await signedIn();
    const before = await signInTo(first.browser, registered.config);
    // A second account joins the roster and becomes active; the same browser (its provider cookie too) goes to the app again.
    const second = await signedIn(newWallet(), first.host);
    const after = await signInTo(first.browser, registered.config);
    expect(after.claims.sub).toBe(second.did);
    expect(before.claims.sub).toBe(first.did);
    // No end-session was submitted for the first account: no logout token, and its tokens still work.
    await nothingAt(registered.path);
    expect((await client.tokenIntrospection(registered.config, before.accessToken)).active).toBe(true);
    expect((await client.fetchUserInfo(registered.config, before.accessToken, first.did)).sub).toBe(first.did);
    expect((await client.tokenIntrospection(registered.config, after.accessToken)).active).toBe(true);
    // Back to the first account, and to the app again: the second account keeps its app session in turn.
    expect((await first.host.switchTo(first.did)).status).toBe(200);
    const again = await signInTo(first.browser, registered.config);
    expect(again.claims.sub).toBe(first.did);
    await nothingAt(registered.path);
    expect((await client.tokenIntrospection(registered.config, after.accessToken)).active).toBe(true);
    // The first account's app sessions end with its host session, and only then: the one set aside too.
    expect((await first.host.logout('current')).status).toBe(200);
    const tokens = await logoutTokens(registered.path, registered.config);
    expect(tokens.map((token) => [token.sub, token.sid])).toEqual([[first.did, again.claims.sid]]);
    expect((await client.tokenIntrospection(registered.config, again.accessToken)).active).toBe(false);
    expect((await client.tokenIntrospection(registered.config, before.accessToken)).active).toBe(false);
    expect((await client.tokenIntrospection(registered.config, after.accessToken)).active).toBe(true);
  });

  /** A signs in to the app, then B joins the browser's roster and signs in to the same app (A's provider session is set aside). */
  async function bothSignedInToOneApp(extra: Record<string, unknown>) {
    const registered = await register(app, extra);
    const first = await signedIn();
    const a = await signInTo(first.browser, registered.config);
    const second = await signedIn(newWallet(), first.host);
    const b = await signInTo(first.browser, registered.config);
    expect(a.claims.sub).not.toBe(b.claims.sub);
    return { registered, first, second, a, b };
  }

  /** The app's end-session in `browser` with `idToken` as the hint, back to the app's post-logout address. */
  function askToEnd(browser: ProviderBrowser, config: client.Configuration, idToken: string) {
    return browser.follow(
      client.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: 'https://app.example/bye' }).href,
    );
  }

  /**
   * The attacker's path of issue 35: A signs in to the app, B joins the browser's roster and signs in to the same app
   * (A's provider session is set aside), then the app asks to end A's session with A's ID token as the hint.
   */
  async function twoAccountsOfOneApp(extra: Record<string, unknown> = {}) {
    const { registered, first, second, a, b } = await bothSignedInToOneApp(extra);
    const question = await askToEnd(first.browser, registered.config, a.idToken);
    expect(question.status, question.body.slice(0, 400)).toBe(200);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question.body)?.[1] as string;
    return { registered, first, second, a, b, xsrf };
  }

  /** B's app session is as it was: its tokens work and a silent sign-in to the app answers B with the same sid. */
  async function bKeepsItsAppSession(setup: Awaited<ReturnType<typeof twoAccountsOfOneApp>>): Promise<void> {
    const { registered, first, b } = setup;
    expect((await client.tokenIntrospection(registered.config, b.accessToken)).active).toBe(true);
    expect((await client.fetchUserInfo(registered.config, b.accessToken, b.claims.sub as string)).sub).toBe(b.claims.sub);
    const verifier = client.randomPKCECodeVerifier();
    const silent = await first.browser.follow(
      client.buildAuthorizationUrl(registered.config, {
        redirect_uri: REDIRECT,
        scope: 'openid',
        prompt: 'none',
        state: 'q',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      }).href,
    );
    const tokens = await client.authorizationCodeGrant(registered.config, new URL(silent.location as string), {
      pkceCodeVerifier: verifier,
      expectedState: 'q',
    });
    expect([tokens.claims()?.sub, tokens.claims()?.sid]).toEqual([b.claims.sub, b.claims.sid]);
  }

  it('at the app’s end-session with the hint of an account the browser switched away from, “this app only” ends that account’s app session and never the active one’s', async () => {
    const setup = await twoAccountsOfOneApp();
    const { registered, first, second, a, xsrf } = setup;
    const done = await first.browser.request('POST', '/oidc/session/end/confirm', { xsrf });
    expect(done.status).toBe(303);
    expect(done.location).toBe('https://app.example/bye');
    // A's session with the app ended: a logout for A's sid, and A's tokens of it stop.
    const tokens = await logoutTokens(registered.path, registered.config);
    expect(tokens.map((token) => [token.sub, token.sid])).toEqual([[first.did, a.claims.sid]]);
    expect((await client.tokenIntrospection(registered.config, a.accessToken)).active).toBe(false);
    // Nothing reached the app for B, and the browser's provider cookie is untouched.
    await onlyDelivered(registered);
    expect(String(done.headers['set-cookie'] ?? '')).not.toContain('oc_op_session');
    await bKeepsItsAppSession(setup);
    // Both host sessions stay; the same confirm again finds nothing to do.
    expect(await harness.liveRows(first.did.slice('did:oc:'.length))).toHaveLength(1);
    expect(await harness.liveRows(second.did.slice('did:oc:'.length))).toHaveLength(1);
    expect((await first.browser.request('POST', '/oidc/session/end/confirm', { xsrf })).status).toBe(400);
    // The app asks again with A's hint: A has no session with it here any more, so nothing is asked or ended.
    const again = await first.browser.follow(
      client.buildEndSessionUrl(registered.config, {
        id_token_hint: a.idToken,
        post_logout_redirect_uri: 'https://app.example/bye',
        state: 'st',
      }).href,
    );
    expect(again.status).toBe(303);
    expect(again.location).toBe('https://app.example/bye?state=st');
    await onlyDelivered(registered);
    await bKeepsItsAppSession(setup);
  });

  it('at the app’s end-session with the hint of an account the browser switched away from, “also sign out of oc-host” ends that account alone', async () => {
    // A pairwise client: the hint's sub is the app's own value for A.
    const setup = await twoAccountsOfOneApp({ subject_type: 'pairwise' });
    const { registered, first, second, a, xsrf } = setup;
    const done = await first.browser.request('POST', '/oidc/session/end/confirm', { xsrf, logout: 'host' });
    expect(done.status).toBe(303);
    expect(done.location).toBe('https://app.example/bye');
    expect(await harness.liveRows(first.did.slice('did:oc:'.length))).toHaveLength(0);
    expect(await harness.liveRows(second.did.slice('did:oc:'.length))).toHaveLength(1);
    // The active account B keeps the browser: neither its host cookie nor its provider cookie changes.
    expect(String(done.headers['set-cookie'] ?? '')).not.toContain('oc_session=');
    expect(String(done.headers['set-cookie'] ?? '')).not.toContain('oc_op_session');
    expect((await first.host.get('/api/auth/me')).body.account.did_oc).toBe(second.did);
    const tokens = await logoutTokens(registered.path, registered.config);
    expect(a.claims.sub).not.toBe(first.did);
    expect(tokens.map((token) => [token.sub, token.sid])).toEqual([[a.claims.sub, a.claims.sid]]);
    expect((await client.tokenIntrospection(registered.config, a.accessToken)).active).toBe(false);
    await onlyDelivered(registered);
    await bKeepsItsAppSession(setup);
  });

  /**
   * Issue 35, the browser's own provider session empty: A and B signed in to the app from one browser (A's set aside),
   * then B signed out of the host, which ended B's provider session; the app asks to end A's with A's hint.
   */
  async function activeAccountSignedOut(extra: Record<string, unknown> = {}) {
    const { registered, first, second, a, b } = await bothSignedInToOneApp(extra);
    expect((await first.host.logout('current')).status).toBe(200);
    expect((await logoutTokens(registered.path, registered.config)).map((token) => [token.sub, token.sid])).toEqual([
      [b.claims.sub, b.claims.sid],
    ]);
    expect((await first.host.get('/api/auth/me')).body.account.did_oc).toBe(first.did);
    const question = await askToEnd(first.browser, registered.config, a.idToken);
    return { registered, first, second, a, question };
  }

  it('asks about the switched-away account’s app session when the browser’s own provider session holds no account, and “this app only” ends it alone', async () => {
    const { registered, first, a, question } = await activeAccountSignedOut();
    // Before, the library posted its own confirm at once (a self-submitting form) and A's app session lived on.
    expect(question.status, question.body.slice(0, 400)).toBe(200);
    expect(question.body).not.toContain('op.logoutForm.submit');
    expect(question.body).toContain('name="logout"');
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question.body)?.[1] as string;
    expect(xsrf).toMatch(/^[0-9a-f]{48}$/);
    // A forged confirm (another value) ends nothing.
    expect((await first.browser.request('POST', '/oidc/session/end/confirm', { xsrf: 'f'.repeat(48) })).status).toBe(400);
    expect((await client.tokenIntrospection(registered.config, a.accessToken)).active).toBe(true);
    const done = await first.browser.request('POST', '/oidc/session/end/confirm', { xsrf });
    expect(done.status).toBe(303);
    expect(done.location).toBe('https://app.example/bye');
    const tokens = await logoutTokens(registered.path, registered.config, 2);
    expect(tokens.map((token) => [token.sub, token.sid]).slice(1)).toEqual([[first.did, a.claims.sid]]);
    expect((await client.tokenIntrospection(registered.config, a.accessToken)).active).toBe(false);
    // A keeps the host: "this app only".
    expect(await harness.liveRows(first.did.slice('did:oc:'.length))).toHaveLength(1);
    expect((await first.host.get('/api/auth/me')).body.account.did_oc).toBe(first.did);
    expect((await first.browser.request('POST', '/oidc/session/end/confirm', { xsrf })).status).toBe(400);
  });

  it('with the browser’s own provider session empty, “also sign out of oc-host” ends the hint’s account’s host session too', async () => {
    const { registered, first, a, question } = await activeAccountSignedOut({ subject_type: 'pairwise' });
    expect(question.status, question.body.slice(0, 400)).toBe(200);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question.body)?.[1] as string;
    const done = await first.browser.request('POST', '/oidc/session/end/confirm', { xsrf, logout: 'host' });
    expect(done.status).toBe(303);
    const tokens = await logoutTokens(registered.path, registered.config, 2);
    expect(a.claims.sub).not.toBe(first.did);
    expect(tokens.map((token) => [token.sub, token.sid]).slice(1)).toEqual([[a.claims.sub, a.claims.sid]]);
    expect((await client.tokenIntrospection(registered.config, a.accessToken)).active).toBe(false);
    expect(await harness.liveRows(first.did.slice('did:oc:'.length))).toHaveLength(0);
  });

  it('with the browser’s own provider session empty, another browser holding the hint ends nothing', async () => {
    const registered = await register();
    const first = await signedIn();
    const a = await signInTo(first.browser, registered.config);
    // A browser of someone else, signed in to the host and to the app, with no provider account now: it replays A's hint.
    const other = await signedIn();
    const theirs = await signInTo(other.browser, registered.config);
    expect((await other.host.logout('current')).status).toBe(200);
    await logoutTokens(registered.path, registered.config);
    const replay = await askToEnd(other.browser, registered.config, a.idToken);
    // The library's own way for an empty session: its self-submitting confirm (which the browser follows), ending nothing of A's.
    expect([replay.status, replay.location]).toEqual([303, 'https://app.example/bye']);
    await onlyDelivered(registered);
    expect((await client.tokenIntrospection(registered.config, a.accessToken)).active).toBe(true);
    expect((await client.tokenIntrospection(registered.config, theirs.accessToken)).active).toBe(false);
  });

  it('at the app’s end-session, “this app only” keeps the host session', async () => {
    const registered = await register();
    const { did, browser } = await signedIn();
    const { claims, idToken } = await signInTo(browser, registered.config);
    const question = await browser.follow(client.buildEndSessionUrl(registered.config, { id_token_hint: idToken }).href);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question.body)?.[1] as string;
    const done = await browser.request('POST', '/oidc/session/end/confirm', { xsrf });
    expect(done.status).toBe(303);
    expect(await harness.liveRows(did.slice('did:oc:'.length))).toHaveLength(1);
    expect((await logoutTokens(registered.path, registered.config))[0]?.sid).toBe(claims.sid);
  });
}

await forEachEngine('back-channel logout', logoutSuite);
