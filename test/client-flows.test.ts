/**
 * The OrangeCheck client's security flows, run in Chromium against the host
 * and two consumer sites of its family (docs/integrating.md "Using the OrangeCheck client
 * libraries"; docs/protocol.md §3 "Pinned tabs", §6 "Step-up"):
 *
 * - the host on http://localhost:<port>, its pages and API;
 * - consumer V resolves sessions with `@oc-host/verify` (its Fastify plugin,
 *   the JWKS and the revocation feed of the host);
 * - consumer C resolves them as auth-core's `resolveSessionFromRequest` is
 *   documented to: the `x-oc-tab-session` header first (a bad one is no
 *   session), then the cookie, checked against the JWKS, with no feed.
 *
 * Both consumers serve a page running test/support/client-model.js, which
 * pins each tab, sends the pin to both origins, re-pins when the me
 * endpoint (on the host, as docs/integrating.md configures it) answers 401, adopts
 * the account after `#oc-adopt`, and re-reads the session after a key
 * step-up. Cookies on localhost are shared by every port, so the three
 * servers are one family, each its own origin.
 *
 * Covered: linking straight after a sign-in, a re-proof and a key step-up
 * from a pinned tab reaching both consumers, "add account" through a
 * provider ending on the new account, and a switch in another tab that
 * leaves the first tab alone.
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ocSession, requireFreshStepUp, requireFreshSudo, requireSession } from '../packages/verify/src/fastify.js';
import { signBip322 } from './support/bitcoin-signer.js';
import { loadConfig } from '../src/platform/config.js';
import { buildApp } from '../src/app.js';
import { newWallet, type Wallet } from './support/auth-client.js';
import { reservePort } from './support/instances.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, HAVE_CHROMIUM, IN_CI, virtualAuthenticator } from './support/chromium.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';

const CLIENT_MODEL = readFileSync(new URL('./support/client-model.js', import.meta.url), 'utf8');

if (!HAVE_CHROMIUM && !IN_CI) {
  console.warn(`client-flows: skipped: ${CHROMIUM_PATH} is missing (run scripts/ensure-chromium.sh as root to install Debian's chromium)`);
}

/** The page globals the in-page callbacks use (the test's tsconfig has no DOM lib). */
interface InPage {
  oc: {
    state: { account: { did_oc: string } | null; status: string; pinned: boolean };
    start(): Promise<unknown>;
    refresh(): Promise<unknown>;
    switchAccount(did: string): Promise<unknown>;
    registerKey(): Promise<{ status: number; body: any }>;
    stepUp(purpose: string): Promise<{ ok: boolean; reason?: string; step_up_at?: number }>;
    call(url: string, method?: string, body?: unknown, credentials?: string): Promise<{ status: number; body: any }>;
    pin(): { token: string; didOc: string } | null;
  };
  ocReady: Promise<unknown>;
}

function consumerPage(authOrigin: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Consumer</title></head><body><main><h1>Consumer</h1></main>
<script type="module">
import { createClient } from '/client-model.js';
window.oc = createClient({ authOrigin: ${JSON.stringify(authOrigin)}, mePath: ${JSON.stringify(`${authOrigin}/api/auth/me`)} });
window.ocReady = window.oc.start();
</script></body></html>`;
}

/** The routes both consumers serve, over their own way of resolving the session. */
function consumerRoutes(
  app: FastifyInstance,
  authOrigin: string,
  resolve: (request: FastifyRequest) => Promise<JWTPayload | null>,
  guards: {
    stepUp: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
    sudo: (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  },
): void {
  app.get('/', async (_request, reply) => reply.type('text/html; charset=utf-8').send(consumerPage(authOrigin)));
  app.get('/client-model.js', async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(CLIENT_MODEL));
  app.get('/api/session', async (request, reply) => {
    const claims = await resolve(request);
    if (claims === null) return reply.code(401).send({ ok: false, reason: 'not_authenticated' });
    return { did_oc: claims.did_oc, step_up_at: claims.step_up_at ?? null, sudo_at: claims.sudo_at ?? null };
  });
  app.get('/api/needs-step-up', { preHandler: guards.stepUp }, async () => ({ ok: true }));
  app.get('/api/needs-sudo', { preHandler: guards.sudo }, async () => ({ ok: true }));
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

const describeInBrowser = HAVE_CHROMIUM || IN_CI ? describe : describe.skip;

describeInBrowser('the OrangeCheck client flows in Chromium, against two consumer sites', () => {
  let host: FastifyInstance;
  let consumerV: FastifyInstance;
  let consumerC: FastifyInstance;
  let op: TestOidcProvider;
  let browser: Browser;
  let base: string;
  let originV: string;
  let originC: string;
  const problems: string[] = [];

  beforeAll(async () => {
    const [hostPort, portV, portC] = [await reservePort(), await reservePort(), await reservePort()];
    base = `http://localhost:${hostPort.port}`;
    originV = `http://localhost:${portV.port}`;
    originC = `http://localhost:${portC.port}`;
    const clientSecret = randomBytes(24).toString('hex');
    op = await startOidcProvider({ clientId: 'oc-flows', clientSecret, redirectUri: `${base}/api/auth/acme/callback` });
    host = await buildApp(
      loadConfig({
        PORT: String(hostPort.port),
        PUBLIC_URL: base,
        DATABASE_URL: 'sqlite::memory:',
        LOG_LEVEL: 'silent',
        NOSTR_RELAYS: 'ws://127.0.0.1:9',
        ESPLORA_URLS: 'http://127.0.0.1:9',
        OAUTH_ACME_CLIENT_ID: 'oc-flows',
        OAUTH_ACME_CLIENT_SECRET: clientSecret,
        OAUTH_ACME_ISSUER: op.issuer,
        RATE_LIMIT_AUTH_PER_MIN: '1000',
        RATE_LIMIT_READ_PER_MIN: '1000',
        FAMILY_ORIGINS: `${base},${originV},${originC}`,
      }),
      { logger: false },
    );
    await hostPort.release();
    await host.listen({ port: hostPort.port, host: '127.0.0.1' });

    // Consumer V: @oc-host/verify, with the revocation feed.
    consumerV = Fastify();
    await consumerV.register(ocSession, {
      issuer: base,
      jwksUrl: `${base}/.well-known/jwks.json`,
      revocations: { url: `${base}/api/auth/revocations`, intervalSeconds: 1 },
    });
    consumerRoutes(consumerV, base, async (request) => (request.ocSession as JWTPayload | null) ?? null, {
      stepUp: requireFreshStepUp(300),
      sudo: requireFreshSudo(300),
    });
    consumerV.get('/api/guarded', { preHandler: requireSession() }, async () => ({ ok: true }));
    await portV.release();
    await consumerV.listen({ port: portV.port, host: '127.0.0.1' });

    // Consumer C: the pinned tab's header first, fail closed, then the cookie; no feed.
    const jwks = createLocalJWKSet((await (await fetch(`${base}/.well-known/jwks.json`)).json()) as JSONWebKeySet);
    const verify = async (token: string) => (await jwtVerify(token, jwks, { issuer: base, algorithms: ['EdDSA'] })).payload;
    const resolveC = async (request: FastifyRequest): Promise<JWTPayload | null> => {
      const pinned = request.headers['x-oc-tab-session'];
      const token = typeof pinned === 'string' && pinned !== '' ? pinned : readCookie(request.headers.cookie, 'oc_session');
      if (token === undefined) return null;
      try {
        return await verify(token);
      } catch {
        return null;
      }
    };
    const fresh = (claim: 'step_up_at' | 'sudo_at', reason: string) => async (request: FastifyRequest, reply: FastifyReply) => {
      const claims = await resolveC(request);
      if (claims === null) return reply.code(401).send({ ok: false, reason: 'not_authenticated' });
      const at = claims[claim];
      if (typeof at !== 'number' || Date.now() / 1000 - at > 300) return reply.code(401).send({ ok: false, reason });
      return undefined;
    };
    consumerC = Fastify();
    consumerRoutes(consumerC, base, resolveC, { stepUp: fresh('step_up_at', 'step_up_required'), sudo: fresh('sudo_at', 'sudo_required') });
    await portC.release();
    await consumerC.listen({ port: portC.port, host: '127.0.0.1' });

    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await consumerC?.close();
    await consumerV?.close();
    await host?.close();
    await op?.close();
  });

  async function open(target: BrowserContext, origin: string, path = '/'): Promise<Page> {
    const page = await target.newPage();
    page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    await page.goto(`${origin}${path}`);
    await ready(page);
    return page;
  }

  async function ready(page: Page): Promise<void> {
    await page.waitForFunction(() => (globalThis as unknown as InPage).ocReady !== undefined);
    await page.evaluate(() => (globalThis as unknown as InPage).ocReady);
  }

  async function pinOf(page: Page): Promise<{ token: string; didOc: string } | null> {
    return page.evaluate(() => (globalThis as unknown as InPage).oc.pin());
  }

  /** A GET of the page's own consumer, through the page's fetch (and so with its pin). */
  async function consumerGet(page: Page, path: string): Promise<{ status: number; body: any }> {
    return page.evaluate((url) => (globalThis as unknown as InPage).oc.call(url), path);
  }

  async function hostCall(
    page: Page,
    path: string,
    method = 'GET',
    body?: unknown,
    credentials = 'include',
  ): Promise<{ status: number; body: any }> {
    return page.evaluate(
      ([url, verb, payload, mode]) => (globalThis as unknown as InPage).oc.call(url as string, verb as string, payload, mode as string),
      [`${base}${path}`, method, body, credentials] as const,
    );
  }

  /** A wallet proof made in the page's name: the page asks the host for the message, the wallet (here) signs it. */
  async function proof(
    page: Page,
    signer: Wallet,
    purpose: string,
    audience: string,
  ): Promise<{ message: string; signature: string; nonce: string }> {
    const query = `addr=${encodeURIComponent(signer.address)}&purpose=${purpose}&audience=${encodeURIComponent(audience)}`;
    // A public primitive: the client asks for it without cookies (its pin header still goes along).
    const challenge = await hostCall(page, `/api/challenge?${query}`, 'GET', undefined, 'omit');
    expect(challenge.status, JSON.stringify(challenge.body)).toBe(200);
    const message = challenge.body.message as string;
    return {
      message,
      nonce: challenge.body.nonce,
      signature: signBip322({ privateKey: signer.privateKey, address: signer.address, message }),
    };
  }

  const consumers = [
    ['consumer V (@oc-host/verify with the revocation feed)', () => originV],
    ['consumer C (resolving as auth-core documents, no feed)', () => originC],
  ] as const;

  describe.each(consumers)('on %s', (_name, originOf) => {
    let target: BrowserContext;
    let page: Page;
    let origin: string;
    let accountA = '';
    let accountB = '';
    const wallet: Wallet = newWallet('p2wpkh');

    beforeAll(async () => {
      origin = originOf();
      target = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    });
    afterAll(async () => {
      await target?.close();
    });

    it('signs in on the consumer page, pins the tab, and the consumer sees the account', async () => {
      page = await open(target, origin);
      expect(await page.evaluate(() => (globalThis as unknown as InPage).oc.state.status)).toBe('anonymous');
      const signedIn = await hostCall(page, '/api/auth/signin', 'POST', await proof(page, wallet, 'login', origin));
      expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
      accountA = signedIn.body.account.did_oc;
      await page.evaluate(() => (globalThis as unknown as InPage).oc.refresh());
      await expect.poll(() => pinOf(page)).toMatchObject({ didOc: accountA });
      expect((await consumerGet(page, '/api/session')).body.did_oc).toBe(accountA);
    });

    it('links a second address straight after the sign-in, with no step-up (the sign-in form\'s "also link")', async () => {
      const second = newWallet('p2tr');
      const linked = await hostCall(page, '/api/auth/link/btc', 'POST', await proof(page, second, 'link', accountA));
      expect(linked.status, JSON.stringify(linked.body)).toBe(200);
      expect((linked.body.identities as Array<{ value: string }>).map((identity) => identity.value)).toContain(second.address);
    });

    it('a re-proof from the pinned tab reaches the consumer once the client re-pins', async () => {
      expect((await consumerGet(page, '/api/needs-sudo')).body.reason).toBe('sudo_required');
      const oldPin = await page.evaluate(() => (globalThis as unknown as InPage).oc.pin()?.token);
      const sudo = await hostCall(page, '/api/auth/sudo', 'POST', await proof(page, wallet, 'sudo', origin));
      expect(sudo.status, JSON.stringify(sudo.body)).toBe(200);
      await page.evaluate(() => (globalThis as unknown as InPage).oc.refresh());
      // The client drops its pin while it refreshes, so wait for a new pin, not just for the old one to go.
      await expect
        .poll(async () => {
          const pin = await pinOf(page);
          return pin?.token !== undefined && pin.token !== oldPin ? pin.didOc : 'waiting';
        })
        .toBe(accountA);
      expect((await consumerGet(page, '/api/needs-sudo')).status).toBe(200);
    });

    it('a key step-up (useStepUpAuth) from the pinned tab gives the consumer step_up_at', async () => {
      await virtualAuthenticator(page, 'security key');
      const registered = await page.evaluate(() => (globalThis as unknown as InPage).oc.registerKey());
      expect(registered.status, JSON.stringify(registered.body)).toBe(200);

      expect((await consumerGet(page, '/api/needs-step-up')).body.reason).toBe('step_up_required');
      const stepped = await page.evaluate(() => (globalThis as unknown as InPage).oc.stepUp('spend_over_1m'));
      expect(stepped, JSON.stringify(stepped)).toMatchObject({ ok: true, step_up_at: expect.any(Number) });
      expect((await consumerGet(page, '/api/needs-step-up')).status).toBe(200);
      expect((await consumerGet(page, '/api/session')).body).toMatchObject({ did_oc: accountA, step_up_at: stepped.step_up_at });
      // Once the tab has pinned again, its pin carries the claim too.
      await expect.poll(() => pinOf(page)).toMatchObject({ didOc: accountA });
      expect((await consumerGet(page, '/api/session')).body).toMatchObject({ did_oc: accountA, step_up_at: stepped.step_up_at });
    });

    it('"add account" through a provider comes back with #oc-adopt, and the tab takes up the new account', async () => {
      await page.goto(`${base}/api/auth/acme/start?add=1&return_to=${encodeURIComponent(`${origin}/`)}`);
      await page.waitForURL((url) => url.origin === origin);
      await ready(page);
      // The marker is consumed and gone from the address bar.
      expect(new URL(page.url()).hash).toBe('');
      accountB = (await consumerGet(page, '/api/session')).body.did_oc;
      expect(accountB).toMatch(/^did:oc:/);
      expect(accountB).not.toBe(accountA);
      await expect.poll(async () => (await pinOf(page))?.didOc).toBe(accountB);
      const me = await hostCall(page, '/api/auth/me');
      expect(me.body.roster.map((entry: { did_oc: string }) => entry.did_oc)).toEqual([accountA]);
    });

    it('a switch in another tab moves that tab only', async () => {
      const other = await open(target, origin);
      expect((await consumerGet(other, '/api/session')).body.did_oc).toBe(accountB);
      await expect.poll(async () => (await pinOf(other))?.didOc).toBe(accountB);
      await other.evaluate((did) => (globalThis as unknown as InPage).oc.switchAccount(did), accountA);
      expect((await consumerGet(other, '/api/session')).body.did_oc).toBe(accountA);
      // The first tab keeps its account.
      expect((await consumerGet(page, '/api/session')).body.did_oc).toBe(accountB);
      await other.close();
      expect(problems).toEqual([]);
    });
  });
});
