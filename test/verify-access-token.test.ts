/**
 * An API (resource server) that checks oc-host's JWT access tokens with
 * `@oc-host/verify` (docs/protocol.md §8 "APIs" and "Revoking API tokens";
 * packages/verify/README.md "APIs"), on every engine: a Fastify and an
 * Express API on loopback and a Hono one, guarded by `requireAccessToken`,
 * keys and revocations fetched from the real host over HTTP, tokens from the
 * real provider through `openid-client` (client_credentials, and a code flow
 * with a resource indicator).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyInstance } from 'fastify';
import { Hono } from 'hono';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from 'jose';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rotateOidcKeys, type OidcService } from '../src/features/oidc/index.js';
import { createAccessTokenVerifier, stopRevocationPolling, type AccessTokenVerifier } from '../packages/verify/src/index.js';
import * as forExpress from '../packages/verify/src/express.js';
import * as forFastify from '../packages/verify/src/fastify.js';
import * as forHono from '../packages/verify/src/hono.js';
import { AuthHarness, forEachEngine, LOCAL_ORIGIN } from './support/auth-harness.js';
import { WallClock } from './support/clock.js';
import { discover, operatorRegistry, ProviderBrowser } from './support/oidc-rp.js';
import { newWallet } from './support/auth-client.js';

const API = 'https://invoices.example/api';
const OTHER_API = 'https://payroll.example/api';
const REDIRECT = 'https://app.example/callback';

interface Answer {
  readonly status: number;
  readonly challenge: string | null;
  readonly body: Record<string, unknown>;
}

async function call(base: string, path: string, token?: string, method = 'GET'): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    body: (await response.json()) as Record<string, unknown>,
  };
}

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function apiSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let host: FastifyInstance;
  let hostUrl: string;
  let registry: OidcService;
  let verifier: AccessTokenVerifier;
  let fastifyApi: FastifyInstance;
  let fastifyBase: string;
  let expressServer: Server;
  let expressBase: string;
  let honoApi: Hono<{ Variables: forHono.OcAccessTokenVariables }>;

  beforeAll(async () => {
    // The provider library reads the wall clock (Date): it is the host's test clock here.
    vi.useFakeTimers({ toFake: ['Date'] });
    harness = await AuthHarness.open(engine, new WallClock(Date.now()));
    host = await harness.app();
    await host.listen({ port: 0, host: '127.0.0.1' });
    hostUrl = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
    registry = await operatorRegistry(harness.store, LOCAL_ORIGIN, harness.clock.now);
    await registry.resources.add({ uri: API, name: 'Invoices', scopes: ['read:invoices', 'write:invoices'] });
    await registry.resources.add({ uri: OTHER_API, name: 'Payroll', scopes: ['read:payroll'] });

    // One verifier for the three APIs: keys and the revocation feed from the running host.
    verifier = createAccessTokenVerifier({
      issuer: LOCAL_ORIGIN,
      audience: API,
      jwksUrl: `${hostUrl}/oidc/jwks`,
      revocations: { url: `${hostUrl}/api/auth/revocations`, intervalSeconds: 1 },
    });

    fastifyApi = Fastify();
    fastifyApi.get(
      '/invoices',
      { preHandler: forFastify.requireAccessToken({ verifier, scopes: ['read:invoices'] }) },
      async (request) => ({
        sub: request.ocAccessToken?.sub,
        client_id: request.ocAccessToken?.client_id,
      }),
    );
    fastifyApi.post('/invoices', { preHandler: forFastify.requireAccessToken({ verifier, scopes: ['write:invoices'] }) }, async () => ({
      ok: true,
    }));
    await fastifyApi.listen({ port: 0, host: '127.0.0.1' });
    fastifyBase = `http://127.0.0.1:${(fastifyApi.server.address() as AddressInfo).port}`;

    const app = express();
    app.get('/invoices', forExpress.requireAccessToken({ verifier, scopes: ['read:invoices'] }), (request, response) => {
      response.json({ sub: request.ocAccessToken?.sub, client_id: request.ocAccessToken?.client_id });
    });
    app.post('/invoices', forExpress.requireAccessToken({ verifier, scopes: ['write:invoices'] }), (_request, response) => {
      response.json({ ok: true });
    });
    expressServer = createServer(app);
    expressBase = await listening(expressServer);

    honoApi = new Hono<{ Variables: forHono.OcAccessTokenVariables }>();
    honoApi.get('/invoices', forHono.requireAccessToken({ verifier, scopes: ['read:invoices'] }), (c) =>
      c.json({ sub: c.get('ocAccessToken').sub, client_id: c.get('ocAccessToken').client_id }),
    );
    honoApi.post('/invoices', forHono.requireAccessToken({ verifier, scopes: ['write:invoices'] }), (c) => c.json({ ok: true }));
  });

  afterAll(async () => {
    stopRevocationPolling();
    await fastifyApi?.close();
    await new Promise((resolve) => expressServer?.close(resolve));
    await harness?.close();
    vi.useRealTimers();
  });

  async function honoCall(path: string, token?: string, method = 'GET'): Promise<Answer> {
    const response = await honoApi.request(path, { method, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
    return {
      status: response.status,
      challenge: response.headers.get('www-authenticate'),
      body: (await response.json()) as Record<string, unknown>,
    };
  }

  /** The same request to the three APIs; their answers, which must agree. */
  async function everyApi(path: string, token?: string, method = 'GET'): Promise<Answer> {
    const answers = [
      await call(fastifyBase, path, token, method),
      await call(expressBase, path, token, method),
      await honoCall(path, token, method),
    ];
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[2]).toEqual(answers[0]);
    return answers[0] as Answer;
  }

  async function machine(scopes: readonly string[] = ['read:invoices', 'read:payroll']) {
    const issued = await registry.clients.create({ client_name: 'Billing job', redirect_uris: [], machine: true, api_scopes: [...scopes] });
    return { issued, config: await discover(host, issued.client_id, issued.client_secret) };
  }

  /** Polls the API until it answers `status` (the verifier follows the revocation feed every second). */
  async function untilStatus(token: string, status: number): Promise<void> {
    await vi.waitFor(
      async () => {
        // The feed caches an answer a second by the host's clock: move it on, never wait for it.
        harness.clock.advance(1100);
        expect((await call(fastifyBase, '/invoices', token)).status).toBe(status);
      },
      { timeout: 15_000, interval: 100 },
    );
  }

  it('lets a machine client in with the scope the route needs, and answers 403 insufficient_scope without it', async () => {
    const { issued, config } = await machine();
    const granted = await client.clientCredentialsGrant(config, { scope: 'read:invoices', resource: API });
    expect(decodeProtectedHeader(granted.access_token)).toMatchObject({ typ: 'at+jwt', alg: 'ES256' });
    expect(await everyApi('/invoices', granted.access_token)).toEqual({
      status: 200,
      challenge: null,
      body: { sub: issued.client_id, client_id: issued.client_id },
    });
    expect(await everyApi('/invoices', granted.access_token, 'POST')).toEqual({
      status: 403,
      challenge: `Bearer realm="${API}", error="insufficient_scope", scope="write:invoices"`,
      body: { ok: false, error: 'insufficient_scope', reason: 'insufficient_scope' },
    });
    // A token for another API is not this one's, whatever its signature.
    const other = await client.clientCredentialsGrant(config, { scope: 'read:payroll', resource: OTHER_API });
    expect(await everyApi('/invoices', other.access_token)).toEqual({
      status: 401,
      challenge: `Bearer realm="${API}", error="invalid_token", error_description="the access token is invalid or expired"`,
      body: { ok: false, error: 'invalid_token', reason: 'invalid_token' },
    });
    // No token: a challenge without an error code (RFC 6750 §3.1).
    expect(await everyApi('/invoices')).toEqual({
      status: 401,
      challenge: `Bearer realm="${API}"`,
      body: { ok: false, error: 'not_authenticated', reason: 'not_authenticated' },
    });
    // An opaque token (no resource asked for) is told apart: the app must ask for this API.
    const opaque = await client.clientCredentialsGrant(config, {});
    expect(opaque.access_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const refused = await everyApi('/invoices', opaque.access_token);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toBe(
      `Bearer realm="${API}", error="invalid_token", error_description="not a JWT access token: ask for one with resource=${API}"`,
    );
  });

  /** A person signs in to an app through the host and the app's code flow, asking for the API; the app's tokens. */
  async function personTokens(scope: string) {
    const issued = await registry.clients.create({ client_name: 'Books', redirect_uris: [REDIRECT], api_scopes: ['read:invoices'] });
    const config = await discover(host, issued.client_id, issued.client_secret);
    const signedIn = harness.browser(host);
    const reply = await signedIn.signIn(newWallet());
    expect(reply.status).toBe(200);
    const browser = new ProviderBrowser(host, signedIn);
    const verifierCode = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope,
      prompt: 'consent',
      resource: API,
      state: 'api',
      code_challenge: await client.calculatePKCECodeChallenge(verifierCode),
      code_challenge_method: 'S256',
    });
    let hop = await browser.follow(url.href);
    if (hop.status === 200 && hop.url.includes('/oidc/interaction/')) hop = await browser.allow(hop);
    const tokens = await client.authorizationCodeGrant(config, new URL(hop.location as string), {
      pkceCodeVerifier: verifierCode,
      expectedState: 'api',
    });
    return { issued, config, tokens, did: reply.body.account.did_oc as string, signedIn };
  }

  it("lets a person in through an app's code flow with a resource indicator; a refresh token's revocation ends the grant's tokens", async () => {
    const { issued, config, tokens, did } = await personTokens('openid offline_access read:invoices');
    expect(decodeJwt(tokens.access_token).oc_grant).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await everyApi('/invoices', tokens.access_token)).toMatchObject({
      status: 200,
      body: { sub: did, client_id: issued.client_id },
    });
    expect((await everyApi('/invoices', tokens.access_token, 'POST')).status).toBe(403);

    // The app revokes its refresh token: the grant ends, and with it this access token, once the feed is followed.
    await client.tokenRevocation(config, tokens.refresh_token as string);
    await untilStatus(tokens.access_token, 401);
  });

  it("ends an app's API tokens with the host session unless the app was granted offline_access", async () => {
    const bound = await personTokens('openid read:invoices');
    const kept = await personTokens('openid offline_access read:invoices');
    for (const { tokens } of [bound, kept]) expect((await call(fastifyBase, '/invoices', tokens.access_token)).status).toBe(200);
    expect((await bound.signedIn.post('/api/auth/logout?scope=all')).status).toBe(200);
    expect((await kept.signedIn.post('/api/auth/logout?scope=all')).status).toBe(200);
    await untilStatus(bound.tokens.access_token, 401);
    // The app with offline access keeps acting for the person, at the provider and at the API alike.
    const refreshed = await client.refreshTokenGrant(kept.config, kept.tokens.refresh_token as string);
    expect((await call(fastifyBase, '/invoices', refreshed.access_token)).status).toBe(200);
    expect((await call(fastifyBase, '/invoices', kept.tokens.access_token)).status).toBe(200);
  });

  it('refuses a token revoked at /oidc/token/revocation once the feed is followed, and every token of a deleted client', async () => {
    const { issued, config } = await machine();
    const first = await client.clientCredentialsGrant(config, { scope: 'read:invoices', resource: API });
    const second = await client.clientCredentialsGrant(config, { scope: 'read:invoices', resource: API });
    expect((await call(fastifyBase, '/invoices', first.access_token)).status).toBe(200);
    // RFC 7009: the provider takes its own JWT access token back (the library alone would answer unsupported_token_type).
    await client.tokenRevocation(config, first.access_token);
    await untilStatus(first.access_token, 401);
    expect((await call(fastifyBase, '/invoices', second.access_token)).status).toBe(200);
    const feed = (await (await fetch(`${hostUrl}/api/auth/revocations`)).json()) as { revocations: Array<Record<string, unknown>> };
    expect(feed.revocations).toContainEqual({
      jti: decodeJwt(first.access_token).jti,
      exp: decodeJwt(first.access_token).exp,
      kind: 'access_token',
    });

    // Another client may not take it back; a token that is not the provider's is answered 200 and changes nothing.
    const { config: strangerConfig } = await machine();
    await expect(client.tokenRevocation(strangerConfig, second.access_token)).rejects.toMatchObject({ error: 'invalid_request' });
    await client.tokenRevocation(config, `${second.access_token.slice(0, -4)}AAAA`);
    expect((await call(fastifyBase, '/invoices', second.access_token)).status).toBe(200);

    // The operator deletes the client: every token it holds ends.
    expect(await registry.clients.remove(issued.client_id)).toBe(true);
    await untilStatus(second.access_token, 401);
  });

  it('refuses a tampered, unsigned, expired or foreign token', async () => {
    const { config } = await machine();
    const { access_token: token } = await client.clientCredentialsGrant(config, { scope: 'read:invoices', resource: API });
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const claims = decodeJwt(token);
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const invalid = { status: 401, body: { ok: false, error: 'invalid_token', reason: 'invalid_token' } };
    // Another scope written in, the signature left as it was.
    expect(
      await everyApi('/invoices', `${header}.${encode({ ...claims, scope: 'read:invoices write:invoices' })}.${signature}`),
    ).toMatchObject(invalid);
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    expect(await everyApi('/invoices', `${header}.${payload}.${flipped}`)).toMatchObject(invalid);
    // alg none, with or without a signature segment.
    const none = encode({ alg: 'none', typ: 'at+jwt' });
    expect(await everyApi('/invoices', `${none}.${payload}.`)).toMatchObject(invalid);
    expect(await everyApi('/invoices', `${none}.${payload}.${signature}`)).toMatchObject(invalid);
    // HS256 with the published key's bytes as the secret (the key-confusion attack).
    const jwks = (await (await fetch(`${hostUrl}/oidc/jwks`)).json()) as { keys: Array<{ alg: string; x: string }> };
    const published = jwks.keys.find((key) => key.alg === 'ES256') as { x: string };
    const confused = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: decodeProtectedHeader(token).kid as string })
      .sign(Buffer.from(published.x, 'base64url'));
    expect(await everyApi('/invoices', confused)).toMatchObject(invalid);

    // Expired: the same token, checked after its exp (and within the tolerance, still good).
    const exp = claims.exp as number;
    const later = createAccessTokenVerifier({
      issuer: LOCAL_ORIGIN,
      audience: API,
      jwksUrl: `${hostUrl}/oidc/jwks`,
      now: new Date((exp + 1) * 1000),
    });
    expect(await later.check(token)).toEqual({ ok: false, problem: 'invalid' });
    const tolerant = createAccessTokenVerifier({
      issuer: LOCAL_ORIGIN,
      audience: API,
      jwksUrl: `${hostUrl}/oidc/jwks`,
      now: new Date((exp + 1) * 1000),
      clockToleranceSeconds: 5,
    });
    expect((await tolerant.verify(token))?.jti).toBe(claims.jti);
    // Another issuer.
    const elsewhere = createAccessTokenVerifier({ issuer: 'https://auth.example.org', audience: API, jwksUrl: `${hostUrl}/oidc/jwks` });
    expect(await elsewhere.verify(token)).toBeNull();
  });

  it('refetches the JWKS once for a kid it does not know (a key rotation), and no more often than the cool-down allows', async () => {
    // The host's instances publish the rotated set; here, a second instance on the same database.
    let jwksFrom = hostUrl;
    const fetches: string[] = [];
    const rotating = createAccessTokenVerifier({
      issuer: LOCAL_ORIGIN,
      audience: API,
      jwksUrl: `${hostUrl}/oidc/jwks`,
      jwksCooldownSeconds: 0,
      fetch: async (input, init) => {
        fetches.push(String(input));
        return fetch(String(input).replace(hostUrl, jwksFrom), init);
      },
    });
    const { issued, config } = await machine();
    const before = await client.clientCredentialsGrant(config, { scope: 'read:invoices', resource: API });
    expect((await rotating.verify(before.access_token))?.client_id).toBeDefined();
    expect(fetches).toHaveLength(1);

    await rotateOidcKeys(harness.store, harness.clock.ms, 'ES256');
    const next = await harness.app();
    await next.listen({ port: 0, host: '127.0.0.1' });
    jwksFrom = `http://127.0.0.1:${(next.server.address() as AddressInfo).port}`;
    const nextConfig = await discover(next, issued.client_id, issued.client_secret);
    const after = await client.clientCredentialsGrant(nextConfig, { scope: 'read:invoices', resource: API });
    expect(decodeProtectedHeader(after.access_token).kid).not.toBe(decodeProtectedHeader(before.access_token).kid);
    expect((await rotating.verify(after.access_token))?.client_id).toBeDefined();
    expect(fetches).toHaveLength(2);
    // The retired key is still published: the earlier token still verifies, with no fetch.
    expect(await rotating.verify(before.access_token)).not.toBeNull();
    expect(fetches).toHaveLength(2);

    // With a cool-down, made-up kids cost no fetch.
    const slow = createAccessTokenVerifier({
      issuer: LOCAL_ORIGIN,
      audience: API,
      jwksUrl: `${hostUrl}/oidc/jwks`,
      fetch: async (input, init) => {
        fetches.push(String(input));
        return fetch(input, init);
      },
    });
    fetches.length = 0;
    expect(await slow.verify(before.access_token)).not.toBeNull();
    const [, body, sig] = before.access_token.split('.') as [string, string, string];
    for (const kid of ['a', 'b', 'c']) {
      const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid })).toString('base64url');
      expect(await slow.verify(`${header}.${body}.${sig}`)).toBeNull();
    }
    expect(fetches).toHaveLength(1);
  });
}

describe('the access-token verifier on its own', () => {
  it('takes at+jwt and application/at+jwt, refuses other types, symmetric keys and bad options', async () => {
    const pair = await generateKeyPair('ES256', { extractable: true });
    const jwks = { keys: [{ ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] };
    const now = Math.floor(Date.now() / 1000);
    const mint = (typ: string, claims: Record<string, unknown> = {}) =>
      new SignJWT({ client_id: 'c1', scope: 'read', ...claims })
        .setProtectedHeader({ alg: 'ES256', typ, kid: 'k1' })
        .setIssuer('https://auth.example.com')
        .setAudience(API)
        .setSubject('c1')
        .setJti('j1')
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(pair.privateKey);
    const verifier = createAccessTokenVerifier({ issuer: 'https://auth.example.com', audience: API, jwks });
    expect((await verifier.check(await mint('at+jwt'))).ok).toBe(true);
    expect((await verifier.check(await mint('application/at+jwt'))).ok).toBe(true);
    expect(await verifier.check(await mint('JWT'))).toEqual({ ok: false, problem: 'invalid' });
    expect(await verifier.check(await mint('at+jwt', { nbf: now + 60 }))).toEqual({ ok: false, problem: 'invalid' });
    expect(await verifier.check(await mint('at+jwt', { client_id: undefined }))).toEqual({ ok: false, problem: 'invalid' });
    expect(await verifier.check('opaque-token')).toEqual({ ok: false, problem: 'malformed' });
    const onlyEdDsa = createAccessTokenVerifier({ issuer: 'https://auth.example.com', audience: API, jwks, algorithms: ['EdDSA'] });
    expect(await onlyEdDsa.verify(await mint('at+jwt'))).toBeNull();

    expect(() =>
      createAccessTokenVerifier({ issuer: 'https://auth.example.com', audience: API, jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } }),
    ).toThrow(/symmetric key/);
    expect(() =>
      createAccessTokenVerifier({ issuer: 'https://auth.example.com', audience: API, algorithms: ['HS256' as 'ES256'] }),
    ).toThrow(/HS256 is not one/);
    expect(() => createAccessTokenVerifier({ issuer: 'https://auth.example.com', audience: '' })).toThrow(/audience/);
    expect(() =>
      createAccessTokenVerifier({ issuer: 'https://auth.example.com', audience: API, jwksUrl: 'http://auth.example.com/oidc/jwks' }),
    ).toThrow(/must be https/);
    expect(() => forFastify.requireAccessToken({ verifier, scopes: ['two words'] })).toThrow(/no scope/);
  });
});

await forEachEngine('an API checking access tokens', apiSuite);
