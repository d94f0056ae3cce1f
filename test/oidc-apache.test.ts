/**
 * oc-host as the OpenID provider of a relying party nobody here wrote:
 * Debian's Apache httpd with `mod_auth_openidc` protects a page
 * (`AuthType openid-connect`), on its own loopback port with a configuration
 * of its own (test/support/apache.ts). oc-host runs on another loopback
 * port with a real SMTP server; the client is registered the operator's way
 * (`OidcService.clients.create`, what `oc-host oidc clients create` runs).
 * Headless Chromium opens the protected page, is sent to oc-host, signs in
 * by e-mail code and, in the second test, by a browser wallet, sees the
 * consent page once, allows, and sees the page with the claims Apache
 * received: `sub` is the account's did:oc. A page of Apache's site that
 * frames the consent page gets it refused (`frame-ancestors 'none'`).
 *
 * Apache and Chromium: `scripts/ensure-apache.sh` and
 * `scripts/ensure-chromium.sh` install them. Without them the suite skips
 * with a message, except under `CI=true`, where it fails.
 */
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorRegistry } from './support/oidc-rp.js';
import { newWallet, type Wallet } from './support/auth-client.js';
import { useMailbox } from './support/auth-harness.js';
import { testApp } from './support/app.js';
import { apacheRedirectUri, HAVE_APACHE, APACHE_PATH, startApache, type ApacheRelyingParty } from './support/apache.js';
import { signBip322 } from './support/bitcoin-signer.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, HAVE_CHROMIUM, IN_CI } from './support/chromium.js';
import { openTestStore, type TestStore } from './support/databases.js';
import { reservePort } from './support/instances.js';

/** The browser globals the in-page callbacks touch (the project's tsconfig has no DOM lib). */
interface InPage {
  unisat?: unknown;
  ocTestSignBip322?: (message: string, type: string) => Promise<string>;
}

const MISSING = [HAVE_APACHE ? null : `${APACHE_PATH} with mod_auth_openidc`, HAVE_CHROMIUM ? null : CHROMIUM_PATH].filter(
  (name) => name !== null,
);
const RUNNABLE = MISSING.length === 0;

if (!RUNNABLE && !IN_CI) {
  console.warn(
    `oidc-apache: skipped: ${MISSING.join(' and ')} missing (run scripts/ensure-apache.sh and scripts/ensure-chromium.sh as root)`,
  );
}

// Under CI the suite must run: a missing Apache or Chromium is a failed test, not a skip.
if (!RUNNABLE && IN_CI) {
  it('has Apache with mod_auth_openidc and Chromium (CI=true)', () => {
    throw new Error(`oidc-apache: ${MISSING.join(' and ')} missing and CI=true; run scripts/ensure-apache.sh before the tests`);
  });
}

/** The `name: value` lines of the protected page. */
function claimsOn(text: string): Record<string, string> {
  const claims: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+): (.*)$/.exec(line.trim());
    if (match?.[1] !== undefined) claims[match[1]] = match[2] ?? '';
  }
  return claims;
}

describe.skipIf(!RUNNABLE)('mod_auth_openidc in Apache signs in through oc-host', () => {
  const mailbox = useMailbox();
  let testStore: TestStore;
  let app: FastifyInstance;
  let apache: ApacheRelyingParty;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    testStore = await openTestStore('sqlite');
    const reserved = await reservePort();
    const apachePort = await reservePort();
    base = `http://127.0.0.1:${reserved.port}`;
    app = await testApp(
      {
        PORT: String(reserved.port),
        PUBLIC_URL: base,
        SMTP_URL: mailbox.url(),
        MAIL_FROM: 'oc-host <no-reply@localhost>',
      },
      // The provider library reads the wall clock: so does the host here.
      { store: testStore.store, now: () => new Date() },
    );
    const operator = await operatorRegistry(testStore.store, base, () => new Date());
    const issued = await operator.clients.create({
      client_name: 'Intranet behind Apache',
      redirect_uris: [apacheRedirectUri(apachePort.port)],
    });
    await reserved.release();
    await app.listen({ port: reserved.port, host: '127.0.0.1' });
    await apachePort.release();
    apache = await startApache({
      port: apachePort.port,
      issuer: base,
      clientId: issued.client_id,
      clientSecret: issued.client_secret as string,
      scope: 'openid email bitcoin',
    });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await apache?.close();
    await app?.close();
    await testStore?.dispose();
  });

  /** A context that counts the consent pages it is shown (a top-level 200 of /oidc/interaction/<uid>). */
  async function countingContext(): Promise<{ context: BrowserContext; consentPages: () => number }> {
    const context = await browser.newContext({ locale: 'en-GB' });
    let consentPages = 0;
    context.on('response', (response) => {
      const url = new URL(response.url());
      // Pages the person is shown: a frame's load (the framing check) is not one.
      const topLevel = response.request().frame().parentFrame() === null;
      if (topLevel && url.origin === base && /^\/oidc\/interaction\/[^/]+$/.test(url.pathname) && response.status() === 200) consentPages++;
    });
    return { context, consentPages: () => consentPages };
  }

  /** Allows on the consent page, which names the app, and waits for the protected page; its claims. */
  async function allowAndRead(page: Page): Promise<Record<string, string>> {
    await page.waitForURL((url) => url.href.startsWith(`${base}/oidc/interaction/`));
    expect(await page.locator('main h1').textContent()).toContain('Intranet behind Apache');
    await page.getByRole('button', { name: 'Allow' }).click();
    return readProtected(page);
  }

  async function readProtected(page: Page): Promise<Record<string, string>> {
    await page
      .waitForURL((url) => url.href.startsWith(apache.protectedUrl), { timeout: 30_000 })
      .catch(async (error: unknown) => {
        throw new Error(`${String(error)}\nat ${page.url()}\n${await page.content()}\n${await apache.errorLog()}`);
      });
    return claimsOn((await page.locator('#claims').textContent()) ?? '');
  }

  /** The did:oc of the browser's host session. */
  async function didOf(context: BrowserContext): Promise<string> {
    const me = await context.request.get(`${base}/api/auth/me`);
    expect(me.status()).toBe(200);
    return ((await me.json()) as { account: { did_oc: string } }).account.did_oc;
  }

  it('signs in by e-mail code, asks consent once, and Apache sees sub = did:oc and the verified e-mail', { timeout: 90_000 }, async () => {
    const email = 'apache-reader@example.org';
    const { context, consentPages } = await countingContext();
    const page = await context.newPage();
    await page.goto(apache.protectedUrl);
    await page.waitForURL((url) => url.href.startsWith(`${base}/signin`));
    expect(new URL(page.url()).searchParams.get('return_to')).toMatch(/^\/oidc\/interaction\/[A-Za-z0-9_-]+$/);
    await page.getByLabel('E-mail address').fill(email);
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    // The sixth digit submits the code.
    await page.locator('#email-code').fill(await mailbox.nextCode(email));
    const claims = await allowAndRead(page);
    const did = await didOf(context);
    expect(did).toMatch(/^did:oc:[0-9a-f]{32}$/);
    expect(claims).toMatchObject({ user: did, sub: did, iss: base, email, email_verified: '1', amr: 'otp' });
    expect(consentPages()).toBe(1);

    // A new Apache session (its cookie gone): oc-host signs in again at once, without asking consent again.
    await context.clearCookies({ name: /^mod_auth_openidc/ });
    await page.goto(apache.protectedUrl);
    expect((await readProtected(page)).sub).toBe(did);
    expect(consentPages()).toBe(1);
    await context.close();
  });

  it('signs in by a browser wallet, the consent page cannot be framed, and Apache sees sub = did:oc and the primary address', {
    timeout: 90_000,
  }, async () => {
    const wallet: Wallet = newWallet('p2wpkh');
    const { context, consentPages } = await countingContext();
    await context.exposeFunction('ocTestSignBip322', (message: string) =>
      signBip322({ privateKey: wallet.privateKey, address: wallet.address, message }),
    );
    await context.addInitScript((address: string) => {
      const scope = globalThis as unknown as InPage;
      scope.unisat = {
        requestAccounts: async () => [address],
        signMessage: (message: string, type: string) => scope.ocTestSignBip322!(message, type),
      };
    }, wallet.address);
    const page = await context.newPage();
    await page.goto(apache.protectedUrl);
    await page.waitForURL((url) => url.href.startsWith(`${base}/signin`));
    await page.getByRole('button', { name: 'Connect UniSat' }).click();
    await page.waitForURL((url) => url.href.startsWith(`${base}/oidc/interaction/`));

    // Another site cannot frame the consent page (clickjacking): Chromium refuses to draw it.
    const framing = await context.newPage();
    const refusals: string[] = [];
    framing.on('console', (message) => {
      if (/frame-ancestors/.test(message.text())) refusals.push(message.text());
    });
    await framing.goto(apache.framing(page.url()));
    await expect.poll(() => refusals.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(refusals[0]).toContain("frame-ancestors 'none'");
    const framed = framing.frames().find((frame) => frame !== framing.mainFrame());
    expect(await framed?.locator('#consent-allow').count()).toBe(0);
    await framing.close();

    const claims = await allowAndRead(page);
    const did = await didOf(context);
    expect(claims).toMatchObject({ user: did, sub: did, primary_btc: wallet.address, amr: 'swk' });
    expect(claims.email).toBe('(none)');
    expect(consentPages()).toBe(1);
    await context.close();
  });
});
