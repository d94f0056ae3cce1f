/**
 * The sign-in and account pages in a real browser:
 * Debian's headless Chromium driven by playwright-core, against the real app
 * on a loopback port with a real SMTP server and a real OpenID provider
 * (docs/architecture.md "Tests": real parts over mocks).
 *
 * The scenarios run in order in one browser context, like one person at one
 * browser: e-mail code sign-in (by keyboard), adding a BIP-322 account,
 * switching, signing out of one account and then of all, a provider sign-in,
 * a step-up before removing an identity; then a wallet extension, and the
 * error notices.
 *
 * Chromium: `scripts/ensure-chromium.sh` installs it. Without it the suite
 * skips with a message, except under `CI=true`, where it fails.
 * `UPDATE_SCREENSHOTS=1` writes docs/screenshots/*.png.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signBip322, signLegacy } from './support/bitcoin-signer.js';
import { loadConfig } from '../src/platform/config.js';
import { buildApp } from '../src/app.js';
import { inlinePolicy } from './support/inline-page.js';
import { newWallet, type Wallet } from './support/auth-client.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { extractCode, startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { freePort, reservePort } from './support/instances.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, HAVE_CHROMIUM, IN_CI, virtualAuthenticator } from './support/chromium.js';

const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const SCREENSHOT_DIR = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const DESKTOP = { width: 1280, height: 900 };

/**
 * The browser globals that the in-page callbacks touch (the project's
 * tsconfig has no DOM lib). Callbacks cast `globalThis` to it; the cast is
 * erased before playwright serialises them.
 */
interface InPage {
  document: {
    activeElement: { id: string; textContent: string | null } | null;
    cookie: string;
    documentElement: { scrollWidth: number };
    body: { append(node: unknown): void };
    createElement(tag: 'script'): { textContent: string };
    addEventListener(
      type: 'securitypolicyviolation',
      listener: (event: { violatedDirective: string; blockedURI: string }) => void,
      options?: { once: boolean },
    ): void;
  };
  inlineRan?: boolean;
  unisat?: unknown;
  ocTestSignBip322?: (message: string, type: string) => Promise<string>;
}

if (!HAVE_CHROMIUM && !IN_CI) {
  console.warn(`e2e-browser: skipped: ${CHROMIUM_PATH} is missing (run scripts/ensure-chromium.sh as root to install Debian's chromium)`);
}

// Under CI the browser suite must run: a missing Chromium is a failed test, not a skip.
if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium to drive (CI=true)', () => {
    throw new Error(`e2e-browser: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

/** The account page's heading form of a long identity (src/pages/common.js shortName). */
function shortened(value: string): string {
  return value.length <= 24 ? value : `${value.slice(0, 10)}…${value.slice(-6)}`;
}

/** The wallets whose documented browser APIs the sign-in page drives (src/features/wallet/pages/wallets.js). */
type FakeWalletKind = 'unisat' | 'okx' | 'xverse' | 'leather' | 'phantom';
const FAKE_WALLETS: ReadonlyArray<readonly [FakeWalletKind, string]> = [
  ['unisat', 'UniSat'],
  ['okx', 'OKX Wallet'],
  ['xverse', 'Xverse'],
  ['leather', 'Leather'],
  ['phantom', 'Phantom'],
];

/** axe-core, run inside the pages (docs: 0 violations on every page, light and dark). */
const AXE_PATH = fileURLToPath(new URL('../node_modules/axe-core/axe.min.js', import.meta.url));
let AXE_SOURCE: string | undefined;

/** A consumer site of the family; the browser never reaches it (its requests are answered in the test). */
const SHOP = 'https://shop.example.com';

describe.skipIf(!HAVE_CHROMIUM)('pages in headless Chromium', () => {
  const emailAccount = 'ada@example.org';
  const oidcAccount = { sub: 'e2e-user-1', email: 'alice@example.org', emailVerified: true, name: 'Alice Example' };
  let wallet: Wallet;
  let smtp: TestSmtpServer;
  let op: TestOidcProvider;
  let app: FastifyInstance;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  /** Console errors and CSP violations of every page, checked after each flow. */
  const problems: string[] = [];

  function watch(target: Page): void {
    target.on('console', (message) => {
      // Chromium logs every answer >= 400 as "Failed to load resource"; API
      // refusals (a 401 from /me when signed out) are expected and shown on
      // the page, so page resources are checked through their responses below.
      if (/^Failed to load resource: the server responded with a status of/.test(message.text())) return;
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    target.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`));
    target.on('response', (response) => {
      const url = new URL(response.url());
      if (url.origin === base && !url.pathname.startsWith('/api/') && response.status() >= 400) {
        problems.push(`response: ${response.status()} ${url.pathname}`);
      }
    });
  }

  /**
   * A context in `locale` (its Accept-Language) at `viewport`. Every page
   * reports CSP violations to the console, where {@link watch} sees them.
   */
  async function newWatchedContext(locale = 'en-GB', viewport = DESKTOP): Promise<BrowserContext> {
    const created = await browser.newContext({ baseURL: base, viewport, locale, timezoneId: 'UTC' });
    await created.addInitScript(() => {
      (globalThis as unknown as InPage).document.addEventListener('securitypolicyviolation', (event) => {
        console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`);
      });
    });
    return created;
  }

  /** A new page, watched, in a new {@link newWatchedContext} (closing that context closes the page). */
  async function newWatchedPage(...args: Parameters<typeof newWatchedContext>): Promise<{ context: BrowserContext; page: Page }> {
    const context = await newWatchedContext(...args);
    const page = await context.newPage();
    watch(page);
    return { context, page };
  }

  /**
   * A watched context whose pages have a UniSat-style wallet for `signer`
   * (`unisat.signMessage(message, type)`), signing with its real key and
   * reporting each request to `onSign`.
   */
  async function contextWithUnisat(signer: Wallet, onSign: (message: string, type: string) => void): Promise<BrowserContext> {
    const created = await newWatchedContext();
    await created.exposeFunction('ocTestSignBip322', (message: string, type: string) => {
      onSign(message, type);
      return signBip322({ privateKey: signer.privateKey, address: signer.address, message });
    });
    await created.addInitScript((address: string) => {
      const scope = globalThis as unknown as InPage;
      scope.unisat = {
        requestAccounts: async () => [address],
        signMessage: (message: string, type: string) => scope.ocTestSignBip322!(message, type),
      };
    }, signer.address);
    return created;
  }

  /** Signs in on /signin through the page's UniSat-style wallet (its button, then its dialog), and waits for the account page. */
  async function signInWithUnisat(target: Page): Promise<void> {
    await target.goto('/signin');
    await target.getByRole('button', { name: 'Connect UniSat' }).click();
    await target.waitForURL(`${base}/account`);
  }

  /**
   * Opens signing by hand (an address, the message, a pasted signature) from
   * the sign-in page's link; a browser that holds an account first asks for
   * "Use another account".
   */
  async function openSigningByHand(target: Page): Promise<void> {
    await useAnotherAccount(target);
    await target.getByRole('button', { name: 'Sign with another wallet by hand' }).click();
  }

  /** On a sign-in page that offers "Continue as", chooses "Use another account" (once the page knows: #main is no longer busy). */
  async function useAnotherAccount(target: Page): Promise<void> {
    await expect.poll(() => target.locator('#main').getAttribute('aria-busy')).toBe('false');
    const another = target.getByRole('button', { name: 'Use another account' });
    if (await another.isVisible()) await another.click();
  }

  /**
   * axe-core's violations on the page as it is now, `id (impact) × nodes: targets`.
   * Injected through the DevTools protocol, which the page's CSP does not govern.
   */
  async function axeViolations(target: Page): Promise<string[]> {
    AXE_SOURCE ??= await readFile(AXE_PATH, 'utf8');
    if (!(await target.evaluate('typeof globalThis.axe !== "undefined"'))) await target.evaluate(AXE_SOURCE);
    return target.evaluate(
      `globalThis.axe.run(document, { resultTypes: ['violations'] }).then((result) => result.violations.map((v) => v.id + ' (' + v.impact + ') x' + v.nodes.length + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')))`,
    ) as Promise<string[]>;
  }

  /** The whole page, or only the viewport (a modal dialog's backdrop covers only the viewport). */
  async function screenshot(target: Page, name: string, fullPage = true): Promise<void> {
    if (!UPDATE_SCREENSHOTS) return;
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await target.screenshot({ path: `${SCREENSHOT_DIR}${name}`, fullPage });
  }

  async function activeElementId(target: Page): Promise<string | undefined> {
    return target.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.id);
  }

  /** The newest code mail to `to` in any language (its subject starts with the code), after `since` mails had arrived. */
  async function codeMailFor(to: string, since: number): Promise<{ code: string; subject: string }> {
    const mail = await smtp.waitForMessage(
      (candidate) =>
        candidate.envelope.to.includes(to) && smtp.messages().indexOf(candidate) >= since && /^\d{6} /.test(candidate.subject ?? ''),
      10_000,
    );
    return { code: extractCode(mail), subject: mail.subject ?? '' };
  }

  /** The code of that mail. */
  async function codeFor(to: string, since: number): Promise<string> {
    return (await codeMailFor(to, since)).code;
  }

  async function rosterNames(target: Page): Promise<string[]> {
    return target.locator('#roster .item-title').allTextContents();
  }

  /** Opens a section of the account page with its link, as a person would (account.html's navigation). */
  async function openSection(target: Page, name: string): Promise<void> {
    await target.getByRole('navigation', { name: 'Account sections' }).getByRole('link', { name, exact: true }).click();
    await expect.poll(() => target.locator('.account-nav a[aria-current="true"]').textContent()).toBe(name);
  }

  async function noHorizontalScroll(target: Page, width: number): Promise<void> {
    await target.setViewportSize({ width, height: 800 });
    const scrollWidth = await target.evaluate(() => (globalThis as unknown as InPage).document.documentElement.scrollWidth);
    expect(scrollWidth, `page is wider than ${width} px`).toBeLessThanOrEqual(width);
  }

  function expectNoProblems(): void {
    expect(problems).toEqual([]);
  }

  /**
   * How far the service's clock runs ahead of this machine's. A test moves it
   * on, never back (a rate limit would take a step back for a burst); the
   * `Date` header follows it, as the pages read the service's time there.
   */
  let clockAheadMs = 0;

  beforeAll(async () => {
    wallet = newWallet('p2wpkh');
    smtp = await startSmtpServer();
    const reserved = await reservePort();
    const port = reserved.port;
    // localhost, not 127.0.0.1: browsers accept the Secure cookie on http://localhost.
    base = `http://localhost:${port}`;
    const clientSecret = randomBytes(24).toString('hex');
    op = await startOidcProvider({
      clientId: 'oc-e2e',
      clientSecret,
      redirectUri: `${base}/api/auth/acme/callback`,
      account: oidcAccount,
    });
    app = await buildApp(
      loadConfig({
        PORT: String(port),
        PUBLIC_URL: base,
        DATABASE_URL: 'sqlite::memory:',
        LOG_LEVEL: 'silent',
        NOSTR_RELAYS: 'ws://127.0.0.1:9',
        ESPLORA_URLS: 'http://127.0.0.1:9',
        SMTP_URL: smtp.url,
        MAIL_FROM: 'oc-host <no-reply@localhost>',
        OAUTH_ACME_CLIENT_ID: 'oc-e2e',
        OAUTH_ACME_CLIENT_SECRET: clientSecret,
        OAUTH_ACME_ISSUER: op.issuer,
        // One loopback IP does the whole flow; the limits have their own tests.
        RATE_LIMIT_AUTH_PER_MIN: '1000',
        RATE_LIMIT_READ_PER_MIN: '1000',
        RATE_LIMIT_OTP_PER_HOUR: '100',
        // Another site of the family, where the OrangeCheck client pins tabs (#oc-adopt).
        FAMILY_ORIGINS: `${base},${SHOP}`,
      }),
      { logger: false, now: () => new Date(Date.now() + clockAheadMs) },
    );
    app.addHook('onSend', (_request, reply, payload, done) => {
      reply.header('date', new Date(Date.now() + clockAheadMs).toUTCString());
      done(null, payload);
    });
    await reserved.release();
    await app.listen({ port, host: '127.0.0.1' });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    ({ context, page } = await newWatchedPage());
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await op?.close();
    await smtp?.close();
  });

  it('serves /signin with a strict CSP, security headers and no inline script or style but its own, allowed by hash', async () => {
    const response = await page.goto('/signin');
    expect(response?.status()).toBe(200);
    const headers = response!.headers();
    expect(headers['content-type']).toBe('text/html; charset=utf-8');
    expect(headers['content-security-policy']).toBe(inlinePolicy(await response!.text()));
    expect(headers['content-security-policy']).not.toMatch(/unsafe-inline/);
    expect(headers['x-content-type-options']).toBe('nosniff');
    expect(headers['referrer-policy']).toBe('no-referrer');
    await expect.poll(() => page.getByRole('link', { name: 'Continue with Acme' }).isVisible()).toBe(true);

    // Its style, its catalog (data, never run) and its script, inline (src/web/pages.ts); nothing else.
    expect(await page.locator('script:not([src])').evaluateAll((scripts) => scripts.map((script) => script.getAttribute('type')))).toEqual([
      'application/json',
      'module',
    ]);
    expect(await page.locator('style').count()).toBe(1);
    expect(await page.locator('[style]').count()).toBe(0);
    expect(await page.locator('main h1').textContent()).toBe('Sign in');
    for (const label of ['Bitcoin address', 'E-mail address']) expect(await page.getByLabel(label, { exact: true }).count()).toBe(1);

    const script = await page.request.get('/assets/signin.js');
    expect(script.status()).toBe(200);
    expect(script.headers()['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers()['cache-control']).toBe('public, max-age=300');
    expect(script.headers()['x-content-type-options']).toBe('nosniff');
    const etag = script.headers().etag;
    expect((await page.request.get('/assets/signin.js', { headers: { 'if-none-match': etag! } })).status()).toBe(304);
    expect((await page.request.get('/assets/app.css')).headers()['content-type']).toBe('text/css; charset=utf-8');
    for (const path of [
      '/assets/nope.js',
      '/assets/..%2Fhttp%2Fpages.ts',
      '/assets/signin.html',
      '/assets/%2e%2e%2f%2e%2e%2fpackage.json',
    ]) {
      expect((await page.request.get(path)).status(), path).toBe(404);
    }
    // The pages are not API routes: they stay out of the OpenAPI document.
    const openapi = (await (await page.request.get('/api/openapi')).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths).filter((path) => /^\/(signin|account|assets)/.test(path))).toEqual([]);

    await screenshot(page, 'signin.png');
    expectNoProblems();
  });

  it('reports a CSP violation when something inline sneaks in (the watch above can fail)', async () => {
    const probe = await context.newPage();
    const seen: string[] = [];
    probe.on('console', (message) => seen.push(message.text()));
    await probe.goto('/signin');
    const ran = await probe.evaluate(async () => {
      const scope = globalThis as unknown as InPage;
      const script = scope.document.createElement('script');
      script.textContent = 'window.inlineRan = true;';
      // The browser reports the blocked script by this event; by then it would have run.
      const blocked = new Promise((resolve) => scope.document.addEventListener('securitypolicyviolation', resolve, { once: true }));
      scope.document.body.append(script);
      await blocked;
      return scope.inlineRan === true;
    });
    expect(ran).toBe(false);
    await expect.poll(() => seen.some((text) => /CSP violation: script-src/.test(text)), { timeout: 5_000 }).toBe(true);
    await probe.close();
  });

  it('/account without a session redirects to /signin?return_to=/account', async () => {
    const response = await page.goto('/account');
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe('/signin?return_to=/account');
    expect(response?.headers()['content-security-policy']).toBe(inlinePolicy(await response!.text()));
    expect(await page.locator('body').getAttribute('data-return-to')).toBe('/account');
    expectNoProblems();
  });

  it('(1) signs in with an e-mail code, by keyboard only, and lands on /account', async () => {
    await page.goto('/signin?return_to=/account');
    // The first Tab reaches the skip link.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.textContent)).toBe('Skip to main content');
    await page.getByLabel('E-mail address').focus();
    await page.keyboard.type(emailAccount);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.textContent)).toBe('Continue');
    const mailsBefore = smtp.messages().length;
    await page.keyboard.press('Enter');
    // Focus moves to the code field once the code is sent.
    await expect.poll(() => activeElementId(page)).toBe('email-code');
    await expect.poll(() => page.locator('#page-status').textContent()).toBe(`Code sent to ${emailAccount}.`);
    const code = await codeFor(emailAccount, mailsBefore);

    // The code's clock and the wait before another code may be asked for are on show.
    expect(await page.locator('#email-countdown').textContent()).toMatch(/^The code expires in (10:00|9:[0-5]\d)\.$/);
    expect(await page.locator('#email-resend').textContent()).toMatch(/^Send a new code \(in [1-3]?\d s\)$/);
    // A wrong code first (typed to the sixth digit, which submits it): a clear sentence with the tries left, focus stays.
    await page.keyboard.type(code === '000000' ? '111111' : '000000');
    await expect
      .poll(() => page.locator('#email-error').textContent())
      .toBe('That code is not right. 4 tries left before it stops working.');
    expect(await page.locator('#email-code').getAttribute('aria-invalid')).toBe('true');
    expect(await activeElementId(page)).toBe('email-code');

    // The wrong code is selected: typing replaces it, and Enter after the sixth digit does not spend a second try.
    await page.keyboard.type(code);
    await page.keyboard.press('Enter');
    await page.waitForURL(`${base}/account`);
    await expect.poll(() => page.locator('#active-heading-name').textContent()).toBe(emailAccount);
    expect(await page.locator('#active-did').textContent()).toMatch(/^did:oc:[0-9a-f]{32}$/);
    // The account ID and the shown identity each have a copy button that says what happened.
    await page.getByRole('button', { name: 'Copy the account ID' }).click();
    await expect
      .poll(() => page.locator('#page-status').textContent())
      .toMatch(/^(The account ID was copied\.|It is selected: copy it with your keyboard or menu\.)$/);
    expect(await page.getByRole('button', { name: 'Copy the e-mail' }).isVisible()).toBe(true);
    expect(await page.locator('#roster-empty').isVisible()).toBe(true);
    expect(await rosterNames(page)).toEqual([]);
    await expect.poll(() => page.locator('#identities .item-title').allTextContents()).toEqual([emailAccount]);

    // The cookie is HttpOnly: the page's scripts cannot read the session.
    const cookie = (await context.cookies()).find((candidate) => candidate.name === 'oc_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(await page.evaluate(() => (globalThis as unknown as InPage).document.cookie)).not.toMatch(/oc_session/);
    expect(await page.content()).not.toContain(cookie!.value);

    await screenshot(page, 'account.png');
    expectNoProblems();
  });

  it('(2) adds a second account with a pasted BIP-322 signature', async () => {
    await page.getByRole('link', { name: 'Add another account' }).click();
    await page.waitForURL(`${base}/signin?add=1&return_to=/account`);
    expect(await page.locator('main h1').textContent()).toBe('Add another account');
    // This browser last signed in with an e-mail code: that way is marked.
    await expect.poll(() => page.locator('#email-last-used').isVisible()).toBe(true);
    expect(await page.locator('#email-last-used').textContent()).toBe('Last used');
    // add=1 and return_to reach the provider path too.
    await expect
      .poll(() => page.getByRole('link', { name: 'Continue with Acme' }).getAttribute('href'))
      .toBe('/api/auth/acme/start?return_to=%2Faccount&add=1');

    await openSigningByHand(page);
    await page.getByLabel('Bitcoin address').fill(wallet.address);
    await page.getByRole('button', { name: 'Get message to sign' }).click();
    await expect.poll(() => page.locator('#btc-message').isVisible()).toBe(true);
    const message = await page.locator('#btc-message').inputValue();
    expect(message).toContain(`address: ${wallet.address}\n`);
    expect(message).toContain(`audience: ${base}\n`);
    expect(message).toContain('purpose: login\n');
    expect(await page.locator('#btc-message').getAttribute('readonly')).not.toBeNull();
    expect(await activeElementId(page)).toBe('btc-message');

    // A signature of something else is refused with a sentence, not a code.
    await page
      .getByLabel('Signature')
      .fill(signBip322({ privateKey: wallet.privateKey, address: wallet.address, message: 'something else' }));
    await page.locator('#btc-submit').click();
    await expect.poll(() => page.locator('#btc-error').textContent()).toMatch(/^The signature does not match/);

    const signature = signBip322({ privateKey: wallet.privateKey, address: wallet.address, message });
    await page.getByLabel('Signature').fill(signature);
    await page.locator('#btc-submit').click();
    await page.waitForURL(`${base}/account`);
    await expect.poll(() => page.locator('#active-heading-name').textContent()).toBe(shortened(wallet.address));
    expect(await page.locator('#active-identity-kind').textContent()).toBe('Bitcoin address');
    await expect.poll(() => rosterNames(page)).toEqual([emailAccount]);
    expect(await page.locator('#roster-empty').isVisible()).toBe(false);
    await screenshot(page, 'account-roster.png');

    // Readable on a phone: no horizontal scroll at 390 and at 360 px.
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'account-mobile.png');
    await noHorizontalScroll(page, 390);
    await noHorizontalScroll(page, 360);
    await page.setViewportSize(DESKTOP);
    expectNoProblems();
  });

  it('(3) switches to the other account with its button (keyboard)', async () => {
    const switchButton = page.getByRole('button', { name: `Switch to ${emailAccount}` });
    await switchButton.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#active-heading-name').textContent()).toBe(emailAccount);
    await expect.poll(() => page.locator('#page-status').textContent()).toBe(`You are now using ${emailAccount}.`);
    expect(await rosterNames(page)).toEqual([wallet.address]);
    // Focus lands on the active account's heading, not on the removed button.
    expect(await activeElementId(page)).toBe('active-title');
    const me = await page.request.get('/api/auth/me');
    expect(((await me.json()) as { account: { display_identity: { value: string } } }).account.display_identity.value).toBe(emailAccount);
    expectNoProblems();
  });

  it('(4) signs out of this account; the other one stays signed in', async () => {
    await page.getByRole('button', { name: 'Sign out of this account' }).click();
    await expect.poll(() => page.locator('#active-heading-name').textContent()).toBe(shortened(wallet.address));
    // The heading, the status line and the roster are updated one after the other: wait for each.
    await expect
      .poll(() => page.locator('#page-status').textContent())
      .toBe(`Signed out of ${emailAccount}. You are now using ${wallet.address}.`);
    await expect.poll(() => rosterNames(page)).toEqual([]);
    // With one account left, one plain sign-out button remains.
    expect(await page.getByRole('button', { name: 'Sign out', exact: true }).isVisible()).toBe(true);
    expect(await page.getByRole('button', { name: 'Sign out of all accounts' }).isVisible()).toBe(false);
    expectNoProblems();
  });

  it('(5) signs out of all accounts and lands on /signin', async () => {
    // Bring the e-mail account back (add=1 through the e-mail path), so "all" means two.
    await page.getByRole('link', { name: 'Add another account' }).click();
    await page.waitForURL(/\/signin\?add=1/);
    await page.getByLabel('E-mail address').fill(emailAccount);
    const mailsBefore = smtp.messages().length;
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    // Pasted the way mails and phones show it; six digits sign in without a click.
    const pasted = await codeFor(emailAccount, mailsBefore);
    await page.getByLabel('6-digit code').fill(`${pasted.slice(0, 3)} ${pasted.slice(3)}`);
    await page.waitForURL(`${base}/account`);
    await expect.poll(() => rosterNames(page)).toEqual([wallet.address]);

    // A confirmation first, naming how many accounts go; Cancel keeps them.
    await page.getByRole('button', { name: 'Sign out of all accounts' }).click();
    const confirm = page.getByRole('dialog', { name: 'Sign out of all 2 accounts?' });
    await expect.poll(() => confirm.isVisible()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => page.locator('#page-status').textContent()).toBe('You are still signed in.');
    await expect.poll(() => activeElementId(page)).toBe('logout-all');
    await page.getByRole('button', { name: 'Sign out of all accounts' }).click();
    await confirm.getByRole('button', { name: 'Sign out of all 2' }).click();
    await page.waitForURL(`${base}/signin?signed_out=1`);
    await expect.poll(() => page.locator('#page-status').textContent()).toBe('You are signed out.');
    expect((await context.cookies()).some((cookie) => cookie.name === 'oc_session')).toBe(false);
    expect((await page.request.get('/api/auth/me')).status()).toBe(401);
    await page.goto('/account');
    expect(page.url()).toBe(`${base}/signin?return_to=/account`);
    expectNoProblems();
  });

  it('(6) signs in with the OpenID provider button and lands on /account', async () => {
    await page.getByRole('link', { name: 'Continue with Acme' }).click();
    await page.waitForURL(`${base}/account`);
    await expect.poll(() => page.locator('#active-heading-name').textContent()).toBe(oidcAccount.name);
    expect(await page.locator('#active-name').textContent()).toBe(oidcAccount.name);
    await expect
      .poll(() => page.locator('#identities .item-title').allTextContents())
      .toEqual(expect.arrayContaining(['Acme account', oidcAccount.email]));
    expect(await rosterNames(page)).toEqual([]);
    expectNoProblems();
  });

  it('edits the display name', async () => {
    await page.getByRole('button', { name: 'Edit name' }).click();
    await page.getByLabel('Display name').fill('  Alice at Acme ');
    await page.getByRole('button', { name: 'Save name' }).click();
    await expect.poll(() => page.locator('#page-status').textContent()).toBe('Display name saved.');
    expect(await page.locator('#active-heading-name').textContent()).toBe('Alice at Acme');
    await page.reload();
    await expect.poll(() => page.locator('#active-name').textContent()).toBe('Alice at Acme');
    expectNoProblems();
  });

  it('asks for a step-up (e-mail code) before removing an identity, then retries', async () => {
    await openSection(page, 'Ways to sign in');
    await page.getByRole('button', { name: `Remove ${oidcAccount.email}` }).click();
    await page
      .getByRole('dialog', { name: `Remove ${oidcAccount.email}?` })
      .getByRole('button', { name: 'Remove' })
      .click();
    const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
    // The step-up says what it confirms.
    await expect
      .poll(() => dialog.locator('#sudo-intro').textContent())
      .toBe(`To remove ${oidcAccount.email}, prove again that you control this account. The proof stays valid for 5 minutes.`);
    await expect.poll(() => dialog.isVisible()).toBe(true);
    // Only the account's own e-mail is offered; it has no Bitcoin address.
    expect(await dialog.getByLabel('E-mail address').inputValue()).toBe(oidcAccount.email);
    expect(await dialog.getByLabel('Bitcoin address').isVisible()).toBe(false);
    await screenshot(page, 'account-step-up.png', false);
    const mailsBefore = smtp.messages().length;
    await dialog.getByRole('button', { name: 'Send code' }).click();
    await expect.poll(() => activeElementId(page)).toBe('sudo-code');
    // The sixth digit confirms: no Enter needed.
    await page.keyboard.type(await codeFor(oidcAccount.email, mailsBefore));
    await expect.poll(() => page.locator('#page-status').textContent()).toBe(`${oidcAccount.email} was removed from this account.`);
    expect(await dialog.isVisible()).toBe(false);
    expect(await page.locator('#identities .item-title').allTextContents()).toEqual(['Acme account']);
    expectNoProblems();
  });

  it('signs in through an injected browser wallet (UniSat-style signMessage bip322-simple)', async () => {
    const other = newWallet('p2tr');
    const requested: string[] = [];
    const walletContext = await contextWithUnisat(other, (_message, type) => requested.push(type));
    const walletPage = await walletContext.newPage();
    watch(walletPage);
    await signInWithUnisat(walletPage);
    await expect.poll(() => walletPage.locator('#active-heading-name').textContent()).toBe(shortened(other.address));
    expect(requested).toEqual(['bip322-simple']);
    await walletContext.close();
    expectNoProblems();
  });

  /**
   * A watched context whose pages have one fake wallet of `kind`, shaped as
   * that wallet's documented API, holding `signer` (and a taproot address
   * besides, for the wallets that report two). `mode` decides what signing
   * does: a real BIP-322 signature, a decline, or a legacy ECDSA signature.
   */
  async function contextWithFakeWallet(
    kind: FakeWalletKind,
    signer: Wallet,
    mode: 'ok' | 'decline' | 'legacy',
    active = signer.address,
  ): Promise<BrowserContext> {
    const created = await newWatchedContext();
    await created.exposeFunction('ocTestSign', (message: string) =>
      mode === 'legacy'
        ? signLegacy(signer.privateKey, message)
        : signBip322({ privateKey: signer.privateKey, address: signer.address, message }),
    );
    await created.addInitScript(
      ({ kind, mode, active, taproot }) => {
        const scope = globalThis as unknown as Record<string, any>;
        const declined = () => Object.assign(new Error('User rejected the request.'), { code: 4001 });
        const sign = async (message: string): Promise<string> => {
          if (mode === 'decline') throw declined();
          return scope.ocTestSign(message);
        };
        const base64ToBytes = (text: string) => Uint8Array.from(atob(text), (character) => character.charCodeAt(0));
        if (kind === 'unisat') scope.unisat = { requestAccounts: async () => [active], signMessage: (message: string) => sign(message) };
        if (kind === 'okx')
          scope.okxwallet = {
            bitcoin: { connect: async () => ({ address: active, publicKey: '' }), signMessage: (message: string) => sign(message) },
          };
        if (kind === 'xverse') {
          scope.XverseProviders = {
            BitcoinProvider: {
              request: async (method: string, params: { protocol?: string; message: string; address: string }) => {
                if (method === 'getAccounts')
                  return {
                    jsonrpc: '2.0',
                    result: [
                      { address: taproot, purpose: 'ordinals' },
                      { address: active, purpose: 'payment' },
                    ],
                  };
                if (method !== 'signMessage' || params.protocol !== 'BIP322')
                  return { jsonrpc: '2.0', error: { code: -32601, message: 'unexpected call' } };
                if (mode === 'decline') return { jsonrpc: '2.0', error: { code: -32000, message: 'User rejected the request' } };
                return { jsonrpc: '2.0', result: { signature: await sign(params.message), address: params.address } };
              },
            },
          };
        }
        if (kind === 'leather') {
          scope.LeatherProvider = {
            request: async (method: string, params: { message: string; paymentType: string }) => {
              if (method === 'getAddresses')
                return {
                  result: {
                    addresses: [
                      { symbol: 'BTC', type: 'p2tr', address: taproot },
                      { symbol: 'BTC', type: 'p2wpkh', address: active },
                    ],
                  },
                };
              if (params.paymentType !== 'p2wpkh') return { error: { code: 4002, message: 'wrong payment type' } };
              return { result: { signature: await sign(params.message) } };
            },
          };
        }
        if (kind === 'phantom') {
          scope.phantom = {
            bitcoin: {
              requestAccounts: async () => [{ address: active, addressType: 'p2wpkh', purpose: 'payment', publicKey: '' }],
              signMessage: async (_address: string, bytes: Uint8Array) => ({
                signature: base64ToBytes(await sign(new TextDecoder().decode(bytes))),
              }),
            },
          };
        }
      },
      { kind, mode, active, taproot: newWallet('p2tr').address },
    );
    return created;
  }

  for (const [kind, label] of FAKE_WALLETS) {
    it(`connects ${label}, which gives the address and signs; a decline and a legacy signature are explained`, async () => {
      const signer = newWallet('p2wpkh');
      for (const mode of ['decline', 'legacy', 'ok'] as const) {
        const walletContext = await contextWithFakeWallet(kind, signer, mode);
        const walletPage = await walletContext.newPage();
        watch(walletPage);
        await walletPage.goto('/signin');
        await walletPage.getByRole('button', { name: `Connect ${label}` }).click();
        if (mode === 'ok') {
          await walletPage.waitForURL(`${base}/account`);
          await expect.poll(() => walletPage.locator('#active-heading-name').textContent()).toBe(shortened(signer.address));
        } else {
          const expected =
            mode === 'decline'
              ? `You declined in ${label}, so nothing was signed.`
              : `${label} signed with the legacy method (ECDSA), which only works for addresses starting with 1. Choose BIP-322 in its signing options and sign again.`;
          // Said in the wallet's dialog, next to the button that asks the wallet again.
          const dialog = walletPage.getByRole('dialog', { name: label });
          await expect.poll(() => dialog.locator('#wallet-error').textContent()).toBe(expected);
          expect(await dialog.getByRole('button', { name: 'Try again' }).isVisible()).toBe(true);
          if (kind === 'unisat' && mode === 'legacy') await screenshot(walletPage, 'signin-wallet-legacy.png', false);
        }
        await walletContext.close();
      }
      expectNoProblems();
    });
  }

  it('says so before signing when the wallet uses another address than the one typed', async () => {
    const typed = newWallet('p2wpkh');
    const activeWallet = newWallet('p2wpkh');
    for (const [kind, label] of FAKE_WALLETS.filter(([kind]) => kind === 'unisat' || kind === 'okx' || kind === 'leather')) {
      const walletContext = await contextWithFakeWallet(kind, activeWallet, 'ok');
      const walletPage = await walletContext.newPage();
      watch(walletPage);
      await walletPage.goto('/signin');
      await openSigningByHand(walletPage);
      await walletPage.getByLabel('Bitcoin address').fill(typed.address);
      await walletPage.getByRole('button', { name: 'Get message to sign' }).click();
      await walletPage.getByRole('button', { name: `Sign with ${label}` }).click();
      await expect
        .poll(() => walletPage.locator('#btc-error').textContent())
        .toBe(
          `${label} is using ${activeWallet.address}, not ${typed.address}. Switch to ${typed.address} in ${label}, or start again with ${activeWallet.address}.`,
        );
      expect(await walletPage.getByLabel('Signature').inputValue()).toBe('');
      await walletContext.close();
    }
    expectNoProblems();
  });

  it('runs the /sudo round trip a consumer starts with redirectToSudo: sign in, re-prove, back to return_to', async () => {
    const signer = newWallet('p2wpkh');
    const purposes: string[] = [];
    const sudoContext = await contextWithUnisat(signer, (message) => purposes.push(/\npurpose: ([a-z]+)\n/.exec(message)?.[1] ?? '?'));
    const sudoPage = await sudoContext.newPage();
    watch(sudoPage);
    // What auth-client's redirectToSudo({returnTo, purpose}) opens.
    const sudoUrl = `/sudo?return_to=${encodeURIComponent('/account?confirmed=1')}&purpose=${encodeURIComponent('register a hardware key')}`;
    await sudoPage.goto(sudoUrl);
    // Signed out: sign in first, then the same /sudo again.
    await sudoPage.waitForURL(`${base}/signin?return_to=${encodeURIComponent(sudoUrl)}`);
    await sudoPage.getByRole('button', { name: 'Connect UniSat' }).click();
    await sudoPage.waitForURL(`${base}${sudoUrl}`);

    await expect
      .poll(() => sudoPage.locator('#lead').textContent())
      .toMatch(/^To register a hardware key, confirm that you control this account\./);
    await expect.poll(() => sudoPage.locator('#proof-account').textContent()).toBe(shortened(signer.address));
    for (const scheme of ['light', 'dark'] as const) {
      await sudoPage.emulateMedia({ colorScheme: scheme });
      expect(await axeViolations(sudoPage), `/sudo ${scheme}`).toEqual([]);
    }
    await sudoPage.emulateMedia({ colorScheme: 'light' });
    expect(await sudoPage.locator('#sudo-cancel').getAttribute('href')).toBe('/account?confirmed=1');
    expect(await sudoPage.locator('#sudo-email').isVisible()).toBe(false);
    await screenshot(sudoPage, 'sudo.png');
    await sudoPage.getByLabel('Bitcoin address').selectOption(signer.address);
    await sudoPage.getByRole('button', { name: 'Get message to sign' }).click();
    await sudoPage.getByRole('button', { name: 'Sign with UniSat' }).click();
    await sudoPage.waitForURL(`${base}/account?confirmed=1`);
    expect(purposes).toEqual(['login', 'sudo']);

    // The cookie now carries a fresh sudo_at, which consumers check (auth-core verifySudoClaim).
    const cookie = (await sudoContext.cookies()).find((candidate) => candidate.name === 'oc_session');
    const claims = JSON.parse(Buffer.from(cookie!.value.split('.')[1]!, 'base64url').toString()) as {
      sudo_at?: number;
      step_up_at?: number;
    };
    expect(Math.abs((claims.sudo_at ?? 0) - Date.now() / 1000)).toBeLessThan(60);
    expect(claims.step_up_at).toBeUndefined();
    await sudoContext.close();
    expectNoProblems();
  });

  function claimsOf(token: string | undefined): {
    sudo_at?: number;
    step_up_at?: number;
    signing_method?: string | null;
    amr?: string[];
    did_oc?: string;
  } {
    return JSON.parse(Buffer.from((token ?? '..').split('.')[1]!, 'base64url').toString());
  }

  async function sessionCookie(target: BrowserContext): Promise<string | undefined> {
    return (await target.cookies()).find((candidate) => candidate.name === 'oc_session')?.value;
  }

  it('adds a passkey on the account page, re-proves and steps up with it, signs in and adds an account with it on a fresh profile, removes it', async () => {
    const owner = newWallet('p2wpkh');
    const keyContext = await contextWithUnisat(owner, () => undefined);
    const keyPage = await keyContext.newPage();
    watch(keyPage);
    const authenticator = await virtualAuthenticator(keyPage, 'platform');
    await signInWithUnisat(keyPage);
    await openSection(keyPage, 'Security');
    const keys = keyPage.getByRole('region', { name: 'Security keys and passkeys' });
    await expect.poll(() => keys.isVisible()).toBe(true);
    expect(await keyPage.locator('#keys-empty').isVisible()).toBe(true);

    // Adding needs a fresh step-up: the dialog asks first (no key yet, so the wallet), then the browser's prompt.
    await keys.getByRole('button', { name: 'Add a security key' }).click();
    await keys.getByLabel('Name of the new key').fill('Laptop');
    await keys.getByLabel('Also sign in with it (a passkey)').check();
    await keys.getByRole('button', { name: 'Add the key' }).click();
    const dialog = keyPage.getByRole('dialog', { name: 'Confirm it is you' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    expect(await dialog.locator('#sudo-key').isVisible()).toBe(false);
    await dialog.getByRole('button', { name: 'Get message to sign' }).click();
    await dialog.getByRole('button', { name: 'Sign with UniSat' }).click();
    await expect.poll(() => keyPage.locator('#page-status').textContent()).toBe('Laptop was added: you can now sign in with it.');
    expect(await keyPage.locator('#keys .item-title').allTextContents()).toEqual(['Laptop']);
    expect(await keyPage.locator('#keys .item-sub').textContent()).toMatch(/^Passkey · added .+ · not used yet$/);
    const stored = await authenticator.credentials();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ isResidentCredential: true, rpId: 'localhost' });

    // Rename in place.
    await keys.getByRole('button', { name: 'Rename Laptop' }).click();
    await keys.getByLabel('New name for Laptop').fill('Work laptop');
    await keyPage.keyboard.press('Enter');
    await expect.poll(() => keyPage.locator('#keys .item-title').allTextContents()).toEqual(['Work laptop']);
    await screenshot(keyPage, 'account-keys.png');

    // The /sudo page (and the step-up dialog) now offer the key: it sets sudo_at.
    await keyPage.goto(`/sudo?return_to=${encodeURIComponent('/account?keyed=1')}`);
    await keyPage.getByRole('button', { name: 'Use a security key or passkey' }).click();
    await keyPage.waitForURL(`${base}/account?keyed=1`);
    expect(Math.abs((claimsOf(await sessionCookie(keyContext)).sudo_at ?? 0) - Date.now() / 1000)).toBeLessThan(60);

    // A consumer's step-up, as auth-client's useStepUpAuth drives it: options, the browser's prompt, verify.
    // A string, so the test runner's transform leaves the page's dynamic import alone.
    const stepUp = await keyPage.evaluate<{ ok: boolean; step_up_at: number }>(`(async () => {
      const passkeys = await import('/assets/passkeys.js');
      const post = async (path, body) =>
        (await fetch(path, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
      const options = await post('/api/auth/webauthn/assertion/options', { purpose: 'spend_over_1m' });
      const response = await passkeys.getAssertion(options.options);
      return post('/api/auth/webauthn/assertion/verify', { challenge_token: options.challenge_token, response });
    })()`);
    expect(stepUp).toMatchObject({ ok: true });
    expect(Math.abs(stepUp.step_up_at - Date.now() / 1000)).toBeLessThan(60);
    expect(claimsOf(await sessionCookie(keyContext)).step_up_at).toBe(stepUp.step_up_at);

    // A fresh profile with the same passkey (moved there as it is now: a copy
    // with an older signature counter would be refused as a clone) signs in
    // from the sign-in page's autofill request (conditional UI), which the
    // virtual authenticator answers at once, as a person picking the passkey would.
    const { context: freshContext, page: freshPage } = await newWatchedPage();
    const freshAuthenticator = await virtualAuthenticator(freshPage, 'platform', await authenticator.credentials());
    await freshPage.goto('/signin');
    await freshPage.waitForURL(`${base}/account`);
    await expect.poll(() => freshPage.locator('#active-heading-name').textContent()).toBe(shortened(owner.address));
    expect(claimsOf(await sessionCookie(freshContext))).toMatchObject({ signing_method: 'passkey', amr: ['hwk', 'user'] });

    // Someone else signed in on a third profile, whose browser offers no
    // passkey autofill, adds the passkey's account with the button.
    const other = newWallet('p2tr');
    const addContext = await contextWithUnisat(other, () => undefined);
    await addContext.addInitScript(() => {
      (
        globalThis as unknown as { PublicKeyCredential: { isConditionalMediationAvailable?: () => Promise<boolean> } }
      ).PublicKeyCredential.isConditionalMediationAvailable = async () => false;
    });
    const addPage = await addContext.newPage();
    watch(addPage);
    await virtualAuthenticator(addPage, 'platform', await freshAuthenticator.credentials());
    await signInWithUnisat(addPage);
    await addPage.goto('/signin?add=1&return_to=/account');
    await addPage.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await addPage.waitForURL(`${base}/account`);
    await expect.poll(() => addPage.locator('#active-heading-name').textContent()).toBe(shortened(owner.address));
    expect(await rosterNames(addPage)).toEqual([other.address]);

    // Removing it (the step-up above is fresh) ends passkey sign-in with it.
    await openSection(keyPage, 'Security');
    await keys.getByRole('button', { name: 'Remove Work laptop' }).click();
    await expect.poll(() => keyPage.locator('#page-status').textContent()).toBe('Work laptop was removed from this account.');
    expect(await keyPage.locator('#keys-empty').isVisible()).toBe(true);
    await addContext.clearCookies();
    await addPage.goto('/signin');
    await addPage.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await expect.poll(() => addPage.locator('#passkey-error').textContent()).toMatch(/not one this service can sign you in with/);

    await Promise.all([keyContext.close(), freshContext.close(), addContext.close()]);
    expectNoProblems();
  });

  it('lists where the account is signed in, signs every other browser out after a step-up, shows it in the activity, downloads the data and deletes the account', async () => {
    const owner = newWallet('p2wpkh');
    const contexts = [await contextWithUnisat(owner, () => undefined), await contextWithUnisat(owner, () => undefined)];
    const [here, there] = await Promise.all(contexts.map((created) => created.newPage()));
    for (const target of [here!, there!]) {
      watch(target);
      await signInWithUnisat(target);
    }
    await here!.reload();
    await openSection(here!, 'Security');
    const devices = here!.getByRole('region', { name: 'Where you are signed in' });
    await expect.poll(() => devices.locator('li').count()).toBe(2);
    expect(await devices.locator('li').first().locator('.badge').textContent()).toBe('This browser');
    expect(await devices.locator('.item-title').first().textContent()).toMatch(/^Chrom(e|ium) \d+ on Linux This browser$/);
    expect(await devices.locator('.item-sub').first().textContent()).toMatch(
      /^Signed in .+ with Bitcoin wallet · last seen .+ · network 127\.0\.0\.0\/24$/,
    );

    await devices.getByRole('button', { name: 'Sign out everywhere else' }).click();
    const dialog = here!.getByRole('dialog', { name: 'Confirm it is you' });
    await expect.poll(() => dialog.isVisible()).toBe(true);
    await dialog.getByRole('button', { name: 'Get message to sign' }).click();
    await dialog.getByRole('button', { name: 'Sign with UniSat' }).click();
    await expect.poll(() => here!.locator('#page-status').textContent()).toBe('One other browser was signed out.');
    expect(await devices.locator('li').count()).toBe(1);
    // The account's activity shows what just happened, newest first.
    const activity = here!.getByRole('region', { name: 'Recent activity' });
    await expect.poll(() => activity.locator('.item-title').first().textContent()).toBe('Signed out everywhere else (1 browser)');
    const titles = await activity.locator('.item-title').allTextContents();
    expect(titles.slice(0, 2)).toEqual(['Signed out everywhere else (1 browser)', 'Confirmed it was you with Bitcoin wallet']);
    expect(titles.slice(2)).toEqual([
      expect.stringMatching(/^Signed in with Bitcoin wallet \(Chrom(e|ium) \d+ on Linux, network 127\.0\.0\.0\/24\)$/),
      expect.stringMatching(/^Signed in with Bitcoin wallet \(/),
    ]);
    await there!.goto('/account');
    await there!.waitForURL(`${base}/signin?return_to=/account`);
    await screenshot(here!, 'account-devices.png');
    for (const scheme of ['light', 'dark'] as const) {
      await here!.emulateMedia({ colorScheme: scheme });
      expect(await axeViolations(here!), `/account ${scheme}`).toEqual([]);
    }

    // Your data: the download needs the confirmation just given (still fresh), then the account is deleted.
    await openSection(here!, 'Your data');
    const data = here!.getByRole('region', { name: 'Your data' });
    const [download] = await Promise.all([
      here!.waitForEvent('download'),
      data.getByRole('button', { name: 'Download your data' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^account-[0-9a-f]{12}-\d{4}-\d{2}-\d{2}\.json$/);
    const exported = JSON.parse(await readFile(await download.path(), 'utf8'));
    expect(exported.format).toBe('oc-host.account-export.v1');
    expect(exported.identities.map((identity: { value: string }) => identity.value)).toEqual([owner.address]);
    await expect.poll(() => here!.locator('#page-status').textContent()).toBe('Your data was downloaded as a JSON file.');
    // The deletion's form opens on demand, its field first.
    expect(await data.getByLabel('Type delete to confirm').isVisible()).toBe(false);
    await data.getByRole('button', { name: 'Delete account' }).click();
    await expect.poll(() => activeElementId(here!)).toBe('delete-confirm');
    await data.getByRole('button', { name: 'Delete this account' }).click();
    await expect
      .poll(() => here!.locator('#delete-error').textContent())
      .toBe('Type the word delete to confirm that this account should be deleted.');
    await data.getByLabel('Type delete to confirm').fill('delete');
    await data.getByRole('button', { name: 'Delete this account' }).click();
    await here!.waitForURL(`${base}/signin?deleted=1`);
    await expect.poll(() => here!.locator('#page-status').textContent()).toBe('The account was deleted and you are signed out.');
    await Promise.all(contexts.map((created) => created.close()));
    expectNoProblems();
  });

  it('the API explorer lists every route, passes axe in light and dark, and sends requests from its forms', async () => {
    const explorer = await context.newPage();
    watch(explorer);
    await explorer.goto('/api-explorer');
    await expect.poll(() => explorer.locator('#main').getAttribute('aria-busy')).toBe('false');
    expect(await explorer.title()).toBe('API explorer · oc-host');
    expect(await explorer.locator('details.operation').count()).toBeGreaterThan(50);
    for (const scheme of ['light', 'dark'] as const) {
      await explorer.emulateMedia({ colorScheme: scheme });
      expect(await axeViolations(explorer), scheme).toEqual([]);
    }
    await explorer.getByLabel('Find a route').fill('family-stats');
    expect(await explorer.locator('#filter-count').textContent()).toMatch(/^1 of \d+ routes$/);
    const stats = explorer.locator('details#get-api-family-stats');
    await stats.locator(':scope > summary').focus();
    await explorer.keyboard.press('Enter');
    await stats.getByRole('button', { name: 'Send request' }).click();
    await expect.poll(() => stats.getByRole('status').textContent()).toMatch(/^HTTP 200 .* · \d+ ms · application\/json/);
    expect(JSON.parse((await stats.locator('pre.answer-body').textContent())!)).toMatchObject({ ok: true });
    // A body the service refuses: the answer is shown, not thrown.
    await explorer.getByLabel('Find a route').fill('post verify');
    const verify = explorer.locator('details#post-api-verify');
    await verify.locator(':scope > summary').click();
    await verify.getByLabel('Request body (JSON)').fill('{"addr": "x"}');
    await verify.getByRole('button', { name: 'Send request' }).click();
    await expect.poll(() => verify.getByRole('status').textContent()).toMatch(/^HTTP 400 /);
    expect(JSON.parse((await verify.locator('pre.answer-body').textContent())!)).toMatchObject({ ok: false });
    await verify.getByLabel('Request body (JSON)').fill('{not json');
    await verify.getByRole('button', { name: 'Send request' }).click();
    await expect.poll(() => verify.getByRole('alert').textContent()).toBe('The body is not valid JSON.');
    expect(await axeViolations(explorer)).toEqual([]);
    await explorer.close();
    expectNoProblems();
  });

  it('counts down the message and the code, and says when each has expired before anything is sent', async () => {
    const { context: fresh, page: signin } = await newWatchedPage();
    await signin.clock.install();
    await signin.goto('/signin');
    const signer = newWallet('p2wpkh');
    await openSigningByHand(signin);
    await signin.getByLabel('Bitcoin address').fill(signer.address);
    await signin.getByRole('button', { name: 'Get message to sign' }).click();
    await expect.poll(() => signin.locator('#btc-countdown').textContent()).toMatch(/^Expires in (5:00|4:5\d)\.$/);
    await signin.clock.fastForward('04:05');
    await expect.poll(() => signin.locator('#page-status').textContent()).toBe('One minute left to sign the message.');
    await signin.clock.fastForward('01:00');
    await expect.poll(() => signin.locator('#btc-countdown').textContent()).toBe('This message has expired.');
    expect(await signin.locator('#btc-error').textContent()).toBe(
      'The message has expired before it was signed. Get a new one and sign that.',
    );
    expect(await axeViolations(signin)).toEqual([]);
    await signin.getByRole('button', { name: 'Get a new message' }).click();
    await expect.poll(() => signin.locator('#btc-countdown').textContent()).toMatch(/^Expires in (5:00|4:5\d)\.$/);
    expect(await signin.locator('#btc-error').textContent()).toBe('');

    // A Bitcoin error, then the e-mail way: the stale error goes.
    await signin.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => signin.locator('#btc-error').textContent()).toBe('Paste the signature from your wallet first.');
    await signin.getByRole('button', { name: 'Back to the other ways to sign in' }).click();
    await signin.getByLabel('E-mail address').fill('clock@example.org');
    const mailsBefore = smtp.messages().length;
    const isStart = (url: string): boolean => new URL(url).pathname === '/api/auth/email-otp/start';
    const firstStart = signin.waitForResponse((response) => isStart(response.url()));
    await signin.getByRole('button', { name: 'Continue', exact: true }).click();
    const firstToken = ((await (await firstStart).json()) as { token: string }).token;
    await codeFor('clock@example.org', mailsBefore);
    expect(await signin.locator('#btc-error').textContent()).toBe('');
    await expect.poll(() => signin.locator('#email-countdown').textContent()).toMatch(/^The code expires in (10:00|9:5\d)\.$/);
    // aria-disabled, not disabled: it stays reachable, and says why it waits.
    await signin.locator('#email-resend').focus();
    await signin.keyboard.press('Enter');
    await expect.poll(() => signin.locator('#page-status').textContent()).toMatch(/^You can ask for a new code in [1-3]?\d seconds\.$/);
    // After the wait, a new code is asked for with the token of the one it
    // replaces, which lets it past the limits per address (a resend).
    await signin.clock.fastForward('00:31');
    await expect.poll(() => signin.locator('#email-resend').textContent()).toBe('Send a new code');
    const resend = signin.waitForRequest((request) => isStart(request.url()));
    const resendMails = smtp.messages().length;
    await signin.locator('#email-resend').click();
    expect((await resend).postDataJSON()).toEqual({ email: 'clock@example.org', token: firstToken });
    await codeFor('clock@example.org', resendMails);
    await expect
      .poll(() => signin.locator('#page-status').textContent())
      .toBe('A new code is on its way to clock@example.org. Only the newest code works.');
    await signin.clock.fastForward('10:01');
    await expect.poll(() => signin.locator('#email-countdown').textContent()).toBe('This code has expired.');
    expect(await signin.locator('#email-error').textContent()).toBe('The code has expired. Send a new code and enter that one.');
    // The step's one filled button now asks for a new code.
    expect(await signin.locator('#email-submit').textContent()).toBe('Send a new code');
    expect(await axeViolations(signin)).toEqual([]);
    await fresh.close();
    expectNoProblems();
  });

  /** A request from inside `target`: its cookies go along, and a re-minted cookie stays in its jar. */
  async function apiIn(target: Page, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    return target.evaluate(
      async ({ method, path, body }) => {
        const init =
          body === undefined ? { method } : { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
        const response = await fetch(path, { ...init, credentials: 'same-origin' });
        return { status: response.status, body: await response.json().catch(() => null) };
      },
      { method, path, body },
    );
  }

  /** A challenge of `purpose` for this origin, signed by `signer`: the body of a sign-in, a step-up or a link. */
  async function signedChallenge(
    signer: Wallet,
    purpose: 'sudo' | 'link',
  ): Promise<{ address: string; message: string; nonce: string; signature: string }> {
    const challenge = (await (
      await fetch(`${base}/api/challenge?addr=${signer.address}&audience=${encodeURIComponent(base)}&purpose=${purpose}`)
    ).json()) as { message: string; nonce: string };
    return {
      address: signer.address,
      message: challenge.message,
      nonce: challenge.nonce,
      signature: signBip322({ privateKey: signer.privateKey, address: signer.address, message: challenge.message }),
    };
  }

  it('links an e-mail and a Bitcoin address from the account page, through a step-up, and moves an address held by another account, taking along only what was ticked', {
    timeout: 120_000,
  }, async () => {
    const owner = newWallet('p2wpkh');
    const ownerContext = await contextWithFakeWallet('unisat', owner, 'ok');
    const here = await ownerContext.newPage();
    watch(here);
    await here.goto('/signin');
    await here.getByRole('button', { name: 'Connect UniSat' }).click();
    await here.waitForURL(`${base}/account`);
    await openSection(here, 'Ways to sign in');
    const linking = here.getByRole('region', { name: 'Link another way to sign in' });
    // Past the sign-in's own 5 minutes, in which linking needs no step-up (docs/protocol.md §6 "Step-up").
    clockAheadMs += 6 * 60_000;

    // An e-mail: the code, then a step-up (by the wallet), then linked.
    const email = `link-${randomBytes(4).toString('hex')}@example.org`;
    await linking.getByRole('button', { name: 'Link an e-mail' }).click();
    await linking.getByLabel('E-mail address', { exact: true }).fill(email);
    const mailsBefore = smtp.messages().length;
    await linking.getByRole('button', { name: 'Send code' }).click();
    await linking.getByLabel('6-digit code', { exact: true }).fill(await codeFor(email, mailsBefore));
    const sudo = here.getByRole('dialog', { name: 'Confirm it is you' });
    await expect.poll(() => sudo.isVisible()).toBe(true);
    expect(await sudo.locator('#sudo-intro').textContent()).toBe(
      `To link ${email}, prove again that you control this account. The proof stays valid for 5 minutes.`,
    );
    await sudo.getByRole('button', { name: 'Get message to sign' }).click();
    await sudo.getByRole('button', { name: 'Sign with UniSat' }).click();
    await expect.poll(() => here.locator('#page-status').textContent()).toBe(`${email} is linked to this account.`);
    await expect.poll(() => here.locator('#identities .item-title').allTextContents()).toContain(email);

    // Another account, in its own browser: signed in with an address, it adds
    // an e-mail, a second address, two Connect apps and a passkey.
    const held = newWallet('p2wpkh');
    const heldSecond = newWallet('p2tr');
    const heldEmail = `held-${randomBytes(4).toString('hex')}@example.org`;
    const heldContext = await contextWithUnisat(held, () => undefined);
    const heldPage = await heldContext.newPage();
    watch(heldPage);
    await virtualAuthenticator(heldPage, 'platform');
    await signInWithUnisat(heldPage);
    const heldDid = (await apiIn(heldPage, 'GET', '/api/auth/me')).body.account.did_oc as string;
    expect((await apiIn(heldPage, 'POST', '/api/auth/sudo', await signedChallenge(held, 'sudo'))).status).toBe(200);
    const heldMailsBefore = smtp.messages().length;
    const codeStarted = await apiIn(heldPage, 'POST', '/api/auth/email-otp/start', { email: heldEmail });
    const heldCode = await codeFor(heldEmail, heldMailsBefore);
    expect(
      (await apiIn(heldPage, 'POST', '/api/auth/link/email', { email: heldEmail, code: heldCode, token: codeStarted.body.token })).status,
    ).toBe(200);
    expect((await apiIn(heldPage, 'POST', '/api/auth/link/btc', await signedChallenge(heldSecond, 'link'))).status).toBe(200);
    expect((await apiIn(heldPage, 'POST', '/api/connect/apps', { name: 'Held shop' })).status).toBe(200);
    const spare = (await apiIn(heldPage, 'POST', '/api/connect/apps', { name: 'Held spare' })).body.app as { id: string };
    // A string, so the test runner's transform leaves the page's dynamic import alone.
    const registered = await heldPage.evaluate<{ ok: boolean }>(`(async () => {
      const passkeys = await import('/assets/passkeys.js');
      const post = async (path, body) =>
        (await fetch(path, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
      const started = await post('/api/auth/webauthn/register/options', { sign_in: true, label: 'Held phone' });
      const response = await passkeys.createCredential(started.options);
      return post('/api/auth/webauthn/register/verify', { challenge_token: started.challenge_token, response });
    })()`);
    expect(registered).toMatchObject({ ok: true });

    /** On /account (in `lang`), proves the other account's first address for linking: a new message, signed, sent. */
    const proveHeld = async (lang?: string): Promise<void> => {
      if (lang !== undefined) {
        await here.goto(`/account?lang=${lang}#sign-in`);
        await expect.poll(() => here.locator('#main').getAttribute('aria-busy')).toBe('false');
        await here.locator('#link-btc-open').click();
        await here.locator('#link-btc-address').fill(held.address);
        await here.locator('#link-btc-form button[type="submit"]').click();
      }
      await expect.poll(() => here.locator('#link-btc-message').inputValue()).toContain('purpose: link\n');
      const message = await here.locator('#link-btc-message').inputValue();
      await here.locator('#link-btc-signature').fill(signBip322({ privateKey: held.privateKey, address: held.address, message }));
      await here.locator('#link-btc-sign-form button[type="submit"]').click();
      await expect.poll(() => here.locator('#confirm-dialog').isVisible()).toBe(true);
    };

    // The dialog in German, Spanish and French: its words, axe, and a refusal that leaves everything where it is.
    for (const [lang, title, keysHint, declined] of [
      [
        'de',
        `${held.address} in dieses Konto verschieben?`,
        'Diese werden nie verschoben: Ein Schlüssel beweist, wer ihn registriert hat, nicht Sie.',
        `${held.address} bleibt bei ${heldDid}.`,
      ],
      [
        'es',
        `¿Mover ${held.address} a esta cuenta?`,
        'Nunca se mueven: una llave demuestra quién la registró, no que seas tú,',
        `${held.address} se queda en ${heldDid}.`,
      ],
      [
        'fr',
        `Déplacer ${held.address} vers ce compte ?`,
        'Elles ne sont jamais déplacées : une clé prouve qui l’a enregistrée, pas que c’est vous ;',
        `${held.address} reste chez ${heldDid}.`,
      ],
    ] as const) {
      await proveHeld(lang);
      expect(await here.locator('#confirm-title').textContent(), lang).toBe(title);
      expect(await here.locator('#confirm-details').textContent(), lang).toContain(keysHint);
      expect(await here.locator('#confirm-details input[type="checkbox"]').count(), lang).toBe(4);
      expect(await axeViolations(here), `merge dialog ${lang}`).toEqual([]);
      await here.locator('#confirm-no').click();
      await expect.poll(() => here.locator('#link-status').textContent()).toBe(declined);
    }

    // In English: the dialog names the other account, lists what it holds, and ticks nothing.
    await proveHeld('en');
    const move = here.getByRole('dialog', { name: `Move ${held.address} to this account?` });
    await expect.poll(() => move.isVisible()).toBe(true);
    expect(await activeElementId(here)).toBe('confirm-title');
    expect(await move.locator('#confirm-text').textContent()).toBe(
      `${held.address} belongs to ${heldDid}. The address will move here, and that account is merged into this one: signed out everywhere, then closed. This cannot be undone.`,
    );
    const ways = move.getByRole('group', { name: 'Its other ways to sign in' });
    expect(await ways.getByRole('checkbox').count()).toBe(2);
    expect(await ways.getByRole('checkbox', { name: heldEmail }).isChecked()).toBe(false);
    expect(await ways.getByRole('checkbox', { name: heldSecond.address }).isChecked()).toBe(false);
    expect(await move.getByRole('checkbox', { name: held.address }).count()).toBe(0);
    const apps = move.getByRole('group', { name: 'Its Connect apps' });
    expect(await apps.getByRole('checkbox').count()).toBe(2);
    expect(await apps.getByRole('checkbox', { name: 'Held shop' }).isChecked()).toBe(false);
    expect(await apps.getByRole('checkbox', { name: 'Held spare' }).isChecked()).toBe(false);
    const keys = move.getByRole('region', { name: 'Its security keys and passkeys' });
    expect(await keys.getByRole('listitem').allTextContents()).toEqual(['Held phone Will be removed']);
    expect(await keys.getByRole('checkbox').count()).toBe(0);
    for (const viewport of [DESKTOP, { width: 390, height: 844 }]) {
      await here.setViewportSize(viewport);
      for (const scheme of ['light', 'dark'] as const) {
        await here.emulateMedia({ colorScheme: scheme });
        expect(await axeViolations(here), `merge dialog ${scheme} at ${viewport.width} px`).toEqual([]);
      }
      await here.emulateMedia({ colorScheme: 'light' });
      const box = await move.boundingBox();
      expect(box!.x + box!.width, `dialog at ${viewport.width} px`).toBeLessThanOrEqual(viewport.width);
      expect(
        await here.evaluate(
          `(() => { const dialog = document.getElementById('confirm-dialog'); return dialog.scrollWidth <= dialog.clientWidth; })()`,
        ),
      ).toBe(true);
    }
    await here.setViewportSize(DESKTOP);
    await screenshot(here, 'account-merge.png', false);

    // The other account drops an app that was ticked: nothing moves, the page says why and offers to look again.
    await ways.getByRole('checkbox', { name: heldSecond.address }).check();
    await apps.getByRole('checkbox', { name: 'Held spare' }).check();
    expect((await apiIn(heldPage, 'DELETE', `/api/connect/apps/${spare.id}`)).status).toBe(200);
    await move.getByRole('button', { name: 'Move and merge' }).click();
    await expect
      .poll(() => here.locator('#link-error').textContent())
      .toBe(
        'The other account changed while you were deciding (something was added or removed), so nothing moved. Link it again to see what it holds now.',
      );
    expect(await move.isVisible()).toBe(false);
    const usedMessage = await here.locator('#link-btc-message').inputValue();
    await linking.getByRole('button', { name: 'Look again' }).click();
    await expect.poll(() => here.locator('#link-btc-message').inputValue()).not.toBe(usedMessage);
    expect(await linking.getByRole('button', { name: 'Look again' }).isVisible()).toBe(false);
    await proveHeld();

    // What it holds now; only the second address is ticked.
    await expect.poll(() => move.isVisible()).toBe(true);
    expect(await apps.getByRole('checkbox').count()).toBe(1);
    expect(await ways.getByRole('checkbox', { name: heldEmail }).isChecked()).toBe(false);
    await ways.getByRole('checkbox', { name: heldSecond.address }).check();
    await move.getByRole('button', { name: 'Move and merge' }).click();
    await expect
      .poll(() => here.locator('#page-status').textContent())
      .toBe(
        `${held.address} is linked, and ${heldDid} was merged into this account. Also moved here: ${heldSecond.address}. ` +
          `Removed with it, and free again for whoever controls it: ${heldEmail}. Its security key or passkey was removed: Held phone. Its Connect app was deleted: Held shop.`,
      );
    await expect.poll(() => here.locator('#identities .item-title').allTextContents()).toContain(held.address);
    const linked = (await apiIn(here, 'GET', '/api/auth/identities')).body.identities.map((identity: { value: string }) => identity.value);
    expect(linked).toEqual(expect.arrayContaining([owner.address, email, held.address, heldSecond.address]));
    expect(linked).not.toContain(heldEmail);
    expect((await apiIn(here, 'GET', '/api/connect/apps')).body.apps).toEqual([]);
    await screenshot(here, 'account-link.png');
    await Promise.all([ownerContext.close(), heldContext.close()]);
    expectNoProblems();
  });

  it('works at a phone size: connect a wallet, the account page with linking, the explorer; nothing wider than the screen, axe clean in both themes', async () => {
    const phoneWallet = newWallet('p2wpkh');
    const phoneContext = await contextWithFakeWallet('xverse', phoneWallet, 'ok');
    const phone = await phoneContext.newPage();
    watch(phone);
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto('/signin');
    await noHorizontalScroll(phone, 390);
    await phone.getByRole('button', { name: 'Connect Xverse' }).click();
    await phone.waitForURL(`${base}/account`);
    await expect.poll(() => phone.locator('#main').getAttribute('aria-busy')).toBe('false');
    expect(await phone.locator('#active-heading-name').textContent()).toBe(shortened(phoneWallet.address));
    await noHorizontalScroll(phone, 390);
    for (const path of ['/account', '/api-explorer', '/signin?add=1']) {
      await phone.goto(path);
      await expect.poll(() => phone.locator('#main').getAttribute('aria-busy')).not.toBe('true');
      await noHorizontalScroll(phone, 390);
      for (const scheme of ['light', 'dark'] as const) {
        await phone.emulateMedia({ colorScheme: scheme });
        expect(await axeViolations(phone), `${path} ${scheme} at 390 px`).toEqual([]);
      }
      await phone.emulateMedia({ colorScheme: 'light' });
    }
    // A wrong e-mail code's error is in view on the phone without scrolling by hand.
    await phone.goto('/signin');
    await useAnotherAccount(phone);
    await phone.getByLabel('E-mail address').fill('phone@example.org');
    const mailsBefore = smtp.messages().length;
    await phone.getByRole('button', { name: 'Continue', exact: true }).click();
    const code = await codeFor('phone@example.org', mailsBefore);
    await phone.getByLabel('6-digit code').fill(code === '000000' ? '111111' : '000000');
    await expect.poll(() => phone.locator('#email-error').textContent()).toMatch(/^That code is not right\./);
    const box = await phone.locator('#email-error').boundingBox();
    expect(box!.y + box!.height).toBeLessThanOrEqual(844);
    expect(box!.y).toBeGreaterThanOrEqual(0);
    await phoneContext.close();
    expectNoProblems();
  });

  it("speaks the browser's language, with dates in it, and keeps a language chosen in the footer", async () => {
    const { context: german, page: seite } = await newWatchedPage('de-DE');
    await seite.goto('/signin');
    expect(await seite.locator('html').getAttribute('lang')).toBe('de');
    expect(await seite.locator('main h1').textContent()).toBe('Anmelden');
    expect(await seite.title()).toBe('Anmelden · oc-host');
    const address = 'sprache@example.org';
    await seite.getByLabel('E-Mail-Adresse', { exact: true }).fill(address);
    const mailsBefore = smtp.messages().length;
    await seite.getByRole('button', { name: 'Weiter', exact: true }).click();
    await expect.poll(() => seite.locator('#page-status').textContent()).toBe(`Code an ${address} gesendet.`);
    expect(await seite.locator('#email-sent').textContent()).toBe(`Wir haben einen Code an ${address} gesendet. Er gilt 10 Minuten.`);
    const { code, subject } = await codeMailFor(address, mailsBefore);
    expect(subject).toBe(`${code} ist Ihr Anmeldecode für ${new URL(base).host}`);
    expect(await seite.locator('#email-countdown').textContent()).toMatch(/^Der Code läuft ab in (10:00|9:[0-5]\d)\.$/);
    await seite.getByLabel('6-stelliger Code').fill(code === '000000' ? '111111' : '000000');
    await expect
      .poll(() => seite.locator('#email-error').textContent())
      .toBe('Der Code ist falsch. Noch 4 Versuche, bevor er ungültig wird.');
    await seite.getByLabel('6-stelliger Code').fill(code);
    await seite.waitForURL(`${base}/account`);
    await expect.poll(() => seite.locator('#main').getAttribute('aria-busy')).toBe('false');
    expect(await seite.locator('main h1').textContent()).toBe('Ihr Konto');
    expect(await seite.locator('#active-title').textContent()).toBe(`Angemeldet als ${address}`);
    // Dates and times in German, in this browser's zone (UTC here): 25.11.2026, 16:05.
    await expect.poll(() => seite.locator('#activity .item-sub').first().textContent()).toMatch(/^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}$/);
    expect(await seite.locator('#activity .item-title').first().textContent()).toMatch(/^Angemeldet mit E-Mail-Code \(/);
    expect(await seite.locator('#devices .item-sub').first().textContent()).toMatch(
      /^Angemeldet am \d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} mit E-Mail-Code · zuletzt gesehen am \d{2}\.\d{2}\.\d{4}, \d{2}:\d{2} · Netz 127\.0\.0\.0\/24$/,
    );
    await screenshot(seite, 'account-de.png');

    // The footer's form: French, kept in the oc_lang cookie for the next pages.
    await seite.getByLabel('Sprache', { exact: true }).selectOption('fr');
    await seite.getByRole('button', { name: 'Sprache ändern' }).click();
    await expect.poll(() => seite.locator('html').getAttribute('lang')).toBe('fr');
    await expect.poll(() => seite.locator('#main').getAttribute('aria-busy')).toBe('false');
    expect(await seite.locator('main h1').textContent()).toBe('Votre compte');
    expect((await german.cookies()).find((cookie) => cookie.name === 'oc_lang')).toMatchObject({ value: 'fr', path: '/', sameSite: 'Lax' });
    await expect.poll(() => seite.locator('#activity .item-sub').first().textContent()).toMatch(/^\d{1,2} [a-zéû.]+ \d{4}/);
    expect(await seite.getByLabel('Langue', { exact: true }).inputValue()).toBe('fr');
    for (const [path, heading] of [
      ['/signin?add=1', 'Ajouter un autre compte'],
      ['/api-explorer', 'Explorateur de l’API'],
      ['/api-explorer?lang=es', 'Explorador de la API'],
    ] as const) {
      await seite.goto(path);
      await expect.poll(() => seite.locator('main h1').textContent()).toBe(heading);
    }
    await seite.goto('/api-explorer');
    await expect.poll(() => seite.locator('#filter-count').textContent()).toMatch(/^\d+ routes$/);
    await seite.goto('/signin');
    // Signed in already: the account this browser holds is offered first, one click on.
    await expect.poll(() => seite.getByRole('button', { name: 'Continuer en tant que sprache@example.org' }).isVisible()).toBe(true);
    await german.close();
    expectNoProblems();
  });

  it('changes the language at a phone size: the footer form fits, works and passes axe', async () => {
    const { context: spanish, page: phone } = await newWatchedPage('es-ES', { width: 390, height: 844 });
    await phone.goto('/signin');
    expect(await phone.locator('main h1').textContent()).toBe('Iniciar sesión');
    await noHorizontalScroll(phone, 390);
    const form = phone.locator('#language-form');
    await form.scrollIntoViewIfNeeded();
    const box = await form.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(390);
    await phone.getByLabel('Idioma', { exact: true }).selectOption('de');
    await phone.getByRole('button', { name: 'Cambiar de idioma' }).click();
    await expect.poll(() => phone.locator('main h1').textContent()).toBe('Anmelden');
    await noHorizontalScroll(phone, 390);
    for (const scheme of ['light', 'dark'] as const) {
      await phone.emulateMedia({ colorScheme: scheme });
      expect(await axeViolations(phone), scheme).toEqual([]);
    }
    await phone.emulateMedia({ colorScheme: 'light' });
    await phone.locator('#language-form').scrollIntoViewIfNeeded();
    await screenshot(phone, 'signin-phone-de.png', false);
    await spanish.close();
    expectNoProblems();
  });

  it('every page passes axe in every language, in light and dark', { timeout: 180_000 }, async () => {
    const { context: fresh, page: target } = await newWatchedPage();
    // An English browser on a page asked for in Spanish: the code mail is in Spanish too.
    await target.goto('/signin?lang=es');
    const address = 'axe-languages@example.org';
    await target.getByLabel('Dirección de correo', { exact: true }).fill(address);
    const mailsBefore = smtp.messages().length;
    await target.getByRole('button', { name: 'Continuar', exact: true }).click();
    const { code, subject } = await codeMailFor(address, mailsBefore);
    expect(subject).toBe(`${code} es tu código de acceso a ${new URL(base).host}`);
    await target.getByLabel('Código de 6 cifras').fill(code);
    await target.waitForURL(`${base}/account`);
    for (const locale of ['en', 'de', 'es', 'fr']) {
      await fresh.addCookies([{ name: 'oc_lang', value: locale, url: base }]);
      for (const path of ['/signin', '/account', '/sudo?return_to=/account&purpose=delete%20a%20post', '/api-explorer']) {
        await target.goto(path);
        await expect.poll(() => target.locator('#main').getAttribute('aria-busy')).not.toBe('true');
        expect(await target.locator('html').getAttribute('lang')).toBe(locale);
        for (const scheme of ['light', 'dark'] as const) {
          await target.emulateMedia({ colorScheme: scheme });
          expect(await axeViolations(target), `${path} ${locale} ${scheme}`).toEqual([]);
        }
        await target.emulateMedia({ colorScheme: 'light' });
      }
    }
    await fresh.close();
    expectNoProblems();
  });

  it('/signin passes axe in light and dark', async () => {
    const { context: fresh, page: signin } = await newWatchedPage();
    await signin.goto('/signin');
    for (const scheme of ['light', 'dark'] as const) {
      await signin.emulateMedia({ colorScheme: scheme });
      expect(await axeViolations(signin), scheme).toEqual([]);
    }
    await fresh.close();
    expectNoProblems();
  });

  it("shows the operator's brand (name, logo, a pale accent kept on buttons and made readable for links, support link) and still passes axe in light and dark", async () => {
    const brandPort = await freePort();
    const brandBase = `http://localhost:${brandPort}`;
    const logo = `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><circle cx="5" cy="5" r="5" fill="#fc0"/></svg>').toString('base64')}`;
    const branded = await buildApp(
      loadConfig({
        PORT: String(brandPort),
        PUBLIC_URL: brandBase,
        DATABASE_URL: 'sqlite::memory:',
        NOSTR_RELAYS: 'ws://127.0.0.1:9',
        ESPLORA_URLS: 'http://127.0.0.1:9',
        LOG_LEVEL: 'silent',
        BRAND_NAME: 'Acme ID',
        BRAND_LOGO_URL: logo,
        BRAND_ACCENT: '#ffcc00',
        BRAND_SUPPORT_URL: 'mailto:help@acme.example',
      }),
      { logger: false },
    );
    await branded.listen({ port: brandPort, host: '127.0.0.1' });
    const brandContext = await browser.newContext({ baseURL: brandBase, viewport: DESKTOP, locale: 'en-GB', timezoneId: 'UTC' });
    try {
      const target = await brandContext.newPage();
      // The explorer builds a route when it is opened: the link opens one, with its filled Send button.
      for (const path of ['/signin', '/api-explorer#post-api-verify']) {
        await target.goto(path);
        await expect.poll(() => target.title()).toMatch(/ · Acme ID$/);
        expect(await target.locator('header .brand').textContent()).toBe('Acme ID');
        expect(await target.locator('header .brand img').getAttribute('src')).toBe(logo);
        expect(await target.locator('link[rel="icon"]').getAttribute('href')).toBe(logo);
        expect(await target.getByRole('link', { name: 'Contact Acme ID support' }).getAttribute('href')).toBe('mailto:help@acme.example');
        for (const scheme of ['light', 'dark'] as const) {
          await target.emulateMedia({ colorScheme: scheme });
          await expect.poll(() => target.locator('#main').getAttribute('aria-busy')).not.toBe('true');
          expect(await axeViolations(target), `${path} ${scheme}`).toEqual([]);
          // The pale yellow was darkened for links in the light theme; the dark theme can show it as it is.
          const accent = await target.evaluate('getComputedStyle(document.documentElement).getPropertyValue("--accent").trim()');
          if (scheme === 'light') expect(accent).not.toBe('#ffcc00');
          else expect(accent).toBe('#ffcc00');
          // Filled buttons keep the yellow as it is, with dark text, in both themes.
          const fill = await target.evaluate(
            `(() => { const b = [...document.querySelectorAll('button')].find((x) => x.offsetParent !== null && !x.matches('.secondary, .link, .danger')); return b ? getComputedStyle(b).backgroundColor + ' ' + getComputedStyle(b).color : 'none'; })()`,
          );
          expect(fill, `${path} ${scheme}`).toBe('rgb(255, 204, 0) rgb(28, 27, 25)');
        }
      }
      await target.emulateMedia({ colorScheme: 'light' });
      await target.goto('/signin');
      await screenshot(target, 'signin-brand.png', false);
    } finally {
      await brandContext.close();
      await branded.close();
    }
  });

  it('shows provider errors as sentences and refuses a foreign return_to', async () => {
    // A browser signed in nowhere, shown the ways in (a signed-in one is offered "Continue as" first).
    const { context: errorContext, page: errorPage } = await newWatchedPage();
    await errorPage.goto('/signin?oauth_error=access_denied');
    await expect.poll(() => errorPage.getByRole('alert').filter({ hasText: 'cancelled at the provider' }).count()).toBe(1);
    await errorPage.goto('/signin?oauth_error=%3Cimg%20src%3Dx%3E');
    await expect
      .poll(() => errorPage.locator('#page-error').textContent())
      .toBe('The sign-in with the provider did not work. Please try again.');
    expect(await errorPage.locator('#page-error img').count()).toBe(0);
    // A code that names a property every object has is still an unknown code, not a crash.
    for (const inherited of ['constructor', '__proto__', 'toString']) {
      await errorPage.goto(`/signin?oauth_error=${inherited}&lang=de`);
      await expect
        .poll(() => errorPage.locator('#page-error').textContent())
        .toBe('Die Anmeldung beim Anbieter hat nicht funktioniert. Bitte versuchen Sie es erneut.');
    }

    for (const foreign of ['https://evil.example/steal', '//evil.example/x', '/\\evil.example', 'javascript:alert(1)']) {
      await errorPage.goto(`/signin?return_to=${encodeURIComponent(foreign)}`);
      expect(await errorPage.locator('body').getAttribute('data-return-to'), foreign).toBe('');
      await expect.poll(() => errorPage.locator('#notice').textContent()).toMatch(/not part of this service/);
      await expect
        .poll(() => errorPage.getByRole('link', { name: 'Continue with Acme' }).getAttribute('href'))
        .toBe('/api/auth/acme/start?return_to=%2Faccount');
    }
    // A family URL is kept, attribute-escaped.
    await errorPage.goto(`/signin?return_to=${encodeURIComponent(`${base}/account?a="b"&c=<d>`)}`);
    expect(await errorPage.locator('body').getAttribute('data-return-to')).toBe(`${base}/account?a=%22b%22&c=%3Cd%3E`);

    // The sign-in page is readable at 360 px with a challenge on screen.
    await errorPage.goto('/signin');
    await openSigningByHand(errorPage);
    await errorPage.getByLabel('Bitcoin address').fill(wallet.address);
    await errorPage.getByRole('button', { name: 'Get message to sign' }).click();
    await expect.poll(() => errorPage.locator('#btc-message').isVisible()).toBe(true);
    await noHorizontalScroll(errorPage, 360);
    await errorContext.close();
    expectNoProblems();
  });

  // Paths whose dot segments resolve to `//evil.example/x`, a protocol-relative
  // URL (docs/protocol.md §6 "return_to"): after a genuine sign-in and a
  // genuine step-up the browser must still be on this host.
  it.each(['/.//evil.example/x', '/%2e//evil.example/x', '/a/..//evil.example/x'])(
    'stays on this host after an e-mail-code sign-in and a step-up with return_to %j',
    async (hostile) => {
      const hostileContext = await newWatchedContext();
      // Any request that leaves this host is recorded and goes nowhere.
      const offHost: string[] = [];
      await hostileContext.route(
        (url) => url.origin !== base,
        (route) => {
          offHost.push(route.request().url());
          return route.abort();
        },
      );
      const target = await hostileContext.newPage();
      watch(target);
      const email = `redirect-${randomBytes(4).toString('hex')}@example.org`;
      const query = `return_to=${encodeURIComponent(hostile)}`;

      await target.goto(`/signin?${query}`);
      await target.getByLabel('E-mail address').fill(email);
      let mailsBefore = smtp.messages().length;
      await target.getByRole('button', { name: 'Continue', exact: true }).click();
      await target.getByLabel('6-digit code').fill(await codeFor(email, mailsBefore));
      await expect.poll(() => offHost.length > 0 || target.url() === `${base}/account`).toBe(true);
      expect(offHost).toEqual([]);
      expect(target.url()).toBe(`${base}/account`);

      await target.goto(`/sudo?${query}`);
      await expect.poll(() => target.locator('#proof').isVisible()).toBe(true);
      const cancel = await target.locator('#sudo-cancel').getAttribute('href');
      expect(new URL(cancel!, base).origin).toBe(base);
      expect(cancel).toBe('/account');
      mailsBefore = smtp.messages().length;
      await target.getByRole('button', { name: 'Send code' }).click();
      await expect.poll(() => activeElementId(target)).toBe('sudo-code');
      await target.keyboard.type(await codeFor(email, mailsBefore));
      await expect.poll(() => offHost.length > 0 || target.url() === `${base}/account`).toBe(true);
      expect(offHost).toEqual([]);
      expect(target.url()).toBe(`${base}/account`);
      await hostileContext.close();
      expectNoProblems();
    },
  );
  // Back on another family site after a sign-in or a re-proof, a tab the
  // OrangeCheck client pinned takes up the account just proven: the page adds
  // #oc-adopt (docs/protocol.md §6 "return_to"); Cancel adds nothing.
  it('returns to a family site with #oc-adopt after an e-mail-code sign-in and a step-up, and Cancel without it', async () => {
    const context = await newWatchedContext();
    await context.route(
      (url) => url.origin === SHOP,
      (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Shop</title><p>Shop</p>' }),
    );
    const target = await context.newPage();
    watch(target);
    const email = `adopt-${randomBytes(4).toString('hex')}@example.org`;
    const query = `return_to=${encodeURIComponent(`${SHOP}/after`)}`;

    await target.goto(`/signin?${query}`);
    await target.getByLabel('E-mail address').fill(email);
    let mailsBefore = smtp.messages().length;
    await target.getByRole('button', { name: 'Continue', exact: true }).click();
    await target.getByLabel('6-digit code').fill(await codeFor(email, mailsBefore));
    await expect.poll(() => target.url()).toBe(`${SHOP}/after#oc-adopt`);

    await target.goto(`${base}/sudo?${query}`);
    await expect.poll(() => target.locator('#proof').isVisible()).toBe(true);
    expect(await target.locator('#sudo-cancel').getAttribute('href')).toBe(`${SHOP}/after`);
    mailsBefore = smtp.messages().length;
    await target.getByRole('button', { name: 'Send code' }).click();
    await expect.poll(() => activeElementId(target)).toBe('sudo-code');
    await target.keyboard.type(await codeFor(email, mailsBefore));
    await expect.poll(() => target.url()).toBe(`${SHOP}/after#oc-adopt`);
    await context.close();
    expectNoProblems();
  });
});
