/**
 * The Express, Fastify and Hono adapters of @oc-host/verify, each serving a
 * small consumer site: the session comes from an `oc_session` cookie issued
 * by a running oc-host, or from `Authorization: Bearer`; of several
 * `oc_session` cookies the one that verifies (the newest, when several do)
 * wins; a pinned tab's `x-oc-tab-session` alone decides, and one that does
 * not verify is `tab_invalid`, never the cookie's session (docs/protocol.md
 * §3); requireSession, requireFreshSudo and requireFreshStepUp answer 401
 * with the host's error body (docs/protocol.md §4).
 *
 * Fastify is the real framework. Express and Hono are not installed: their
 * sites are node's http server with the two methods Express adds to the
 * response (`status`, `json`), and a Hono-shaped context over fetch
 * Request/Response with Hono's middleware order.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { SignJWT, decodeJwt, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSessionVerifier,
  resolveSession,
  stopRevocationPolling,
  type OcSessionClaims,
  type VerifySessionOptions,
} from '../packages/verify/src/index.js';
import * as express from '../packages/verify/src/express.js';
import * as fastify from '../packages/verify/src/fastify.js';
import * as hono from '../packages/verify/src/hono.js';
import type { VerifierInput } from '../packages/verify/src/verifier-input.js';
import { ISSUER, signInWithWallet, startHost, type RunningHost } from './support/consumer-host.js';

const SUDO_MAX_AGE = 300;
const LOCAL_KID = 'consumer-test-key';

interface SiteReply {
  readonly status: number;
  readonly body: any;
  readonly headers: Headers;
}

/** A consumer site with four routes: /whoami (session or null, and why null), /private (requireSession), /sudo (requireFreshSudo(300)), /step-up (requireFreshStepUp(300)); /unwired has a guard but no session middleware. */
interface Site {
  request(path: string, headers?: Record<string, string>): Promise<SiteReply>;
  close(): Promise<void>;
}

type SiteFactory = (input: VerifierInput) => Promise<Site>;

async function replyOf(response: Response): Promise<SiteReply> {
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text), headers: response.headers };
}

async function listening(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

// ---- Express: node http + the response methods Express adds ----

const expressSite: SiteFactory = async (input) => {
  const session = express.ocSession(input);
  const send: express.ExpressMiddleware = (request, response) => {
    response.status(200).json({ session: request.ocSession ?? null, reason: request.ocSessionReason ?? null });
  };
  const routes: Record<string, express.ExpressMiddleware[]> = {
    '/whoami': [session, send],
    '/private': [session, express.requireSession(), send],
    '/sudo': [session, express.requireFreshSudo(SUDO_MAX_AGE), send],
    '/step-up': [session, express.requireFreshStepUp(SUDO_MAX_AGE), send],
    '/unwired': [express.requireSession(), send],
  };
  const server = createServer((request: IncomingMessage, raw: ServerResponse) => {
    const response = Object.assign(raw, {
      status(code: number) {
        raw.statusCode = code;
        return response;
      },
      json(body: unknown) {
        raw.setHeader('content-type', 'application/json; charset=utf-8');
        raw.end(JSON.stringify(body));
        return response;
      },
    });
    const chain = routes[request.url ?? ''] ?? [];
    let index = 0;
    const next: express.ExpressLikeNext = (error) => {
      // Express's final handler: an error becomes a 500.
      if (error !== undefined) {
        response.status(500).json({ error: error instanceof Error ? error.message : String(error) });
        return;
      }
      const handler = chain[index++];
      if (handler === undefined) response.status(404).json({ error: 'not found' });
      else handler(request as IncomingMessage & { ocSession?: OcSessionClaims | null }, response, next);
    };
    next();
  });
  const url = await listening(server);
  return {
    request: async (path, headers = {}) => replyOf(await fetch(`${url}${path}`, { headers })),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
};

// ---- Fastify: the real framework ----

const fastifySite: SiteFactory = async (input) => {
  const app: FastifyInstance = Fastify({ logger: false });
  const options: fastify.OcSessionPluginOptions = 'verifyAny' in input ? { verifier: input } : (input as VerifySessionOptions);
  await app.register(fastify.ocSession, options);
  // Routes in an encapsulated child scope still see the session: the plugin is not encapsulated.
  await app.register(async (scope) => {
    scope.get('/whoami', async (request) => ({ session: request.ocSession, reason: request.ocSessionReason }));
    scope.get('/private', { preHandler: fastify.requireSession() }, async (request) => ({ session: request.ocSession }));
    scope.get('/sudo', { preHandler: fastify.requireFreshSudo(SUDO_MAX_AGE) }, async (request) => ({ session: request.ocSession }));
    scope.get('/step-up', { preHandler: fastify.requireFreshStepUp(SUDO_MAX_AGE) }, async (request) => ({ session: request.ocSession }));
  });
  const bare: FastifyInstance = Fastify({ logger: false });
  bare.get('/unwired', { preHandler: fastify.requireSession() }, async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as AddressInfo).port}`;
  return {
    request: async (path, headers = {}) => replyOf(await fetch(`${path === '/unwired' ? bareUrl : url}${path}`, { headers })),
    close: async () => {
      await app.close();
      await bare.close();
    },
  };
};

// ---- Hono: a Hono-shaped context over fetch Request/Response ----

function honoContext(request: Request): hono.HonoLikeContext & { res: Response | undefined } {
  const variables = new Map<string, unknown>();
  const headers = new Headers();
  return {
    res: undefined,
    req: { header: (name) => request.headers.get(name) ?? undefined },
    set: (key, value) => void variables.set(key, value),
    get: (key) => variables.get(key),
    header: (name, value) => headers.set(name, value),
    json: (body, status = 200) => {
      headers.set('content-type', 'application/json; charset=utf-8');
      return new Response(JSON.stringify(body), { status, headers });
    },
  };
}

/** Hono's order: each middleware may answer, or await next(); the handler answers last. An error is a 500. */
async function runHono(
  request: Request,
  middleware: hono.HonoMiddleware[],
  handler: (c: hono.HonoLikeContext) => Response,
): Promise<Response> {
  const c = honoContext(request);
  const dispatch = async (index: number): Promise<void> => {
    const current = middleware[index];
    if (current === undefined) {
      c.res = handler(c);
      return;
    }
    const answer = await current(c, () => dispatch(index + 1));
    if (answer instanceof Response) c.res = answer;
  };
  try {
    await dispatch(0);
  } catch (error) {
    return new Response(JSON.stringify({ error: (error as Error).message }), { status: 500 });
  }
  return c.res ?? new Response(null, { status: 404 });
}

const honoSite: SiteFactory = async (input) => {
  const session = hono.ocSession(input);
  const send = (c: hono.HonoLikeContext): Response =>
    c.json({ session: c.get('ocSession') ?? null, reason: c.get('ocSessionReason') ?? null });
  const routes: Record<string, hono.HonoMiddleware[]> = {
    '/whoami': [session],
    '/private': [session, hono.requireSession()],
    '/sudo': [session, hono.requireFreshSudo(SUDO_MAX_AGE)],
    '/step-up': [session, hono.requireFreshStepUp(SUDO_MAX_AGE)],
    '/unwired': [hono.requireSession()],
  };
  return {
    request: async (path, headers = {}) =>
      replyOf(await runHono(new Request(`http://site.example.com${path}`, { headers }), routes[path] ?? [], send)),
    close: async () => {},
  };
};

const FRAMEWORKS: Array<[string, SiteFactory]> = [
  ['Express', expressSite],
  ['Fastify', fastifySite],
  ['Hono', honoSite],
];

// ---- the shared world: a running host, its cookies, and a local key for crafted tokens ----

let host: RunningHost;
let hostKey: JWK;
let localPrivateKey: CryptoKey;
let localPublicJwk: JWK;
let hostTokenA: string;
let hostTokenB: string;
let staleHostToken: string;
let freshHostToken: string;

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A session token signed by the local test key, for claims the host cannot be made to mint on demand (sudo_at, iat). */
async function craft(claims: Partial<Record<keyof OcSessionClaims, unknown>> = {}, key: CryptoKey = localPrivateKey): Promise<string> {
  const sub = (claims.sub as string | undefined) ?? '5a'.repeat(16);
  const payload: Record<string, unknown> = {
    iss: ISSUER,
    sub,
    did_oc: `did:oc:${sub}`,
    jti: 'c0'.repeat(16),
    iat: nowSeconds(),
    exp: nowSeconds() + 3600,
    ...claims,
  };
  return new SignJWT(payload as JWTPayload).setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: LOCAL_KID }).sign(key);
}

function didOf(token: string): string {
  return decodeJwt(token).did_oc as string;
}

beforeAll(async () => {
  host = await startHost();
  hostKey = ((await (await fetch(host.jwksUrl)).json()) as { keys: JWK[] }).keys[0]!;
  const pair = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  localPrivateKey = pair.privateKey;
  localPublicJwk = { ...(await exportJWK(pair.publicKey)), kid: LOCAL_KID, alg: 'EdDSA', use: 'sig' };
  hostTokenA = (await signInWithWallet(host)).token;
  hostTokenB = (await signInWithWallet(host)).token;
  // A cookie left behind (signed out since, still verifying locally), then a newer sign-in.
  const stale = await signInWithWallet(host);
  staleHostToken = stale.token;
  expect((await stale.browser.logout()).status).toBe(200);
  await new Promise((resolve) => setTimeout(resolve, 1100)); // a later iat (seconds)
  freshHostToken = (await signInWithWallet(host)).token;
});

afterAll(async () => {
  await host?.close();
});

describe.each(FRAMEWORKS)('%s middleware', (_name, makeSite) => {
  let site: Site;

  beforeAll(async () => {
    // Both keys in one JWKS object: the host's (real cookies) and the local one (crafted tokens).
    site = await makeSite({ publicJwk: { keys: [hostKey, localPublicJwk] }, issuer: ISSUER });
  });
  afterAll(async () => {
    await site?.close();
  });

  const NOT_AUTHENTICATED = { ok: false, error: 'not_authenticated', reason: 'not_authenticated' };
  const SUDO_REQUIRED = { ok: false, error: 'sudo_required', reason: 'sudo_required' };

  it('no credentials: the session is null; requireSession answers 401 not_authenticated, uncached', async () => {
    expect((await site.request('/whoami')).body).toEqual({ session: null, reason: 'no_session' });
    const refused = await site.request('/private');
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(NOT_AUTHENTICATED);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('the session from the host-issued oc_session cookie, among other cookies', async () => {
    const whoami = await site.request('/whoami', { cookie: `theme=dark; oc_session=${hostTokenA}; lang=en` });
    expect(whoami.status).toBe(200);
    expect(whoami.body.session).toMatchObject({ iss: ISSUER, did_oc: didOf(hostTokenA), signing_method: 'bip322', amr: ['swk'] });
    const allowed = await site.request('/private', { cookie: `oc_session="${hostTokenB}"` });
    expect(allowed.status).toBe(200);
    expect(allowed.body.session.did_oc).toBe(didOf(hostTokenB));
  });

  it('the session from Authorization: Bearer', async () => {
    const allowed = await site.request('/private', { authorization: `Bearer ${hostTokenA}` });
    expect(allowed.status).toBe(200);
    expect(allowed.body.session.did_oc).toBe(didOf(hostTokenA));
    expect((await site.request('/private', { authorization: `bearer ${hostTokenB}` })).body.session.did_oc).toBe(didOf(hostTokenB));
    expect((await site.request('/private', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` })).status).toBe(401);
  });

  it('two oc_session cookies: the one that verifies wins, in either order', async () => {
    const otherHost = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const shadow = await craft({ sub: '00'.repeat(16) }, otherHost.privateKey); // another key: does not verify
    const expired = await craft({ sub: '01'.repeat(16), iat: nowSeconds() - 7200, exp: nowSeconds() - 3600 });
    for (const invalid of [shadow, expired, 'garbage']) {
      for (const cookie of [`oc_session=${invalid}; oc_session=${hostTokenA}`, `oc_session=${hostTokenA}; oc_session=${invalid}`]) {
        const reply = await site.request('/private', { cookie });
        expect(reply.status, cookie.slice(0, 40)).toBe(200);
        expect(reply.body.session.did_oc).toBe(didOf(hostTokenA));
      }
    }
    // Invalid only: no session.
    expect((await site.request('/private', { cookie: `oc_session=${shadow}; oc_session=${expired}` })).status).toBe(401);
  });

  it('when several cookies verify, the most recently minted wins (a stale cookie cannot shadow the current one)', async () => {
    const older = await craft({ sub: '0a'.repeat(16), iat: nowSeconds() - 600 });
    const newer = await craft({ sub: '0b'.repeat(16), iat: nowSeconds() - 5 });
    for (const cookie of [`oc_session=${older}; oc_session=${newer}`, `oc_session=${newer}; oc_session=${older}`]) {
      expect((await site.request('/whoami', { cookie })).body.session.sub).toBe('0b'.repeat(16));
    }
    // The same with the host's own cookies: one signed out since (still verifying locally), one current.
    for (const cookie of [
      `oc_session=${staleHostToken}; oc_session=${freshHostToken}`,
      `oc_session=${freshHostToken}; oc_session=${staleHostToken}`,
    ]) {
      expect((await site.request('/whoami', { cookie })).body.session.did_oc).toBe(didOf(freshHostToken));
    }
  });

  it('a tampered cookie is no session', async () => {
    const [header, , signature] = hostTokenA.split('.') as [string, string, string];
    const payload = Buffer.from(
      JSON.stringify({ ...decodeJwt(hostTokenA), sub: 'ff'.repeat(16), did_oc: `did:oc:${'ff'.repeat(16)}` }),
    ).toString('base64url');
    const reply = await site.request('/private', { cookie: `oc_session=${header}.${payload}.${signature}` });
    expect(reply.status).toBe(401);
    expect(reply.body).toEqual(NOT_AUTHENTICATED);
  });

  it('requireFreshSudo(300): no session → not_authenticated; no sudo_at or an old one → sudo_required; a fresh one passes', async () => {
    expect((await site.request('/sudo')).body).toEqual(NOT_AUTHENTICATED);
    // A plain sign-in carries no sudo_at (docs/protocol.md §6: only /api/auth/sudo sets it).
    const plain = await site.request('/sudo', { cookie: `oc_session=${hostTokenA}` });
    expect(plain.status).toBe(401);
    expect(plain.body).toEqual(SUDO_REQUIRED);
    expect(plain.headers.get('cache-control')).toBe('no-store');

    const stale = await site.request('/sudo', { authorization: `Bearer ${await craft({ sudo_at: nowSeconds() - SUDO_MAX_AGE - 30 })}` });
    expect(stale.status).toBe(401);
    expect(stale.body).toEqual(SUDO_REQUIRED);

    const fresh = await site.request('/sudo', { cookie: `oc_session=${await craft({ sudo_at: nowSeconds() - 10 })}` });
    expect(fresh.status).toBe(200);
    expect(fresh.body.session.sudo_at).toBe(nowSeconds() - 10);
    // step_up_at is not sudo_at.
    expect((await site.request('/sudo', { cookie: `oc_session=${await craft({ step_up_at: nowSeconds() })}` })).body).toEqual(
      SUDO_REQUIRED,
    );
  });

  it('a pinned tab: x-oc-tab-session alone decides, over the cookie and a Bearer token', async () => {
    const pinned = await site.request('/whoami', { cookie: `oc_session=${hostTokenA}`, 'x-oc-tab-session': hostTokenB });
    expect(pinned.body).toMatchObject({ session: { did_oc: didOf(hostTokenB) }, reason: null });
    const overBearer = await site.request('/private', { authorization: `Bearer ${hostTokenA}`, 'x-oc-tab-session': hostTokenB });
    expect(overBearer.body.session.did_oc).toBe(didOf(hostTokenB));
    // A tab token the host minted (POST /api/auth/tab) verifies like its cookie.
    const issued = await signInWithWallet(host);
    const tab = await issued.browser.post('/api/auth/tab', {});
    expect(tab.status).toBe(200);
    expect(
      (await site.request('/private', { cookie: `oc_session=${hostTokenA}`, 'x-oc-tab-session': tab.body.token })).body.session.did_oc,
    ).toBe(didOf(issued.token));
    // An empty header is no pin: the cookie decides.
    expect((await site.request('/whoami', { cookie: `oc_session=${hostTokenA}`, 'x-oc-tab-session': '' })).body.session.did_oc).toBe(
      didOf(hostTokenA),
    );
  });

  it('a pinned tab whose token does not verify has no session (tab_invalid), whatever the cookie holds', async () => {
    const TAB_INVALID = { ok: false, error: 'tab_invalid', reason: 'tab_invalid' };
    const otherKey = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const invalid = [
      'garbage',
      'not.a.token',
      await craft({ sub: '0c'.repeat(16) }, otherKey.privateKey),
      await craft({ sub: '0d'.repeat(16), iat: nowSeconds() - 7200, exp: nowSeconds() - 3600 }),
      await craft({ sub: '0e'.repeat(16), iss: 'https://other.example.com' }),
      `${hostTokenB}, ${hostTokenB}`,
    ];
    for (const token of invalid) {
      const headers = { cookie: `oc_session=${hostTokenA}`, authorization: `Bearer ${hostTokenA}`, 'x-oc-tab-session': token };
      expect((await site.request('/whoami', headers)).body, token.slice(0, 30)).toEqual({ session: null, reason: 'tab_invalid' });
      const refused = await site.request('/private', headers);
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual(TAB_INVALID);
      expect(refused.headers.get('cache-control')).toBe('no-store');
      expect((await site.request('/sudo', headers)).body).toEqual(TAB_INVALID);
    }
  });

  it('requireFreshStepUp(300): no session → not_authenticated; no step_up_at or an old one → step_up_required; a fresh one passes', async () => {
    const STEP_UP_REQUIRED = { ok: false, error: 'step_up_required', reason: 'step_up_required' };
    expect((await site.request('/step-up')).body).toEqual(NOT_AUTHENTICATED);
    expect((await site.request('/step-up', { cookie: `oc_session=${hostTokenA}`, 'x-oc-tab-session': 'garbage' })).body).toEqual({
      ok: false,
      error: 'tab_invalid',
      reason: 'tab_invalid',
    });
    // A plain sign-in carries no step_up_at (docs/protocol.md §3: only a key assertion sets it).
    const plain = await site.request('/step-up', { cookie: `oc_session=${hostTokenA}` });
    expect(plain.status).toBe(401);
    expect(plain.body).toEqual(STEP_UP_REQUIRED);
    expect(plain.headers.get('cache-control')).toBe('no-store');
    expect(plain.headers.get('www-authenticate')).toBe('Bearer');

    const stale = await site.request('/step-up', {
      authorization: `Bearer ${await craft({ step_up_at: nowSeconds() - SUDO_MAX_AGE - 30 })}`,
    });
    expect(stale.status).toBe(401);
    expect(stale.body).toEqual(STEP_UP_REQUIRED);

    const fresh = await site.request('/step-up', { cookie: `oc_session=${await craft({ step_up_at: nowSeconds() - 10 })}` });
    expect(fresh.status).toBe(200);
    expect(fresh.body.session.step_up_at).toBe(nowSeconds() - 10);
    // sudo_at is not step_up_at, and a non-numeric step_up_at is no session at all.
    expect((await site.request('/step-up', { cookie: `oc_session=${await craft({ sudo_at: nowSeconds() })}` })).body).toEqual(
      STEP_UP_REQUIRED,
    );
    expect((await site.request('/step-up', { cookie: `oc_session=${await craft({ step_up_at: String(nowSeconds()) })}` })).body).toEqual(
      NOT_AUTHENTICATED,
    );
  });

  it('a guard without the session middleware fails closed with a 500 that names the mistake', async () => {
    const reply = await site.request('/unwired', { cookie: `oc_session=${hostTokenA}` });
    expect(reply.status).toBe(500);
  });

  it('a shared verifier made with createSessionVerifier({ jwksUrl }): host cookies pass, the crafted key does not', async () => {
    const jwksSite = await makeSite(createSessionVerifier({ jwksUrl: host.jwksUrl, issuer: ISSUER }));
    try {
      expect((await jwksSite.request('/private', { cookie: `oc_session=${hostTokenA}` })).body.session.did_oc).toBe(didOf(hostTokenA));
      expect((await jwksSite.request('/private', { cookie: `oc_session=${await craft()}` })).status).toBe(401);
    } finally {
      await jwksSite.close();
    }
  });
});

describe('a pinned tab and the revocation feed', () => {
  afterAll(() => stopRevocationPolling());

  it('a tab token whose session the feed lists is tab_invalid, and the cookie is not read instead', async () => {
    const revoked = await craft({ sub: '0f'.repeat(16), jti: 'ab'.repeat(16) });
    const live = await craft({ sub: '10'.repeat(16), jti: 'cd'.repeat(16) });
    const feed: typeof fetch = async () =>
      new Response(
        JSON.stringify({ ok: true, revocations: [{ jti: 'ab'.repeat(16), exp: nowSeconds() + 3600 }], cursor: 'c', more: false }),
        {
          headers: { 'content-type': 'application/json' },
        },
      );
    const verifier = createSessionVerifier({
      publicJwk: localPublicJwk,
      issuer: ISSUER,
      fetch: feed,
      revocations: { url: 'https://auth.example.com/api/auth/revocations' },
    });
    expect(await resolveSession(verifier, { cookie: `oc_session=${live}`, 'x-oc-tab-session': revoked })).toEqual({
      ok: false,
      reason: 'tab_invalid',
    });
    expect(await resolveSession(verifier, { cookie: `oc_session=${revoked}`, 'x-oc-tab-session': live })).toMatchObject({
      ok: true,
      via: 'tab',
      session: { sub: '10'.repeat(16) },
    });
    expect(await resolveSession(verifier, { cookie: `oc_session=${live}` })).toMatchObject({ ok: true, via: 'cookie' });
    expect(await resolveSession(verifier, { cookie: `oc_session=${revoked}` })).toEqual({ ok: false, reason: 'no_session' });
  });
});

describe('setup errors throw when the middleware is made', () => {
  it.each([
    ['Express', express.ocSession, express.requireFreshSudo, express.requireFreshStepUp],
    ['Hono', hono.ocSession, hono.requireFreshSudo, hono.requireFreshStepUp],
    ['Fastify', fastify.ocSessionHook, fastify.requireFreshSudo, fastify.requireFreshStepUp],
  ] as const)('%s', (_name, make, sudo, stepUp) => {
    expect(() => make({ issuer: '', publicJwk: hostKey })).toThrow(/issuer/);
    expect(() => make({ issuer: ISSUER, publicJwk: { kty: 'RSA', n: 'x', e: 'AQAB' } })).toThrow(/Ed25519/);
    expect(() => sudo(0)).toThrow(/requireFreshSudo\(maxAgeSeconds\)/);
    expect(() => sudo(Number.NaN)).toThrow(/maxAgeSeconds/);
    expect(() => stepUp(0)).toThrow(/requireFreshStepUp\(maxAgeSeconds\)/);
    expect(() => stepUp(-1)).toThrow(/maxAgeSeconds/);
    expect(() => stepUp(300, { now: 'yesterday' as never })).toThrow(/requireFreshStepUp option now/);
  });

  it('Fastify: registering the plugin with bad options fails the app start', async () => {
    const app = Fastify({ logger: false });
    await expect(app.register(fastify.ocSession, { issuer: ISSUER, jwksUrl: 'http://auth.example.com/jwks' })).rejects.toThrow(/https/);
    await app.close();
  });
});
