/**
 * The OpenID provider against an attacker (docs/protocol.md §8 "Clients",
 * "Flows" and "Pages"), on every engine:
 *
 * - no outbound request a client names: `jwks_uri` and
 *   `sector_identifier_uri` are refused at registration, and a client stored
 *   with a `jwks_uri` before that rule makes the provider connect nowhere
 *   (a real server on loopback counts the connections it gets);
 * - a `logo_uri` or redirect URI never writes anything but a scheme, host
 *   and port into a Content-Security-Policy;
 * - every answer under /oidc carries the service's headers, the library's
 *   own HTML (its auto-submitting forms) the pages' policy;
 * - only the client a token was issued to learns anything by introspecting it;
 * - a client authenticates only with the method it registered;
 * - under the production rules (PUBLIC_URL https), plain-http redirect and
 *   post-logout URIs are refused, except a native app's loopback redirect,
 *   at registration and in `oc-host oidc clients add`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runOidcCommand } from '../src/cli/oidc.js';
import type { OperatorIo } from '../src/cli/operator.js';
import { UsageError } from '../src/cli/usage.js';
import { cspSourceOf, OidcService, type IssuedClient } from '../src/features/oidc/index.js';
import { newWallet } from './support/auth-client.js';
import { AuthHarness, forEachEngine, LOCAL_ORIGIN } from './support/auth-harness.js';
import { TestClock } from './support/clock.js';
import { discover, operatorRegistry, ProviderBrowser } from './support/oidc-rp.js';

const REDIRECT = 'https://app.example/callback';
const PRODUCTION = 'https://auth.example.com';
const HSTS = 'max-age=31536000';

/** A server on loopback that counts the connections it is offered: none may come. */
class Target {
  connections = 0;
  requests = 0;
  private constructor(readonly server: Server) {
    server.on('connection', () => {
      this.connections += 1;
    });
  }
  static async start(): Promise<Target> {
    let target: Target | undefined;
    const server = createServer((_request, response) => {
      if (target !== undefined) target.requests += 1;
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
    });
    target = new Target(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return target;
  }
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }
  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

class RecordingIo implements OperatorIo {
  readonly lines: string[] = [];
  out(line: string): void {
    this.lines.push(line);
  }
  err(): void {}
  async ask(): Promise<string | null> {
    return null;
  }
}

/** The directives of a policy, by name. */
function directives(policy: unknown): Map<string, string[]> {
  expect(typeof policy, 'a Content-Security-Policy header').toBe('string');
  const map = new Map<string, string[]>();
  for (const part of String(policy).split(';')) {
    const [name, ...values] = part.trim().split(/\s+/);
    if (name) map.set(name, values);
  }
  return map;
}

/** A policy only ever names the directives the pages' policy has. */
function expectOnlyPageDirectives(policy: unknown): void {
  const names = [...directives(policy).keys()].sort();
  expect(names).toEqual(
    ['base-uri', 'connect-src', 'default-src', 'form-action', 'frame-ancestors', 'img-src', 'script-src', 'style-src'].filter((name) =>
      names.includes(name),
    ),
  );
  expect(names).not.toContain('sandbox');
  expect(names).not.toContain('report-uri');
}

function hardeningSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let app: FastifyInstance;
  let production: FastifyInstance;
  let registry: OidcService;

  beforeAll(async () => {
    harness = await AuthHarness.open(engine, new TestClock(Date.now()));
    app = await harness.app();
    production = await harness.app({ PUBLIC_URL: PRODUCTION });
    registry = await operatorRegistry(harness.store, LOCAL_ORIGIN, harness.clock.now);
  });
  afterAll(async () => {
    await harness.close();
  });

  /** A Connect app's API key, made by a person signed in on `on` at `origin`. */
  async function apiKey(on: FastifyInstance = app, origin = LOCAL_ORIGIN): Promise<string> {
    const owner = harness.browser(on, origin);
    expect((await owner.signIn(newWallet())).status).toBe(200);
    const created = await owner.post('/api/connect/apps', { name: 'Shop' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    return created.body.api_key as string;
  }

  /** RFC 7591 registration with a Connect app's key, as raw JSON. */
  async function register(key: string, metadata: Record<string, unknown>, on: FastifyInstance = app) {
    return on.inject({
      method: 'POST',
      url: '/oidc/register',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(metadata),
    });
  }

  async function signedInBrowser(): Promise<ProviderBrowser> {
    const host = harness.browser(app);
    expect((await host.signIn(newWallet())).status).toBe(200);
    return new ProviderBrowser(app, host);
  }

  /** An access token issued to `issued` for a new account, through consent. */
  async function accessTokenOf(issued: IssuedClient): Promise<string> {
    const config = await discover(app, issued.client_id, issued.client_secret);
    const browser = await signedInBrowser();
    const verifier = client.randomPKCECodeVerifier();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 's',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    let hop = await browser.follow(url.href);
    if (hop.status === 200 && hop.url.includes('/oidc/interaction/')) hop = await browser.allow(hop);
    expect(hop.location, `${hop.status} ${hop.url}`).toBeDefined();
    const tokens = await client.authorizationCodeGrant(config, new URL(hop.location as string), {
      pkceCodeVerifier: verifier,
      expectedState: 's',
    });
    return tokens.access_token;
  }

  // ---- item 4: no request to an address a client names ----

  it('refuses jwks_uri and sector_identifier_uri at registration at once, without a connection to the named address', async () => {
    const target = await Target.start();
    try {
      const key = await apiKey();
      const cases: Record<string, unknown>[] = [
        // An IP literal of loopback, and a name that resolves to it.
        { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `http://127.0.0.1:${target.port}/jwks` },
        { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: `https://localhost:${target.port}/jwks` },
        { redirect_uris: [REDIRECT], subject_type: 'pairwise', sector_identifier_uri: `http://localhost:${target.port}/sector` },
        { redirect_uris: [REDIRECT], subject_type: 'pairwise', sector_identifier_uri: `https://127.0.0.1:${target.port}/sector` },
        // A private address gets the same answer as loopback: nothing is looked up or reached.
        { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt', jwks_uri: 'https://10.0.0.1/jwks' },
      ];
      for (const metadata of cases) {
        const started = performance.now();
        const reply = await register(key, metadata);
        const took = performance.now() - started;
        expect(reply.statusCode, `${JSON.stringify(metadata)}: ${reply.body}`).toBe(400);
        expect(reply.json().error).toBe('invalid_client_metadata');
        expect(reply.json().error_description).toMatch(/^(jwks_uri|sector_identifier_uri) is not accepted/);
        expect(took, JSON.stringify(metadata)).toBeLessThan(1000);
      }
      expect(target.connections).toBe(0);
      expect(target.requests).toBe(0);
      // An inline key set is the way to register a private_key_jwt client.
      const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const inline = await register(key, {
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'private_key_jwt',
        jwks: { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256', use: 'sig' }] },
      });
      expect(inline.statusCode, inline.body).toBe(201);
    } finally {
      await target.close();
    }
  });

  it('makes no request for a client stored with a jwks_uri before the rule: its assertion is refused without a connection', async () => {
    const target = await Target.start();
    try {
      const clientId = `oc_${randomUUID().replaceAll('-', '')}`;
      const at = Date.now();
      await harness.store.insertOidcClient({
        client_id: clientId,
        metadata: JSON.stringify({
          client_name: 'Old',
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'private_key_jwt',
          // A name, resolved to loopback by the system resolver.
          jwks_uri: `http://localhost:${target.port}/jwks`,
        }),
        owner_app_id: null,
        first_party: false,
        created_at: at,
        updated_at: at,
      });
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
      const now = Math.floor(Date.now() / 1000);
      const input = `${part({ alg: 'ES256', typ: 'JWT' })}.${part({
        iss: clientId,
        sub: clientId,
        aud: `${LOCAL_ORIGIN}/oidc/token`,
        jti: randomUUID(),
        iat: now,
        exp: now + 60,
      })}`;
      const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url');
      const started = performance.now();
      const reply = await app.inject({
        method: 'POST',
        url: '/oidc/token/introspection',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          token: 'anything',
          client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
          client_assertion: `${input}.${signature}`,
        }).toString(),
      });
      expect(reply.statusCode, reply.body).toBe(401);
      expect(reply.json().error).toBe('invalid_client');
      expect(performance.now() - started).toBeLessThan(1000);
      expect(target.connections).toBe(0);
      expect(target.requests).toBe(0);
    } finally {
      await target.close();
    }
  });

  // ---- item 7: only a scheme, host and port goes into a policy ----

  it('writes only a valid scheme, host and port of a logo_uri or redirect URI into the policy', async () => {
    const hostile = 'https://app.example;sandbox;report-uri/callback';
    const issued = await registry.clients.create({
      client_name: 'Hostile',
      redirect_uris: [REDIRECT, hostile],
      logo_uri: "https://x;sandbox;report-uri/'unsafe-inline'/logo.png",
    });
    const config = await discover(app, issued.client_id, issued.client_secret);
    for (const redirect of [REDIRECT, hostile]) {
      const browser = await signedInBrowser();
      const verifier = client.randomPKCECodeVerifier();
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: redirect,
        scope: 'openid',
        state: 's',
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      });
      const consent = await browser.follow(url.href);
      expect(consent.status, consent.url).toBe(200);
      expect(consent.url).toMatch(/\/oidc\/interaction\//);
      const policy = consent.headers['content-security-policy'];
      expectOnlyPageDirectives(policy);
      expect(String(policy)).not.toContain(';sandbox');
      expect(String(policy)).not.toContain("'unsafe-inline'");
      expect(directives(policy).get('img-src')).toEqual(["'self'", 'data:']);
      expect(directives(policy).get('form-action')).toEqual(redirect === REDIRECT ? ["'self'", 'https://app.example'] : ["'self'"]);
    }
    // The sign-in page an interaction sends a stranger to names the logo's origin in the same way.
    const stranger = new ProviderBrowser(app, harness.browser(app));
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid',
      state: 's',
      code_challenge: await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
    const signin = await stranger.follow(url.href);
    expect(new URL(signin.url).pathname).toBe('/signin');
    expectOnlyPageDirectives(signin.headers['content-security-policy']);
    expect(String(signin.headers['content-security-policy'])).not.toContain('x;sandbox');
  });

  it('cspSourceOf answers scheme://host[:port] of the policy grammar, or null', () => {
    expect(cspSourceOf('https://app.example/cb')).toBe('https://app.example');
    expect(cspSourceOf('https://App.Example:8443/cb?x=1')).toBe('https://app.example:8443');
    expect(cspSourceOf('http://127.0.0.1:5000/cb')).toBe('http://127.0.0.1:5000');
    expect(cspSourceOf('https://bücher.example/')).toBe('https://xn--bcher-kva.example');
    expect(cspSourceOf('http://app.example/', ['https:'])).toBeNull();
    for (const hostile of [
      'https://x;sandbox;report-uri/',
      "https://x'unsafe-inline'/",
      'https://x,y/',
      'https://a.example./',
      'https://[::1]/',
      'https://x*y/',
      'https://under_score.example/',
      'javascript:alert(1)',
      'data:text/html,x',
      'not a url',
    ]) {
      expect(cspSourceOf(hostile), hostile).toBeNull();
    }
  });

  // ---- item 8: the service's headers on every answer under /oidc ----

  it('gives every answer under /oidc over https HSTS and Referrer-Policy, and the library’s own HTML the pages’ policy', async () => {
    for (const url of ['/.well-known/openid-configuration', '/oidc/jwks', '/oidc/auth?client_id=nobody', '/oidc/interaction/unknown']) {
      const reply = await production.inject({ url });
      expect(reply.headers['strict-transport-security'], url).toBe(HSTS);
      expect(reply.headers['referrer-policy'], url).toBe('no-referrer');
      expect(reply.headers['x-content-type-options'], url).toBe('nosniff');
    }
    // The interaction's own redirects too (a signed-in browser is sent straight back to the library).
    const issued = await registry.clients.create({ client_name: 'Headers', redirect_uris: [REDIRECT] });
    const browser = await signedInBrowser();
    const started = await browser.request(
      'GET',
      `/oidc/auth?${new URLSearchParams({ client_id: issued.client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 's' })}`,
    );
    expect(started.location).toMatch(/\/oidc\/interaction\//);
    const interaction = await browser.request('GET', started.location as string);
    expect(interaction.status).toBe(303);
    expect(interaction.headers['referrer-policy']).toBe('no-referrer');
    // The end-session of a browser with no session: the library's own self-submitting form.
    const form = await production.inject({ url: '/oidc/session/end' });
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('document.forms[0].submit()');
    expect(form.headers['strict-transport-security']).toBe(HSTS);
    expect(form.headers['referrer-policy']).toBe('no-referrer');
    const policy = directives(form.headers['content-security-policy']);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy.get('form-action')).toEqual(["'self'"]);
    // Its inline script runs by its hash, nothing else inline does.
    expect(policy.get('script-src')?.some((source) => /^'sha256-[A-Za-z0-9+/]+=*'$/.test(source))).toBe(true);
    expect(policy.get('script-src')).not.toContain("'unsafe-inline'");
  });

  it('gives a form_post answer the pages’ policy, with form-action naming only the registered redirect URI’s origin', async () => {
    const issued = await registry.clients.create({ client_name: 'Form post', redirect_uris: [REDIRECT] });
    const query = (redirect: string) =>
      new URLSearchParams({
        client_id: issued.client_id,
        redirect_uri: redirect,
        response_type: 'code',
        response_mode: 'form_post',
        scope: 'openid',
        prompt: 'none',
        state: 's',
      }).toString();
    // prompt=none without a session: login_required, posted to the app by the library's form.
    const posted = await app.inject({ url: `/oidc/auth?${query(REDIRECT)}` });
    expect(posted.body).toContain('document.forms[0].submit()');
    expect(posted.body).toContain('login_required');
    const policy = directives(posted.headers['content-security-policy']);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
    expect(policy.get('form-action')).toEqual(["'self'", 'https://app.example']);
    expect(policy.get('script-src')?.some((source) => source.startsWith("'sha256-"))).toBe(true);
    expect(posted.headers['referrer-policy']).toBe('no-referrer');
    // A redirect URI the client did not register is no form target: the error page, nothing added.
    const refused = await app.inject({ url: `/oidc/auth?${query('https://evil.example/cb')}` });
    expect(refused.body).not.toContain('document.forms[0].submit()');
    expect(directives(refused.headers['content-security-policy']).get('form-action')).toEqual(["'self'"]);
  });

  // ---- item 9: introspection by the token's own client only ----

  it("answers another client's introspection of a token active: false, and the token's own client in full", async () => {
    const owner = await registry.clients.create({ client_name: 'Owner', redirect_uris: [REDIRECT] });
    const snoop = await registry.clients.create({ client_name: 'Snoop', redirect_uris: [REDIRECT] });
    const token = await accessTokenOf(owner);
    const own = await client.tokenIntrospection(await discover(app, owner.client_id, owner.client_secret), token);
    expect(own).toMatchObject({ active: true, client_id: owner.client_id });
    const other = await client.tokenIntrospection(await discover(app, snoop.client_id, snoop.client_secret), token);
    expect(other.active).toBe(false);
    expect(other).not.toHaveProperty('sub');
    expect(other).not.toHaveProperty('client_id');
    expect(other).not.toHaveProperty('scope');
  });

  // ---- item 10: the registered authentication method only ----

  it('authenticates a client only with the method it registered', async () => {
    const basic = await registry.clients.create({ client_name: 'Basic', redirect_uris: [REDIRECT] });
    const post = await registry.clients.create({
      client_name: 'Post',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_post',
    });
    const introspect = (issued: IssuedClient, how: 'basic' | 'post', secret = issued.client_secret as string) =>
      app.inject({
        method: 'POST',
        url: '/oidc/token/introspection',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          ...(how === 'basic'
            ? { authorization: `Basic ${Buffer.from(`${issued.client_id}:${encodeURIComponent(secret)}`).toString('base64')}` }
            : {}),
        },
        payload: new URLSearchParams({
          token: 'anything',
          ...(how === 'post' ? { client_id: issued.client_id, client_secret: secret } : {}),
        }).toString(),
      });
    expect((await introspect(basic, 'basic')).statusCode).toBe(200);
    expect((await introspect(post, 'post')).statusCode).toBe(200);
    for (const [issued, how] of [
      [basic, 'post'],
      [post, 'basic'],
    ] as const) {
      const reply = await introspect(issued, how);
      expect(reply.statusCode, `${issued.metadata.token_endpoint_auth_method} by ${how}`).toBe(401);
      expect(reply.json().error).toBe('invalid_client');
      // The same answer with a wrong secret: the method is checked before the secret.
      const wrong = await introspect(issued, how, 'wrong');
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json()).toEqual(reply.json());
    }
  });

  // ---- item 11: https redirects under the production rules ----

  it('refuses plain-http redirect and post-logout URIs at registration under the production rules, but for a native app on loopback', async () => {
    const key = await apiKey(production, PRODUCTION);
    const refused: Record<string, unknown>[] = [
      { redirect_uris: ['http://app.example/cb'] },
      { redirect_uris: ['http://127.0.0.1:5000/cb'] },
      { redirect_uris: ['https://app.example/cb'], post_logout_redirect_uris: ['http://app.example/bye'] },
      { redirect_uris: ['http://app.example/cb'], application_type: 'native' },
      { redirect_uris: ['http://localhost:5000/cb'], application_type: 'native', token_endpoint_auth_method: 'none' },
    ];
    for (const metadata of refused) {
      const reply = await register(key, metadata, production);
      expect(reply.statusCode, `${JSON.stringify(metadata)}: ${reply.body}`).toBe(400);
      expect(['invalid_redirect_uri', 'invalid_client_metadata']).toContain(reply.json().error);
    }
    const accepted: Record<string, unknown>[] = [
      { redirect_uris: ['https://app.example/cb'], post_logout_redirect_uris: ['https://app.example/bye'] },
      { redirect_uris: ['http://127.0.0.1:5000/cb', 'http://[::1]/cb'], application_type: 'native', token_endpoint_auth_method: 'none' },
      { redirect_uris: ['com.example.app:/cb'], application_type: 'native', token_endpoint_auth_method: 'none' },
    ];
    for (const metadata of accepted) {
      const reply = await register(key, metadata, production);
      expect(reply.statusCode, `${JSON.stringify(metadata)}: ${reply.body}`).toBe(201);
    }
    // Development (PUBLIC_URL http on loopback) keeps plain-http redirects for a developer's own apps.
    expect((await register(await apiKey(), { redirect_uris: ['http://localhost:3000/cb'] })).statusCode).toBe(201);
  });

  it('refuses plain-http redirect and post-logout URIs in `oc-host oidc clients add` under the production rules', async () => {
    const oidc = await OidcService.open({
      store: harness.store,
      issuer: PRODUCTION,
      serverSecret: new Uint8Array(32),
      development: false,
      now: harness.clock.now,
    });
    const run = (args: string[]) => runOidcCommand(['clients', 'add', '--name', 'App', ...args], { oidc, io: new RecordingIo() });
    for (const args of [
      ['--redirect-uri', 'http://app.example/cb'],
      ['--redirect-uri', 'http://127.0.0.1:5000/cb', '--public'],
      ['--redirect-uri', 'https://app.example/cb', '--post-logout-redirect-uri', 'http://app.example/bye'],
      ['--redirect-uri', 'http://localhost:5000/cb', '--public', '--native'],
    ]) {
      await expect(run(args), args.join(' ')).rejects.toThrow(UsageError);
    }
    expect(await run(['--redirect-uri', 'https://app.example/cb', '--post-logout-redirect-uri', 'https://app.example/bye'])).toBe(0);
    expect(await run(['--redirect-uri', 'http://127.0.0.1:5000/cb', '--public', '--native'])).toBe(0);
  });
}

await forEachEngine('oidc hardening', hardeningSuite);
