/**
 * The OpenID provider on two instances behind one load balancer
 * (docs/operations.md "Several instances behind a proxy"): two compiled
 * oc-host processes on one PostgreSQL schema and one Redis, and a loopback
 * proxy in front that hands requests to them in turn. The proxy's URL is
 * `PUBLIC_URL`, so the issuer, and every flow here runs through it with a
 * real relying party (openid-client) and the host's real wallet sign-in; a
 * step that must hop to the other instance is steered there and checked.
 * The device authorization runs here too, with the limits it keeps in
 * Redis (the poll interval, the verification page's budget per network)
 * checked across the two.
 *
 * Mandatory under CI=true (PostgreSQL and Redis must be up); elsewhere it is
 * skipped with a message when either is missing. SQLite is for one instance
 * (docs/operations.md), so it is not run here.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as client from 'openid-client';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { rotateOidcKeys, type OidcService } from '../src/features/oidc/index.js';
import { openStore } from '../src/store.js';
import { newWallet } from './support/auth-client.js';
import { createTestDatabase, testEngines, type TestDatabase } from './support/databases.js';
import { startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { startInstance, type Instance } from './support/instances.js';
import { startNostrRelay, type NostrRelay } from './support/nostr-relay.js';
import { deviceForm, operatorRegistry } from './support/oidc-rp.js';
import { ProxyBrowser, RoundRobinProxy } from './support/proxy.js';
import { redisSkipReason, testRedis, type TestRedis } from './support/redis.js';

const REDIRECT = 'https://app.example/callback';
const AFTER_LOGOUT = 'https://app.example/bye';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** Posts of the device verification page a network may make in an hour, on both instances together. */
const DEVICE_CODES_PER_HOUR = 10;
const postgresSkip = (await testEngines()).find((engine) => engine.engine === 'postgres')?.skipReason;
const redisSkip = await redisSkipReason();
const skip = postgresSkip ?? redisSkip;
if (skip !== undefined) console.warn(`\n[oidc-multi-instance] SKIPPING: ${skip}\n`);

let proxy: RoundRobinProxy;
let issuer: string;
let database: TestDatabase;
let redis: TestRedis;
let esplora: EsploraFake;
let relay: NostrRelay;
let instances: Instance[] = [];
let store: Awaited<ReturnType<typeof openStore>>;
let registry: OidcService;

beforeAll(async () => {
  if (skip !== undefined) return;
  proxy = await RoundRobinProxy.start();
  issuer = proxy.url;
  database = await createTestDatabase('postgres');
  redis = testRedis();
  esplora = await startEsploraFake({ tipHeight: 1000 });
  relay = await startNostrRelay();
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    PUBLIC_URL: issuer,
    TRUST_PROXY: 'true',
    NOSTR_RELAYS: relay.url,
    ESPLORA_URLS: esplora.url,
    // Every request comes through the one proxy from one loopback client.
    RATE_LIMIT_READ_PER_MIN: '100000',
    RATE_LIMIT_AUTH_PER_MIN: '100000',
    // The verification page's budget per network, and an interval no test run outlasts between two polls.
    RATE_LIMIT_DEVICE_CODE_PER_HOUR: String(DEVICE_CODES_PER_HOUR),
    OIDC_DEVICE_POLL_SECONDS: '60',
  };
  // Both at once on an empty schema: the keys they make must be the same ones.
  instances = await Promise.all([startInstance(env, { readyTimeoutMs: 60_000 }), startInstance(env, { readyTimeoutMs: 60_000 })]);
  proxy.route(instances.map((instance) => instance.url));
  // The operator's commands, on the same database (as `oc-host oidc clients add` runs).
  store = await openStore(database.url);
  registry = await operatorRegistry(store, issuer, () => new Date());
}, 120_000);

afterAll(async () => {
  if (skip !== undefined) return;
  await Promise.all(instances.map((instance) => instance.stop()));
  await store?.close();
  await proxy?.close();
  await relay?.close();
  await esplora?.close();
  await redis?.cleanup();
  await database?.cleanup();
}, 60_000);

/** The backends that served the requests since `mark` (an index into the proxy's log). */
function servedSince(mark: number): Set<number> {
  return new Set(proxy.served.slice(mark).map((served) => served.backend));
}

/** The backend that served the last request. */
function lastBackend(): number {
  return proxy.lastServed(() => true);
}

/** openid-client's configuration of a client at the proxy's issuer. */
function relyingParty(clientId: string, secret?: string): Promise<client.Configuration> {
  return client.discovery(new URL(issuer), clientId, undefined, secret === undefined ? client.None() : client.ClientSecretBasic(secret), {
    execute: [client.allowInsecureRequests],
  });
}

/** An authorization request an app made: where it sends the browser, and what it keeps to check the answer. */
interface Request {
  readonly url: URL;
  readonly verifier: string;
  readonly state: string;
  readonly nonce: string | undefined;
}

/** A code flow request with PKCE, a state and a nonce, consent asked for. */
async function codeRequest(config: client.Configuration, scope = 'openid profile offline_access'): Promise<Request> {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    prompt: 'consent',
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  return { url, verifier, state, nonce };
}

interface Authorized {
  readonly request: Request;
  readonly callback: URL;
  /** Whether the person was asked to consent. */
  readonly consented: boolean;
  /** The backend whose answer carried the code. */
  readonly codeFrom: number;
}

/**
 * Runs an authorization through the proxy in `browser` (signed in to the
 * host): from the request's URL (or `from`, a step of it such as the
 * interaction) to the app's redirect URI, allowing the consent page when one
 * is shown. The building block of every flow here that ends at the app's
 * redirect URI (the device flow ends on the host's own page instead).
 */
async function authorize(browser: ProxyBrowser, request: Request, from: URL = request.url): Promise<Authorized> {
  let hop = await browser.follow(from.href);
  const consented = hop.status === 200 && hop.url.includes('/oidc/interaction/');
  if (consented) hop = await browser.allow(hop);
  expect(hop.location, `${hop.status} ${hop.url}\n${hop.body.slice(0, 600)}`).toMatch(/^https:\/\/app\.example\//);
  return { request, callback: new URL(hop.location as string), consented, codeFrom: lastBackend() };
}

/** The code exchange of an authorization, checked as the app checks it. */
function exchange(config: client.Configuration, authorized: Authorized) {
  const { request } = authorized;
  return client.authorizationCodeGrant(config, authorized.callback, {
    pkceCodeVerifier: request.verifier,
    expectedState: request.state,
    ...(request.nonce === undefined ? {} : { expectedNonce: request.nonce }),
  });
}

/** A browser signed in to the host through the proxy, and its account's DID. */
async function signedIn(): Promise<{ browser: ProxyBrowser; did: string }> {
  const browser = new ProxyBrowser(issuer);
  const did = await browser.signIn(newWallet());
  return { browser, did };
}

/** What a device's poll of the token endpoint got, and which instance answered it. */
interface Polled {
  readonly status: number;
  readonly body: Record<string, unknown>;
  readonly servedBy: number;
}

/** A device's poll of the token endpoint through the proxy (a public client: its id, no secret). */
async function devicePoll(clientId: string, deviceCode: string): Promise<Polled> {
  const answer = await fetch(`${issuer}/oidc/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: clientId }),
  });
  return {
    status: answer.status,
    body: (await answer.json()) as Record<string, unknown>,
    servedBy: Number(answer.headers.get('x-served-by')),
  };
}

/** An HTTP request to the proxy from the loopback address `from`: the proxy adds it to X-Forwarded-For as the client's. */
function requestFrom(
  from: string,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(path, issuer);
    const outgoing = httpRequest(
      { host: target.hostname, port: target.port, path: `${target.pathname}${target.search}`, method, headers, localAddress: from },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () =>
          resolve({ status: answer.statusCode ?? 0, headers: answer.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        answer.on('error', reject);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/**
 * A code typed at the verification page by a browser without a session,
 * from the loopback address `from` (its network, a /24, is what the page's
 * budget counts): the entry page from the other instance, the code posted
 * to instance `postTo`.
 */
async function typeDeviceCode(
  from: string,
  code: string,
  postTo: number,
): Promise<{ status: number; body: string; retryAfter: string | undefined }> {
  proxy.steerAwayFrom(postTo);
  const entry = await requestFrom(from, 'GET', '/oidc/device');
  expect(entry.status).toBe(200);
  const cookie = (entry.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]).join('; ');
  const { action, xsrf } = deviceForm(entry.body);
  const answer = await requestFrom(
    from,
    'POST',
    action,
    { cookie, origin: issuer, 'content-type': 'application/x-www-form-urlencoded' },
    new URLSearchParams({ xsrf, user_code: code }).toString(),
  );
  expect(entry.headers['x-served-by']).toBe(String(1 - postTo));
  expect(answer.headers['x-served-by']).toBe(String(postTo));
  const retryAfter = answer.headers['retry-after'];
  return { status: answer.status, body: answer.body, retryAfter };
}

describe.skipIf(skip !== undefined)('the OpenID provider on two instances behind a round-robin proxy', () => {
  it('publishes the same discovery and the same keys from both: one key per algorithm though they started together', async () => {
    const [a, b] = instances as [Instance, Instance];
    const documents = await Promise.all(
      [a, b].map(async (instance) => (await fetch(`${instance.url}/.well-known/openid-configuration`)).json() as Promise<any>),
    );
    expect(documents[0]).toEqual(documents[1]);
    expect(documents[0].issuer).toBe(issuer);
    const keySets = await Promise.all([a, b].map(async (instance) => (await fetch(`${instance.url}/oidc/jwks`)).json() as Promise<any>));
    expect(keySets[0]).toEqual(keySets[1]);
    expect(keySets[0].keys.map((key: { alg: string }) => key.alg).sort()).toEqual(['ES256', 'EdDSA', 'RS256']);
    // Through the proxy, one answer from each.
    const mark = proxy.served.length;
    const answers = await Promise.all([0, 1].map(() => fetch(`${issuer}/oidc/jwks`)));
    expect(new Set(answers.map((answer) => answer.headers.get('x-served-by')))).toEqual(new Set(['0', '1']));
    for (const answer of answers) expect(await answer.json()).toEqual(keySets[0]);
    expect(servedSince(mark)).toEqual(new Set([0, 1]));
  });

  it('runs a code flow with PKCE across both: sign-in, consent, code, token, userinfo, refresh rotation and revocation each hop', async () => {
    const issued = await registry.clients.create({ client_name: 'Two-instance app', redirect_uris: [REDIRECT] });
    const config = await relyingParty(issued.client_id, issued.client_secret);
    const mark = proxy.served.length;
    // The app sends a browser with no host session: the interaction sends it to the sign-in page.
    const browser = new ProxyBrowser(issuer);
    const request = await codeRequest(config);
    const first = await browser.follow(request.url.href);
    expect(first.status).toBe(200);
    const signinPage = new URL(first.url);
    expect(signinPage.pathname).toBe('/signin');
    const back = signinPage.searchParams.get('return_to') as string;
    expect(back).toMatch(/^\/oidc\/interaction\/[A-Za-z0-9_-]+$/);
    const interactionFrom = proxy.lastServed((served) => served.path.startsWith('/oidc/interaction/'));
    // The wallet signs in: the challenge from one instance, the signed answer to the other.
    const did = await browser.signIn(newWallet());
    const challengeFrom = proxy.lastServed((served) => served.path.startsWith('/api/challenge'));
    expect(proxy.lastServed((served) => served.path === '/api/auth/signin')).not.toBe(challengeFrom);

    // Back to the interaction on the instance that did not start it, consent, code.
    proxy.steerAwayFrom(interactionFrom);
    const resumed = proxy.served.length;
    const authorized = await authorize(browser, request, new URL(back, issuer));
    expect(proxy.served[resumed]?.backend).not.toBe(interactionFrom);
    expect(authorized.consented).toBe(true);
    expect(servedSince(mark)).toEqual(new Set([0, 1]));
    // The interaction's pages and its confirmation were served by both.
    const interactions = proxy.served.slice(mark).filter((served) => served.path.startsWith('/oidc/interaction/'));
    expect(new Set(interactions.map((served) => served.backend))).toEqual(new Set([0, 1]));

    // The code is exchanged on the instance that did not issue it.
    proxy.steerAwayFrom(authorized.codeFrom);
    const tokens = await exchange(config, authorized);
    const tokenFrom = proxy.lastServed((served) => served.path === '/oidc/token');
    expect(tokenFrom).not.toBe(authorized.codeFrom);
    expect(tokens.claims()?.sub).toBe(did);
    expect(tokens.claims()?.iss).toBe(issuer);
    expect(tokens.claims()?.nonce).toBe(request.nonce);

    proxy.steerAwayFrom(tokenFrom);
    const info = await client.fetchUserInfo(config, tokens.access_token, did);
    expect(proxy.lastServed((served) => served.path === '/oidc/userinfo')).not.toBe(tokenFrom);
    expect(info.sub).toBe(did);

    // Rotation is seen by both: the new refresh token works on the other instance, the old one on neither.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token as string);
    const refreshFrom = lastBackend();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    proxy.steerAwayFrom(refreshFrom);
    const again = await client.refreshTokenGrant(config, refreshed.refresh_token as string);
    expect(lastBackend()).not.toBe(refreshFrom);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: 'invalid_grant' });

    // The old refresh token's reuse ended the grant, on both instances.
    for (let i = 0; i < 2; i++) expect((await client.tokenIntrospection(config, again.access_token)).active).toBe(false);

    // Revoked on one, inactive on the other.
    const freshTokens = await exchange(config, await authorize(browser, await codeRequest(config, 'openid')));
    await client.tokenRevocation(config, freshTokens.access_token);
    const revokedOn = lastBackend();
    proxy.steerAwayFrom(revokedOn);
    expect((await client.tokenIntrospection(config, freshTokens.access_token)).active).toBe(false);
    expect(lastBackend()).not.toBe(revokedOn);
  });

  it('takes a code once when it is presented to both instances at the same moment, and ends what it granted', async () => {
    const issued = await registry.clients.create({ client_name: 'Racing app', redirect_uris: [REDIRECT] });
    const config = await relyingParty(issued.client_id, issued.client_secret);
    const { browser } = await signedIn();
    const authorized = await authorize(browser, await codeRequest(config, 'openid'));
    const code = authorized.callback.searchParams.get('code') as string;
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(issued.client_id)}:${encodeURIComponent(issued.client_secret as string)}`).toString('base64')}`;
    const exchange = () =>
      fetch(`${issuer}/oidc/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT,
          code_verifier: authorized.request.verifier,
        }),
      });
    const answers = await Promise.all([exchange(), exchange()]);
    expect(new Set(answers.map((answer) => answer.headers.get('x-served-by')))).toEqual(new Set(['0', '1']));
    const bodies = await Promise.all(answers.map(async (answer) => ({ status: answer.status, body: (await answer.json()) as any })));
    const won = bodies.filter((answer) => answer.status === 200);
    const lost = bodies.filter((answer) => answer.status !== 200);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // A second use ends the grant: the token the first use got is dead on both instances.
    for (let i = 0; i < 2; i++) {
      expect((await client.tokenIntrospection(config, won[0]?.body.access_token)).active).toBe(false);
    }
  });

  it('pushes an authorization request to one instance and authorizes it on the other (PAR)', async () => {
    const issued = await registry.clients.create({ client_name: 'Pushing app', redirect_uris: [REDIRECT] });
    const config = await relyingParty(issued.client_id, issued.client_secret);
    const { browser, did } = await signedIn();
    const verifier = client.randomPKCECodeVerifier();
    const url = await client.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      prompt: 'consent',
      state: 'pushed',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    expect(url.searchParams.get('request_uri')).toMatch(/^urn:ietf:params:oauth:request_uri:/);
    const pushedTo = proxy.lastServed((served) => served.path === '/oidc/request');
    proxy.steerAwayFrom(pushedTo);
    const mark = proxy.served.length;
    const authorized = await authorize(browser, { url, verifier, state: 'pushed', nonce: undefined });
    expect(proxy.served[mark]?.backend).not.toBe(pushedTo);
    expect(proxy.served[mark]?.path).toMatch(/^\/oidc\/auth\?/);
    const tokens = await exchange(config, authorized);
    expect(tokens.claims()?.sub).toBe(did);
    // The pushed request is used: presented again (to either instance) it is refused.
    for (let i = 0; i < 2; i++) {
      const again = await browser.request('GET', url.href);
      expect(again.status).toBe(400);
      expect(again.body).toContain('invalid_request_uri');
    }
  });

  it('ends the app session on the other instance than the one that asked (RP-initiated logout)', async () => {
    const issued = await registry.clients.create({
      client_name: 'Leaving app',
      redirect_uris: [REDIRECT],
      post_logout_redirect_uris: [AFTER_LOGOUT],
    });
    const config = await relyingParty(issued.client_id, issued.client_secret);
    const { browser } = await signedIn();
    const tokens = await exchange(config, await authorize(browser, await codeRequest(config, 'openid')));
    const question = await browser.follow(
      client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token as string, post_logout_redirect_uri: AFTER_LOGOUT }).href,
    );
    expect(question.status, question.body.slice(0, 400)).toBe(200);
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(question.body)?.[1] as string;
    expect(xsrf).toBeDefined();
    const askedOn = lastBackend();
    proxy.steerAwayFrom(askedOn);
    const done = await browser.request('POST', '/oidc/session/end/confirm', { xsrf });
    expect(lastBackend()).not.toBe(askedOn);
    expect(done.status).toBe(303);
    expect(done.location).toBe(AFTER_LOGOUT);
    for (let i = 0; i < 2; i++) expect((await client.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it('registers a client on one instance (RFC 7591), signs in with it on the other at once, and deletes it for both', async () => {
    const { browser, did } = await signedIn();
    const app = await browser.api('POST', '/api/connect/apps', { name: 'Two-instance shop' });
    expect(app.status, JSON.stringify(app.body)).toBe(200);
    const registered = await client.dynamicClientRegistration(
      new URL(issuer),
      { redirect_uris: [REDIRECT], client_name: 'Shop web', grant_types: ['authorization_code', 'refresh_token'] },
      undefined,
      { initialAccessToken: app.body.api_key as string, execute: [client.allowInsecureRequests] },
    );
    const registeredOn = proxy.lastServed((served) => served.path === '/oidc/register');
    const metadata = registered.clientMetadata();
    // Read back (RFC 7592) on the other instance.
    proxy.steerAwayFrom(registeredOn);
    const read = await fetch(metadata.registration_client_uri as string, {
      headers: { authorization: `Bearer ${metadata.registration_access_token as string}` },
    });
    expect(read.headers.get('x-served-by')).not.toBe(String(registeredOn));
    expect(read.status).toBe(200);
    expect(((await read.json()) as any).client_id).toBe(metadata.client_id);

    const config = await relyingParty(metadata.client_id, metadata.client_secret as string);
    proxy.steerAwayFrom(registeredOn);
    const mark = proxy.served.length;
    const authorized = await authorize(browser, await codeRequest(config));
    expect(proxy.served[mark]?.backend).not.toBe(registeredOn);
    const tokens = await exchange(config, authorized);
    expect(tokens.claims()?.sub).toBe(did);

    // The client deletes itself (RFC 7592) on one instance; the other refuses it at its next request.
    const deleted = await fetch(metadata.registration_client_uri as string, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${metadata.registration_access_token as string}` },
    });
    expect(deleted.status).toBe(204);
    proxy.steerAwayFrom(Number(deleted.headers.get('x-served-by')));
    expect(metadata.token_endpoint_auth_method).toBe('client_secret_basic');
    const refused = await fetch(`${issuer}/oidc/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${encodeURIComponent(metadata.client_id)}:${encodeURIComponent(metadata.client_secret as string)}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token as string }),
    });
    expect(refused.headers.get('x-served-by')).not.toBe(deleted.headers.get('x-served-by'));
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' });
  });

  it('refuses a DPoP proof on the second instance that the first already took', async () => {
    const machine = await registry.clients.create({ client_name: 'Machine', redirect_uris: [], machine: true });
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const newProof = () =>
      new SignJWT({ htm: 'POST', htu: `${issuer}/oidc/token`, jti: randomUUID() })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .setIssuedAt()
        .sign(privateKey);
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(machine.client_id)}:${encodeURIComponent(machine.client_secret as string)}`).toString('base64')}`;
    const ask = (proof: string) =>
      fetch(`${issuer}/oidc/token`, {
        method: 'POST',
        headers: { authorization: basic, dpop: proof, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials' }),
      });
    const proof = await newProof();
    const first = await ask(proof);
    const firstBody = (await first.json()) as any;
    expect(first.status, JSON.stringify(firstBody)).toBe(200);
    expect(firstBody.token_type).toBe('DPoP');
    const second = await ask(proof);
    expect(second.headers.get('x-served-by')).not.toBe(first.headers.get('x-served-by'));
    expect(second.status).toBe(400);
    // The library answers a replayed proof at the token endpoint as a bad grant.
    expect(await second.json()).toMatchObject({ error: 'invalid_grant' });
    // The same request with a proof of its own is answered there: it was the replay that was refused.
    proxy.steerAwayFrom(Number(first.headers.get('x-served-by')));
    const fresh = await ask(await newProof());
    expect(fresh.headers.get('x-served-by')).toBe(second.headers.get('x-served-by'));
    expect(fresh.status).toBe(200);
    // And at the same moment on both, with one fresh proof: one is taken.
    const racing = await newProof();
    const raced = await Promise.all([ask(racing), ask(racing)]);
    expect(new Set(raced.map((answer) => answer.headers.get('x-served-by')))).toEqual(new Set(['0', '1']));
    expect(raced.map((answer) => answer.status).sort()).toEqual([200, 400]);
  });
  it('publishes keys rotated by the operator from both instances at once, and ID tokens from either verify', async () => {
    // As `oc-host keys rotate --oidc` on the shared database, between the instances' periodic reloads.
    const added = await rotateOidcKeys(store, Date.now());
    const keySets = await Promise.all(instances.map(async (instance) => (await fetch(`${instance.url}/oidc/jwks`)).json() as Promise<any>));
    expect(keySets[0]).toEqual(keySets[1]);
    const published = keySets[0].keys.map((key: { kid: string }) => key.kid);
    expect(published).toEqual(expect.arrayContaining(added.map((key) => key.kid)));
    expect(published).toHaveLength(6); // the retired keys stay published

    const issued = await registry.clients.create({ client_name: 'After the rotation', redirect_uris: [REDIRECT] });
    const config = await relyingParty(issued.client_id, issued.client_secret);
    const { browser, did } = await signedIn();
    for (let i = 0; i < 2; i++) {
      const authorized = await authorize(browser, await codeRequest(config, 'openid'));
      proxy.steerAwayFrom(i);
      const tokens = await exchange(config, authorized);
      expect(proxy.lastServed((served) => served.path === '/oidc/token')).toBe(1 - i);
      expect(tokens.claims()?.sub).toBe(did);
      expect(added.map((key) => key.kid)).toContain(decodeProtectedHeader(tokens.id_token as string).kid);
    }
  });
  it('runs a device authorization across both: code, the page, sign-in and consent hop; polls are timed and the code is used once for both', async () => {
    const tv = await registry.clients.create({
      client_name: 'Two-instance TV',
      redirect_uris: [],
      device: true,
      token_endpoint_auth_method: 'none',
    });
    const config = await relyingParty(tv.client_id);
    const asked = await client.initiateDeviceAuthorization(config, { scope: 'openid offline_access' });
    const askedOn = proxy.lastServed((served) => served.path === '/oidc/device/auth');
    expect(asked.interval).toBe(60);

    // The device polls the other instance: pending. Its next poll, at once, on the first: too soon,
    // because the last poll's time is in Redis, not in the instance that saw it.
    proxy.steerAwayFrom(askedOn);
    const pending = await devicePoll(tv.client_id, asked.device_code);
    expect(pending.servedBy).not.toBe(askedOn);
    expect(pending).toMatchObject({ status: 400, body: { error: 'authorization_pending' } });
    proxy.steerAwayFrom(pending.servedBy);
    const tooSoon = await devicePoll(tv.client_id, asked.device_code);
    expect(tooSoon.servedBy).not.toBe(pending.servedBy);
    expect(tooSoon).toMatchObject({ status: 400, body: { error: 'slow_down' } });

    // The person types the code: the entry page from one instance, the code posted to the other,
    // the question's answer to the first again.
    const browser = new ProxyBrowser(issuer);
    const mark = proxy.served.length;
    const entry = await browser.request('GET', '/oidc/device');
    expect(entry.status).toBe(200);
    const entryOn = lastBackend();
    const typed = deviceForm(entry.body);
    proxy.steerAwayFrom(entryOn);
    const question = await browser.request('POST', typed.action, { xsrf: typed.xsrf, user_code: asked.user_code.toLowerCase() });
    const questionOn = lastBackend();
    expect(questionOn).not.toBe(entryOn);
    expect(question.status, question.body.slice(0, 600)).toBe(200);
    expect(question.body).toContain('Is this your device?');
    expect(question.body).toContain('Two-instance TV');
    const confirm = deviceForm(question.body);
    proxy.steerAwayFrom(questionOn);
    const confirmed = proxy.served.length;
    const signinHop = await browser.follow(confirm.action, 'POST', { xsrf: confirm.xsrf, user_code: asked.user_code, confirm: 'yes' });
    expect(proxy.served[confirmed]?.backend).not.toBe(questionOn);
    // No host session: the interaction sends the browser to the sign-in page and back.
    expect(new URL(signinHop.url).pathname, `${signinHop.status} ${signinHop.url}`).toBe('/signin');
    const back = new URL(signinHop.url).searchParams.get('return_to') as string;
    expect(back).toMatch(/^\/oidc\/interaction\/[A-Za-z0-9_-]+$/);
    const interactionFrom = proxy.lastServed((served) => served.path.startsWith('/oidc/interaction/'));
    const did = await browser.signIn(newWallet());
    proxy.steerAwayFrom(interactionFrom);
    const resumed = proxy.served.length;
    const consent = await browser.follow(new URL(back, issuer).href);
    expect(proxy.served[resumed]?.backend).not.toBe(interactionFrom);
    expect(consent.status).toBe(200);
    expect(consent.url).toContain('/oidc/interaction/');
    const done = await browser.allow(consent);
    expect(done.status, `${done.url}\n${done.body.slice(0, 600)}`).toBe(200);
    expect(new URL(done.url).pathname).toMatch(/^\/oidc\/device\//);
    expect(done.body).toContain('Your device is signed in');
    expect(servedSince(mark)).toEqual(new Set([0, 1]));

    // The tokens come from the other instance than the one that said pending (an answered
    // code is not timed, so this poll right after the one that was too soon goes through).
    proxy.steerAwayFrom(pending.servedBy);
    const granted = await devicePoll(tv.client_id, asked.device_code);
    expect(granted.servedBy).not.toBe(pending.servedBy);
    expect(granted.status, JSON.stringify(granted.body)).toBe(200);
    expect(decodeJwt(granted.body.id_token as string).sub).toBe(did);
    expect(granted.body.refresh_token).toBeTypeOf('string');
    proxy.steerAwayFrom(granted.servedBy);
    const info = await client.fetchUserInfo(config, granted.body.access_token as string, did);
    expect(info.sub).toBe(did);

    // Used once: polled again on the other instance it is refused, and the replay ends what it gave, on both.
    proxy.steerAwayFrom(granted.servedBy);
    const again = await devicePoll(tv.client_id, asked.device_code);
    expect(again.servedBy).not.toBe(granted.servedBy);
    expect(again).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    for (const instance of instances) {
      const userinfo = await fetch(`${instance.url}/oidc/userinfo`, {
        headers: { authorization: `Bearer ${granted.body.access_token as string}` },
      });
      expect(userinfo.status).toBe(401);
    }
  });

  it("counts the verification page's guesses from one network on both instances against one budget", async () => {
    const tv = await registry.clients.create({
      client_name: 'Guessed TV',
      redirect_uris: [],
      device: true,
      token_endpoint_auth_method: 'none',
    });
    const asked = await client.initiateDeviceAuthorization(await relyingParty(tv.client_id), { scope: 'openid' });
    // Addresses of their own in 127.0.0.0/8, on networks no other case here uses.
    const guesser = '127.0.40.1';
    const wrong = asked.user_code === 'ZZZZ-ZZZZ' ? 'ZZZZ-ZZZX' : 'ZZZZ-ZZZZ';
    // Half the guesses on each instance: a count per instance would allow as many again on each.
    for (let tried = 0; tried < DEVICE_CODES_PER_HOUR; tried++) {
      const guess = await typeDeviceCode(guesser, wrong, tried % 2);
      expect(guess.status, `guess ${tried}`).toBe(200);
      expect(guess.body).toContain('That code is not right.');
    }
    // Past the budget, on either instance, even the right code is not looked up from that network.
    for (const instance of [0, 1]) {
      const stopped = await typeDeviceCode(guesser, asked.user_code, instance);
      expect(stopped.status).toBe(429);
      expect(Number(stopped.retryAfter)).toBeGreaterThan(0);
      expect(stopped.body).toContain('Too many codes tried');
      expect(stopped.body).not.toContain('Guessed TV');
    }
    // Another network is not held back.
    const other = await typeDeviceCode('127.0.41.1', asked.user_code, 0);
    expect(other.status).toBe(200);
    expect(other.body).toContain('Guessed TV');
  });
});
