/**
 * The device authorization grant (RFC 8628, docs/protocol.md §8 "Devices")
 * end to end: `openid-client`, a device-flow client nobody here wrote, asks
 * for a code and polls over real HTTP; headless Chromium is the person, who
 * types the code at the verification page (or arrives with it from a QR
 * code), sees which app and device ask and what they get, signs in through
 * /signin and allows it on the consent page. Also: a denial reaches the
 * device as `access_denied`, polls before the answer are
 * `authorization_pending` and polls too close together `slow_down`, an
 * expired code is `expired_token` and is refused on the page, a code works
 * once, and a network that guesses codes is stopped after its budget (and,
 * with Redis away, the page answers 503 rather than count nothing). The
 * pages are checked in the four languages, at desktop and phone width,
 * light and dark, with axe. On SQLite and PostgreSQL.
 *
 * The provider library reads the wall clock: Date is the host's test clock
 * here, moved by hand (docs/testing.md), so expiry and the poll interval
 * are exact without waiting.
 */
import type { FastifyInstance } from 'fastify';
import * as client from 'openid-client';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { IssuedClient } from '../src/features/oidc/index.js';
import { newWallet } from './support/auth-client.js';
import { AuthHarness, forEachEngine } from './support/auth-harness.js';
import { signBip322 } from './support/bitcoin-signer.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, DESKTOP, expectLaidOut, HAVE_CHROMIUM, IN_CI, PHONE, pageContext } from './support/chromium.js';
import { MINUTE, SECOND, WallClock } from './support/clock.js';
import { freePort } from './support/instances.js';
import { operatorRegistry } from './support/oidc-rp.js';
import { closedRedisUrl } from './support/redis.js';

/** The user code's shape: two groups of four consonants without look-alikes (src/features/oidc/provider.ts). */
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;
/** Posts of the verification page a network may make in an hour, here. */
const CODES_PER_HOUR = 40;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** The question page's heading and the app's sentence in each language (src/platform/i18n/pages/). */
const QUESTION: Readonly<Record<string, { heading: string; text: string; confirm: string }>> = {
  'en-GB': {
    heading: 'Is this your device?',
    text: 'Living-room TV wants to sign in on a device with your oc-host account.',
    confirm: 'Continue',
  },
  'de-DE': {
    heading: 'Ist das Ihr Gerät?',
    text: 'Living-room TV möchte sich auf einem Gerät mit Ihrem oc-host-Konto anmelden.',
    confirm: 'Weiter',
  },
  'fr-FR': {
    heading: 'Est-ce bien votre appareil ?',
    text: 'Living-room TV souhaite se connecter sur un appareil avec votre compte oc-host.',
    confirm: 'Continuer',
  },
  'es-ES': {
    heading: '¿Es este su dispositivo?',
    text: 'Living-room TV quiere iniciar sesión en un dispositivo con su cuenta de oc-host.',
    confirm: 'Continuar',
  },
};

/** The code entry's heading in each language. */
const ENTRY: Readonly<Record<string, string>> = {
  'en-GB': 'Connect a device',
  'de-DE': 'Ein Gerät verbinden',
  'fr-FR': 'Connecter un appareil',
  'es-ES': 'Conectar un dispositivo',
};

if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium (CI=true)', () => {
    throw new Error(`oidc-device: ${CHROMIUM_PATH} missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

/** The browser globals the wallet stand-in touches (the project's tsconfig has no DOM lib). */
interface InPage {
  unisat?: unknown;
  ocTestSignBip322?: (message: string) => Promise<string>;
}

/** What a raw poll of the token endpoint answers. */
interface PollAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

function deviceSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let app: FastifyInstance;
  let base: string;
  let browser: Browser;
  let tv: IssuedClient;
  let config: client.Configuration;

  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    harness = await AuthHarness.open(engine, new WallClock(Date.now()));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await harness.app({
      PUBLIC_URL: base,
      OIDC_DEVICE_POLL_SECONDS: '1',
      RATE_LIMIT_DEVICE_CODE_PER_HOUR: String(CODES_PER_HOUR),
    });
    await app.listen({ host: '127.0.0.1', port });
    const registry = await operatorRegistry(harness.store, base, harness.clock.now);
    tv = await registry.clients.create({
      client_name: 'Living-room TV',
      client_uri: 'https://tv.example/',
      redirect_uris: [],
      device: true,
      token_endpoint_auth_method: 'none',
    });
    config = await client.discovery(new URL(base), tv.client_id, undefined, client.None(), { execute: [client.allowInsecureRequests] });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    vi.useRealTimers();
  });

  /** The device's poll, by hand: what the token endpoint answers now. */
  async function poll(deviceCode: string, on: FastifyInstance = app): Promise<PollAnswer> {
    const reply = await on.inject({
      method: 'POST',
      url: '/oidc/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: tv.client_id }).toString(),
    });
    return { status: reply.statusCode, body: reply.json() as Record<string, unknown> };
  }

  /** A code typed at the verification page (of `on`) by a browser at `ip` without a session: the page's answer. */
  async function typeCode(
    code: string,
    ip = '127.0.0.1',
    on: FastifyInstance = app,
  ): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
    const entry = await on.inject({ url: '/oidc/device', remoteAddress: ip });
    expect(entry.statusCode).toBe(200);
    const cookie = [entry.headers['set-cookie'] ?? []]
      .flat()
      .map((line) => String(line).split(';')[0])
      .join('; ');
    const xsrf = /name="xsrf" value="([^"]+)"/.exec(entry.body)?.[1];
    expect(xsrf).toBeDefined();
    const reply = await on.inject({
      method: 'POST',
      url: '/oidc/device',
      remoteAddress: ip,
      headers: { cookie, origin: base, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ xsrf: xsrf as string, user_code: code }).toString(),
    });
    return { status: reply.statusCode, body: reply.body, headers: reply.headers };
  }

  /** A browser context whose UniSat stand-in signs with a new wallet, so /signin's first way in works. */
  async function walletContext(locale = 'en-GB', viewport: { width: number; height: number } = DESKTOP): Promise<BrowserContext> {
    const wallet = newWallet('p2wpkh');
    const context = await pageContext(browser, base, locale, viewport);
    await context.exposeFunction('ocTestSignBip322', (message: string) =>
      signBip322({ privateKey: wallet.privateKey, address: wallet.address, message }),
    );
    await context.addInitScript((address: string) => {
      const scope = globalThis as unknown as InPage;
      scope.unisat = { requestAccounts: async () => [address], signMessage: (message: string) => scope.ocTestSignBip322?.(message) };
    }, wallet.address);
    return context;
  }

  /** Collects the page's script errors and CSP violations. */
  function watch(page: Page, problems: string[]): void {
    page.on('console', (message) => {
      if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of (401|503)/.test(message.text())) {
        problems.push(message.text());
      }
    });
    page.on('pageerror', (error) => problems.push(error.message));
  }

  it.skipIf(!HAVE_CHROMIUM)(
    'a device signs in: the code typed in any case, the app and device shown, /signin, consent, one token for one code',
    async () => {
      const asked = await client.initiateDeviceAuthorization(config, { scope: 'openid email bitcoin offline_access' });
      expect(asked.user_code).toMatch(USER_CODE);
      expect(asked.verification_uri).toBe(`${base}/oidc/device`);
      expect(asked.verification_uri_complete).toBe(`${base}/oidc/device?user_code=${asked.user_code}`);
      expect(asked.expires_in).toBe(600);
      expect(asked.interval).toBe(1);

      // Before the person answers, the device is told to wait.
      expect((await poll(asked.device_code)).body.error).toBe('authorization_pending');

      const problems: string[] = [];
      const context = await walletContext();
      const page = await context.newPage();
      watch(page, problems);
      await page.goto('/oidc/device');
      expect(await page.locator('h1').textContent()).toBe('Connect a device');
      // Lower case, no dash: the code is the same.
      await page.getByLabel('Code from your device').fill(asked.user_code.replace('-', ' ').toLowerCase());
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForSelector('.device-facts');
      expect(await page.locator('h1').textContent()).toBe('Is this your device?');
      const facts = await page.locator('.device-facts').textContent();
      expect(facts).toContain('Living-room TV');
      expect(facts).toContain('tv.example');
      expect(facts).toContain('127.0.0.0/24');
      expect(await page.locator('code.device-code').textContent()).toBe(asked.user_code);
      expect(await page.locator('.scope-list li').count()).toBe(4);
      await page.getByRole('button', { name: 'Continue' }).click();

      // Any way in: /signin, then back to the interaction's consent page.
      await page.waitForURL((url) => url.pathname === '/signin');
      await page.getByRole('button', { name: 'Connect UniSat' }).click();
      await page.waitForURL((url) => url.pathname.startsWith('/oidc/interaction/'));
      expect(await page.locator('main h1').textContent()).toContain('Living-room TV');
      expect(await page.locator('main').textContent()).toContain('Either way, your device gets the answer.');
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.waitForURL((url) => url.pathname.startsWith('/oidc/device/'));
      expect(await page.locator('h1').textContent()).toBe('Your device is signed in');
      await expectLaidOut(page, 'the device done page');

      // The real client polls after its interval and gets the tokens.
      const tokens = await client.pollDeviceAuthorizationGrant(config, asked);
      const me = (await (await context.request.get(`${base}/api/auth/me`)).json()) as { account: { did_oc: string } };
      expect(tokens.claims()?.sub).toBe(me.account.did_oc);
      expect(tokens.refresh_token).toBeTypeOf('string');
      expect(tokens.scope?.split(' ').sort()).toEqual(['bitcoin', 'email', 'offline_access', 'openid']);
      const info = await client.fetchUserInfo(config, tokens.access_token, me.account.did_oc);
      expect(info.sub).toBe(me.account.did_oc);

      // Single use: the user code cannot be approved again, and the device code gives no second token
      // (a replay: the library revokes what the code gave, so the access token stops working too).
      await page.goto('/oidc/device');
      await page.getByLabel('Code from your device').fill(asked.user_code);
      await page.getByRole('button', { name: 'Continue' }).click();
      await expect
        .poll(() => page.locator('[role="alert"]').textContent())
        .toBe('That code has already been used. Start again on your device to get a new one.');
      expect((await poll(asked.device_code)).body.error).toBe('invalid_grant');
      const revoked = await app.inject({ url: '/oidc/userinfo', headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(revoked.statusCode).toBe(401);
      expect(problems).toEqual([]);
      await context.close();
    },
    120_000,
  );

  it.skipIf(!HAVE_CHROMIUM)(
    'a denial, on the question from a QR code or on the consent page, reaches the device as access_denied',
    async () => {
      const asked = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
      const problems: string[] = [];
      const context = await walletContext();
      const page = await context.newPage();
      watch(page, problems);
      // The QR code's address carries the code: the page asks at once.
      await page.goto(asked.verification_uri_complete as string);
      await page.waitForSelector('h1:text("Is this your device?")');
      await page.getByRole('button', { name: 'Deny' }).click();
      await expect
        .poll(() => page.locator('[role="alert"]').textContent())
        .toBe('You said no, so the device was not signed in. It has been told.');
      const refused = await client.pollDeviceAuthorizationGrant(config, asked).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(client.ResponseBodyError);
      expect((refused as client.ResponseBodyError).error).toBe('access_denied');

      // Cancel on the consent page, after signing in, denies too.
      const again = await client.initiateDeviceAuthorization(config, { scope: 'openid email' });
      await page.goto(again.verification_uri_complete as string);
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.waitForURL((url) => url.pathname === '/signin');
      await page.getByRole('button', { name: 'Connect UniSat' }).click();
      await page.waitForURL((url) => url.pathname.startsWith('/oidc/interaction/'));
      await page.getByRole('button', { name: 'Cancel' }).click();
      await expect
        .poll(() => page.locator('[role="alert"]').textContent())
        .toBe('You said no, so the device was not signed in. It has been told.');
      expect((await poll(again.device_code)).body.error).toBe('access_denied');
      expect(problems).toEqual([]);
      await context.close();
    },
    60_000,
  );

  it.skipIf(!HAVE_CHROMIUM)(
    'draws the code entry and the question in every language, at desktop and phone width, light and dark',
    async () => {
      const problems: string[] = [];
      for (const [locale, question] of Object.entries(QUESTION)) {
        for (const viewport of [DESKTOP, PHONE]) {
          const asked = await client.initiateDeviceAuthorization(config, { scope: 'openid profile' });
          const context = await pageContext(browser, base, locale, viewport);
          const page = await context.newPage();
          watch(page, problems);
          if (viewport === DESKTOP) {
            await page.goto('/oidc/device');
            expect(await page.locator('h1').textContent()).toBe(ENTRY[locale]);
            await expectLaidOut(page, `${locale} entry`);
          }
          await page.goto(asked.verification_uri_complete as string);
          await page.waitForSelector('.device-facts');
          expect(await page.locator('h1').textContent()).toBe(question.heading);
          expect(await page.locator('main .lead').textContent()).toBe(question.text);
          expect(await page.getByRole('button', { name: question.confirm, exact: true }).count()).toBe(1);
          await expectLaidOut(page, `${locale} ${viewport.width}px question`);
          await context.close();
        }
      }
      expect(problems).toEqual([]);
    },
    120_000,
  );

  it('answers authorization_pending, then slow_down to a device that polls too soon', async () => {
    const asked = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    expect(await poll(asked.device_code)).toEqual({ status: 400, body: expect.objectContaining({ error: 'authorization_pending' }) });
    expect(await poll(asked.device_code)).toEqual({ status: 400, body: expect.objectContaining({ error: 'slow_down' }) });
    harness.clock.advance(SECOND);
    expect((await poll(asked.device_code)).body.error).toBe('authorization_pending');
  });

  it('refuses a guessed code on the page, and stops a network after its budget of codes', async () => {
    const asked = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    const guesser = '203.0.113.7';
    const wrong = await typeCode('BCDF-GHJK' === asked.user_code ? 'BCDF-GHJM' : 'BCDF-GHJK', guesser);
    expect(wrong.status).toBe(200);
    expect(wrong.body).toContain('That code is not right.');
    expect(wrong.body).toContain('aria-invalid="true"');
    for (let tried = 1; tried < CODES_PER_HOUR; tried++) expect((await typeCode('ZZZZ-ZZZZ', guesser)).status).toBe(200);
    // Past the budget even the right code is not looked up from that network.
    const stopped = await typeCode(asked.user_code, guesser);
    expect(stopped.status).toBe(429);
    expect(Number(stopped.headers['retry-after'])).toBeGreaterThan(0);
    expect(stopped.body).toContain('Too many codes tried');
    expect(stopped.body).not.toContain('Living-room TV');
    // Another network is not held back.
    const other = await typeCode(asked.user_code.toLowerCase(), '198.51.100.20');
    expect(other.status).toBe(200);
    expect(other.body).toContain('Living-room TV');
  });

  it('with Redis away: the page answers 503 and looks no code up; polls are timed by the instance alone', async () => {
    const away = await harness.app({
      PUBLIC_URL: base,
      OIDC_DEVICE_POLL_SECONDS: '1',
      RATE_LIMIT_DEVICE_CODE_PER_HOUR: String(CODES_PER_HOUR),
      REDIS_URL: await closedRedisUrl(),
    });
    const asked = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    // The budget is what keeps codes from being guessed: with its count unknown, no code is looked up.
    const refused = await typeCode(asked.user_code, '192.0.2.50', away);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers['cache-control']).toBe('no-store');
    expect(refused.body).toContain('Codes cannot be checked right now');
    expect(refused.body).not.toContain('Too many codes tried');
    expect(refused.body).not.toContain('Living-room TV');
    // The poll timing falls back to the instance's own count: still slow_down when too soon.
    expect((await poll(asked.device_code, away)).body.error).toBe('authorization_pending');
    expect((await poll(asked.device_code, away)).body.error).toBe('slow_down');
    // The instance with its store is not affected.
    expect((await typeCode(asked.user_code, '192.0.2.50')).body).toContain('Living-room TV');
  });

  it('ends an unanswered code after ten minutes: expired_token to the device, refused on the page', async () => {
    const asked = await client.initiateDeviceAuthorization(config, { scope: 'openid' });
    harness.clock.advance(10 * MINUTE + SECOND);
    expect((await poll(asked.device_code)).body.error).toBe('expired_token');
    const page = await typeCode(asked.user_code, '192.0.2.30');
    expect(page.body).toContain('That code has expired.');
  });

  it('refuses a client not registered for the grant, and answers the grant in discovery', async () => {
    const registry = await operatorRegistry(harness.store, base, harness.clock.now);
    const web = await registry.clients.create({
      client_name: 'Web app',
      redirect_uris: ['https://app.example/cb'],
      token_endpoint_auth_method: 'none',
    });
    const reply = await app.inject({
      method: 'POST',
      url: '/oidc/device/auth',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ client_id: web.client_id, scope: 'openid' }).toString(),
    });
    expect(reply.statusCode).toBe(400);
    expect(reply.json()).toEqual({
      error: 'invalid_request',
      error_description: 'urn:ietf:params:oauth:grant-type:device_code is not allowed for this client',
    });
    // Nor may it poll with the grant.
    const poll = await app.inject({
      method: 'POST',
      url: '/oidc/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ grant_type: DEVICE_GRANT, device_code: 'x', client_id: web.client_id }).toString(),
    });
    expect(poll.json()).toEqual({ error: 'invalid_request', error_description: 'requested grant type is not allowed for this client' });
    const discovery = (await app.inject({ url: '/.well-known/openid-configuration' })).json() as Record<string, unknown>;
    expect(discovery.device_authorization_endpoint).toBe(`${base}/oidc/device/auth`);
    expect(discovery.grant_types_supported).toContain(DEVICE_GRANT);
  });
}

await forEachEngine('the device authorization grant (RFC 8628) with openid-client and Chromium', deviceSuite);
