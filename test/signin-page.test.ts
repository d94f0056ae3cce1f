/**
 * The sign-in page's one card in headless Chromium (src/pages/signin.html):
 * one filled button at a time, the site it signs in to, the wallets first
 * with their dialog (success, a decline and "Try again", Cancel and Escape
 * with focus back on the wallet's button), signing by hand behind its link,
 * "Continue as" for the accounts this browser holds. Desktop and phone,
 * light and dark, axe clean, the four languages, no CSP violation and no
 * sideways scroll.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newWallet, type Wallet } from './support/auth-client.js';
import { signBip322 } from './support/bitcoin-signer.js';
import { CHROMIUM_PATH, DESKTOP, HAVE_CHROMIUM, IN_CI, PHONE, expectLaidOut, pageContext } from './support/chromium.js';
import { usePageHost } from './support/page-host.js';
import { useSmtpServer } from './support/auth-harness.js';
import { extractCode, type ReceivedMail } from './support/smtp-server.js';

const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const SCREENSHOT_DIR = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const SHOP = 'https://shop.example';

/** An address as the page names an account (common.js shortName). */
const shortened = (address: string): string => `${address.slice(0, 10)}…${address.slice(-6)}`;

/** The card's words that are new, as each language says them (src/platform/i18n/pages/). */
const WORDS: Readonly<Record<string, { continue: string; firstTime: RegExp; byHand: string; checkWallet: string; checkEmail: string }>> = {
  'en-GB': {
    continue: 'Continue',
    firstTime: /^New here\?/,
    byHand: 'Sign with another wallet by hand',
    checkWallet: 'Check your wallet…',
    checkEmail: 'Check your e-mail',
  },
  'de-DE': {
    continue: 'Weiter',
    firstTime: /^Neu hier\?/,
    byHand: 'Mit einer anderen Wallet von Hand signieren',
    checkWallet: 'Sehen Sie in Ihre Wallet…',
    checkEmail: 'Sehen Sie in Ihre E-Mails',
  },
  'es-ES': {
    continue: 'Continuar',
    firstTime: /^¿Es tu primera vez\?/,
    byHand: 'Firmar a mano con otra cartera',
    checkWallet: 'Revisa tu cartera…',
    checkEmail: 'Revisa tu correo',
  },
  'fr-FR': {
    continue: 'Continuer',
    firstTime: /^Première visite \?/,
    byHand: 'Signer à la main avec un autre portefeuille',
    checkWallet: 'Regardez votre portefeuille…',
    checkEmail: 'Consultez vos e-mails',
  },
};

if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium to drive (CI=true)', () => {
    throw new Error(`signin-page: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

/** What a page in a test may hold: the fake wallet's switches. */
interface InPage {
  ocWallet: { mode: 'ok' | 'decline' | 'hang'; calls: number };
  ocTestSign(message: string): Promise<string>;
  document: { activeElement: { id: string } | null };
}

describe.skipIf(!HAVE_CHROMIUM)('the sign-in page in headless Chromium', () => {
  // Before the host, so that its SMTP URL is known when the host starts.
  const smtp = useSmtpServer();
  const site = usePageHost({
    hostname: 'localhost',
    env: (base) => ({ FAMILY_ORIGINS: `${base},${SHOP}`, SMTP_URL: smtp.url, RATE_LIMIT_OTP_PER_HOUR: '0' }),
  });
  const problems: string[] = [];

  /** A page of `context`, whose console errors, CSP violations and page errors count as problems. */
  async function watchedPage(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    page.on('console', (message) => {
      // Answers >= 400 (a 401 from /me signed out, a 503 for passkeys on http) are the page's to show.
      if (/^Failed to load resource: the server responded with a status of/.test(message.text())) return;
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    return page;
  }

  /** A new page in a new context (no wallet, signed in nowhere) at `path`. */
  async function openPage(path: string, viewport: { width: number; height: number } = DESKTOP): Promise<Page> {
    const page = await watchedPage(await pageContext(site.browser, site.base, 'en-GB', viewport));
    await page.goto(path);
    return page;
  }

  /** Ends a test of `page`: its context closes, and no page of the suite had a problem. */
  async function finish(page: Page): Promise<void> {
    await page.context().close();
    expect(problems).toEqual([]);
  }

  /**
   * A context whose pages have a UniSat-style wallet for `signer`: it signs
   * with the real key, declines, or never answers, as `window.ocWallet.mode` says.
   */
  async function walletContext(
    signer: Wallet,
    locale = 'en-GB',
    viewport: { width: number; height: number } = DESKTOP,
    icon?: string,
  ): Promise<BrowserContext> {
    const context = await pageContext(site.browser, site.base, locale, viewport);
    await context.exposeFunction('ocTestSign', (message: string) =>
      signBip322({ privateKey: signer.privateKey, address: signer.address, message }),
    );
    await context.addInitScript(
      ({ address, icon }) => {
        const scope = globalThis as unknown as InPage & { unisat: unknown };
        scope.ocWallet = { mode: 'ok', calls: 0 };
        scope.unisat = {
          ...(icon === undefined ? {} : { icon }),
          requestAccounts: async () => [address],
          signMessage: (message: string) => {
            scope.ocWallet.calls += 1;
            if (scope.ocWallet.mode === 'decline')
              return Promise.reject(Object.assign(new Error('User rejected the request.'), { code: 4001 }));
            if (scope.ocWallet.mode === 'hang') return new Promise(() => undefined);
            return scope.ocTestSign(message);
          },
        };
      },
      { address: signer.address, icon },
    );
    return context;
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    if (!UPDATE_SCREENSHOTS) return;
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOT_DIR}${name}`, fullPage: true });
  }

  /** The filled buttons on show in the page's content (the header's account menu is not one): never more than one. */
  function filledButtons(page: Page): Promise<string[]> {
    return page.evaluate(
      `[...document.querySelectorAll('main button, main a.button')].filter((b) => b.offsetParent !== null && !b.matches('.secondary, .link, .danger')).map((b) => (b.querySelector('.way-name') ?? b).textContent.trim())`,
    ) as Promise<string[]>;
  }

  const activeId = (page: Page) => page.evaluate(() => (globalThis as unknown as InPage).document.activeElement?.id);

  it('shows a first-time visitor one card with one filled button, no passkey card, in every language, desktop and phone, light and dark', async () => {
    for (const [locale, words] of Object.entries(WORDS)) {
      for (const viewport of [DESKTOP, PHONE]) {
        const context = await walletContext(newWallet(), locale, viewport);
        const page = await watchedPage(context);
        await page.goto('/signin');
        await page.locator('[data-connect="unisat"]').waitFor();
        expect(await filledButtons(page)).toEqual([words.continue]);
        expect(await page.locator('section.card').count()).toBe(0);
        expect(await page.locator('#passkey-title').count()).toBe(0);
        expect(await page.locator('#way-btc').isVisible()).toBe(false);
        expect(await page.locator('.first-time').textContent()).toMatch(words.firstTime);
        expect(await page.getByRole('button', { name: words.byHand }).isVisible()).toBe(true);
        // No jargon on the way in.
        for (const part of ['#ways', 'footer']) expect(await page.locator(part).textContent()).not.toMatch(/BIP-322|HttpOnly/);
        await expectLaidOut(page, `${locale} ${viewport.width}px`);
        if (locale === 'en-GB') {
          await page.emulateMedia({ colorScheme: 'light' });
          if (viewport === PHONE) await screenshot(page, 'signin-phone-en.png');
        }
        if (locale === 'fr-FR' && viewport === DESKTOP) {
          await page.emulateMedia({ colorScheme: 'light' });
          await screenshot(page, 'signin-fr.png');
        }
        if (viewport === DESKTOP) {
          // The wallet's dialog and the e-mail step in the language too.
          await page.evaluate(() => {
            (globalThis as unknown as InPage).ocWallet.mode = 'hang';
          });
          await page.locator('[data-connect="unisat"]').click();
          await expect.poll(() => page.locator('#wallet-dialog-status').textContent()).toMatch(new RegExp(`^${words.checkWallet}`));
          await expectLaidOut(page, `${locale} wallet dialog`);
          await page.keyboard.press('Escape');
          await askForCode(page, `words-${locale}-${Date.now()}@example.org`, words.continue);
          await expect.poll(() => page.locator('#email-step-title').textContent()).toBe(words.checkEmail);
          await expectLaidOut(page, `${locale} e-mail step`);
        }
        await context.close();
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);

  it('names the site of return_to, else the brand', async () => {
    const page = await openPage(`/signin?return_to=${encodeURIComponent(`${SHOP}/cart`)}`, PHONE);
    await expect.poll(() => page.locator('#app-banner p').textContent()).toBe('Sign in to continue to shop.example.');
    expect(await page.locator('#app-banner .app-avatar').textContent()).toBe('S');
    await page.goto('/signin?return_to=/account');
    await expect.poll(() => page.locator('#app-banner p').textContent()).toBe('Sign in to continue to oc-host.');
    await expectLaidOut(page, 'site name');
    await finish(page);
  }, 90_000);

  it('signs in with a wallet in its dialog: a decline says why next to "Try again", which then signs in', async () => {
    const signer = newWallet('p2wpkh');
    const context = await walletContext(signer);
    const page = await watchedPage(context);
    await page.goto('/signin');
    await page.evaluate(() => {
      (globalThis as unknown as InPage).ocWallet.mode = 'decline';
    });
    await page.getByRole('button', { name: 'Connect UniSat' }).click();
    const dialog = page.getByRole('dialog', { name: 'UniSat' });
    await expect.poll(() => dialog.locator('#wallet-error').textContent()).toBe('You declined in UniSat, so nothing was signed.');
    expect(await activeId(page)).toBe('wallet-retry');
    expect(await dialog.locator('img').getAttribute('src')).toBe('/assets/wallet-unisat.svg');
    await expectLaidOut(page, 'declined');
    await page.emulateMedia({ colorScheme: 'light' });
    await screenshot(page, 'signin-wallet.png');
    // The page behind the dialog cannot be used while it is open.
    await expect(page.getByRole('button', { name: 'Continue', exact: true }).click({ timeout: 500 })).rejects.toThrow();
    await page.evaluate(() => {
      (globalThis as unknown as InPage).ocWallet.mode = 'ok';
    });
    await dialog.getByRole('button', { name: 'Try again' }).click();
    await page.waitForURL(`${site.base}/account`);
    await finish(page);
  }, 90_000);

  it('shows "Check your wallet…" while the wallet works; Cancel and Escape give up and put focus back on the wallet button', async () => {
    // This wallet gives a picture of itself: the page shows that one.
    const icon = `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 2 2"><rect width="2" height="2" fill="#639"/></svg>').toString('base64')}`;
    const context = await walletContext(newWallet('p2tr'), 'en-GB', PHONE, icon);
    const page = await watchedPage(context);
    await page.goto('/signin');
    expect(await page.locator('[data-connect="unisat"] img').getAttribute('src')).toBe(icon);
    await page.evaluate(() => {
      (globalThis as unknown as InPage).ocWallet.mode = 'hang';
    });
    const opener = page.getByRole('button', { name: 'Connect UniSat' });
    for (const close of ['Cancel', 'Escape'] as const) {
      await opener.focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'UniSat' });
      await expect.poll(() => dialog.locator('#wallet-dialog-status').textContent()).toMatch(/^Check your wallet… UniSat asks you/);
      expect(await activeId(page)).toBe('wallet-cancel');
      expect(await dialog.locator('img').getAttribute('src')).toBe(icon);
      if (close === 'Escape') {
        await expectLaidOut(page, 'waiting');
        await page.emulateMedia({ colorScheme: 'light' });
        await page.keyboard.press('Escape');
      } else await dialog.getByRole('button', { name: 'Cancel' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(false);
      expect(await page.evaluate('document.activeElement?.getAttribute("data-connect")')).toBe('unisat');
    }
    expect(page.url()).toBe(`${site.base}/signin`);
    await finish(page);
  }, 90_000);

  it('still signs by hand behind its link: address, message, pasted signature', async () => {
    const signer = newWallet('p2wpkh');
    const page = await openPage('/signin');
    await page.getByRole('button', { name: 'Sign with another wallet by hand' }).click();
    expect(await activeId(page)).toBe('btc-address');
    await page.getByLabel('Bitcoin address').fill(signer.address);
    await page.getByRole('button', { name: 'Get message to sign' }).click();
    await expect.poll(() => page.locator('#btc-message').isVisible()).toBe(true);
    expect(await filledButtons(page)).toEqual(['Sign in']);
    await expectLaidOut(page, 'by hand');
    await page.emulateMedia({ colorScheme: 'light' });
    await screenshot(page, 'signin-challenge.png');
    const message = await page.locator('#btc-message').inputValue();
    await page.getByLabel('Signature').fill(signBip322({ privateKey: signer.privateKey, address: signer.address, message }));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${site.base}/account`);
    await finish(page);
  }, 90_000);

  it('offers "Continue as" for the accounts this browser holds: one click switches and goes on; "Use another account" shows the card', async () => {
    const first = newWallet('p2wpkh');
    const second = newWallet('p2tr');
    const context = await walletContext(first);
    const page = await watchedPage(context);
    // This browser signs in twice: the second account joins its roster.
    await page.goto('/signin');
    await page.getByRole('button', { name: 'Connect UniSat' }).click();
    await page.waitForURL(`${site.base}/account`);
    await page.goto('/signin?add=1&return_to=/account');
    // Adding an account: the card as on a first visit, the accounts already held in the header's menu.
    await expect.poll(() => page.locator('#account-menu-button').textContent()).toContain(`Account menu: ${shortened(first.address)}`);
    expect(await page.locator('#continue-as').isVisible()).toBe(false);
    expect(await page.locator('#ways').isVisible()).toBe(true);
    await expectLaidOut(page, 'adding an account');
    await page.setViewportSize(PHONE);
    await expectLaidOut(page, 'adding an account on a phone');
    await page.setViewportSize(DESKTOP);
    await page.getByRole('button', { name: 'Sign with another wallet by hand' }).click();
    await page.getByLabel('Bitcoin address').fill(second.address);
    await page.getByRole('button', { name: 'Get message to sign' }).click();
    // The message arrives with the challenge: read it only once it shows.
    await expect.poll(() => page.locator('#btc-message').isVisible()).toBe(true);
    const message = await page.locator('#btc-message').inputValue();
    await page.getByLabel('Signature').fill(signBip322({ privateKey: second.privateKey, address: second.address, message }));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(`${site.base}/account`);

    await page.goto(`/signin?return_to=${encodeURIComponent('/account?back=1')}`);
    const again = page.getByRole('button', { name: `Continue as ${shortened(second.address)}` });
    const other = page.getByRole('button', { name: `Continue as ${shortened(first.address)}` });
    await again.waitFor();
    expect(await other.isVisible()).toBe(true);
    expect(await page.locator('#ways').isVisible()).toBe(false);
    expect(await filledButtons(page)).toEqual([`Continue as ${shortened(second.address)}`]);
    await expectLaidOut(page, 'continue as');
    // The same view on a phone (expectLaidOut checks both schemes).
    await page.setViewportSize(PHONE);
    await expectLaidOut(page, 'continue as on a phone');
    await page.setViewportSize(DESKTOP);
    await page.emulateMedia({ colorScheme: 'light' });
    await screenshot(page, 'signin-continue.png');
    await page.getByRole('button', { name: 'Use another account' }).click();
    expect(await page.locator('#ways').isVisible()).toBe(true);
    expect(await activeId(page)).toBe('email-address');

    await page.goto(`/signin?return_to=${encodeURIComponent('/account?back=1')}`);
    await other.click();
    await page.waitForURL(`${site.base}/account?back=1`);
    const me = (await (await page.request.get('/api/auth/me')).json()) as { account: { primary_btc: string } };
    expect(me.account.primary_btc).toBe(first.address);
    await finish(page);
  }, 90_000);

  /** The next code mail to `to` after `since` mails had arrived. */
  function codeMail(to: string, since: number): Promise<ReceivedMail> {
    return smtp.waitForMessage(
      (mail) => mail.envelope.to.includes(to) && smtp.messages().indexOf(mail) >= since && /^\d{6} /.test(mail.subject ?? ''),
      10_000,
    );
  }

  /** The sign-in link of a code mail: the same in its text and its HTML part. */
  function linkOf(mail: ReceivedMail): string {
    const link = /https?:\/\/\S+\/signin#\S+/.exec(mail.text ?? '')?.[0];
    expect(link).toBeDefined();
    expect(mail.html).toContain(`href="${link!.replace(/&/g, '&amp;')}"`);
    return link!;
  }

  /** Clicks `button` (which asks for a code for `email`) and answers the code of the mail it sends. */
  async function codeAfter(button: Locator, email: string): Promise<string> {
    const since = smtp.messages().length;
    await button.click();
    return extractCode(await codeMail(email, since));
  }

  /** Asks for a code for `email` on `page` (at /signin) and answers its mail. */
  async function askForCode(page: Page, email: string, label = 'Continue'): Promise<ReceivedMail> {
    const since = smtp.messages().length;
    await page.locator('#email-address').fill(email);
    await page.getByRole('button', { name: label, exact: true }).click();
    return codeMail(email.toLowerCase(), since);
  }

  it('asks for the code in a step of its own; an expired code turns the main button into "Send a new code"; a code of an earlier mail is told as replaced', async () => {
    const page = await openPage('about:blank', PHONE);
    await page.clock.install();
    await page.goto('/signin');
    const email = `step-${Date.now()}@example.org`;
    const errorText = () => page.locator('#email-error').textContent();
    const first = extractCode(await askForCode(page, email));
    const step = page.getByRole('region', { name: 'Check your e-mail' });
    await expect.poll(() => step.isVisible()).toBe(true);
    expect(await step.locator('#email-sent').textContent()).toBe(`We sent a code to ${email}. It is valid for 10 minutes.`);
    expect(await page.locator('#ways').isVisible()).toBe(false);
    expect(await filledButtons(page)).toEqual(['Continue']);
    await expectLaidOut(page, 'code step');
    await page.emulateMedia({ colorScheme: 'light' });
    await screenshot(page, 'signin-phone-code.png');

    // A wrong code: the error sits under the field, and the "Code sent" line above it goes.
    await page.getByLabel('6-digit code').fill(first === '000000' ? '111111' : '000000');
    await expect
      .poll(() => page.locator('#email-error').textContent())
      .toBe('That code is not right. 4 tries left before it stops working.');
    expect(await page.locator('#page-status').textContent()).toBe('');
    const field = await page.locator('#email-code').boundingBox();
    const error = await page.locator('#email-error').boundingBox();
    expect(error!.y).toBeGreaterThan(field!.y);

    // A resend after the wait; then the first mail's code is told as replaced, not as wrong.
    await page.clock.fastForward('00:31');
    const second = await codeAfter(page.getByRole('button', { name: 'Send a new code' }), email);
    await page.getByLabel('6-digit code').fill(first);
    const replaced = 'That code is from an earlier e-mail: a newer code replaced it. Enter the code from the newest e-mail.';
    await expect.poll(errorText).toBe(replaced);

    // The code's time runs out: the one filled button asks for a new code, and sends it.
    await page.clock.fastForward('10:01');
    await expect.poll(() => page.locator('#email-submit').textContent()).toBe('Send a new code');
    expect(await errorText()).toBe('The code has expired. Send a new code and enter that one.');
    expect(await filledButtons(page)).toEqual(['Send a new code']);
    expect(await page.locator('#email-resend').isVisible()).toBe(false);
    await expectLaidOut(page, 'expired');
    const newest = await codeAfter(page.locator('#email-submit'), email);
    await expect.poll(() => page.locator('#email-submit').textContent()).toBe('Continue');
    expect(newest).not.toBe(second);
    await page.getByLabel('6-digit code').fill(newest);
    await page.waitForURL(`${site.base}/account`);
    await finish(page);
  }, 60_000);

  it("the mail's link signs in in the browser that asked for the code (and the waiting tab goes on); in a fresh browser it signs in nowhere, even sent by hand", async () => {
    const context = await pageContext(site.browser, site.base, 'en-GB', DESKTOP);
    const waiting = await watchedPage(context);
    await waiting.goto(`/signin?return_to=${encodeURIComponent('/account?from=mail')}`);
    const email = `link-${Date.now()}@example.org`;
    // Typed with capitals: the mail's link names the address as the service keeps it, in lower case.
    const mail = await askForCode(waiting, email.toUpperCase());
    const link = linkOf(mail);
    expect(new URL(link).pathname).toBe('/signin');
    // The link carries a secret of its own, never the code (which the mail shows for typing).
    const fragment = new URLSearchParams(new URL(link).hash.slice(1));
    expect(fragment.get('code')).toBeNull();
    expect(fragment.get('link')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(link).not.toContain(extractCode(mail));

    // Another browser (a mail scanner, another device), phone and desktop: the address is filled in, nothing is sent.
    for (const viewport of [PHONE, DESKTOP]) {
      const elsewhere = await openPage('about:blank', viewport);
      const verifies: string[] = [];
      elsewhere.on('request', (request) => {
        if (request.url().includes('/api/auth/email-otp/')) verifies.push(request.url());
      });
      await elsewhere.goto(link);
      await expect
        .poll(() => elsewhere.locator('#notice').textContent())
        .toMatch(/^This sign-in link works only in the browser where the code was asked for\./);
      expect(new URL(elsewhere.url()).hash).toBe('');
      expect(await elsewhere.getByLabel('E-mail address').inputValue()).toBe(email);
      await expectLaidOut(elsewhere, `link elsewhere ${viewport.width}`);
      expect(verifies).toEqual([]);
      // A scanner that posts the link itself, without the asking browser's token or with a token of its own start: refused.
      const byHand = (await elsewhere.evaluate(
        async ({ email, link }) => {
          const post = (body: object) =>
            fetch('/api/auth/email-otp/link', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
          const own = (await post({})).status;
          const started = await fetch('/api/auth/email-otp/start', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email: `scanner-${email}` }),
          });
          const token: unknown = ((await started.json()) as { token?: unknown }).token;
          const answers: Array<[number, unknown]> = [];
          for (const body of [
            { email, link },
            { email, link, token },
          ]) {
            const reply = await post(body);
            answers.push([reply.status, ((await reply.json()) as { error?: unknown }).error]);
          }
          return { own, answers };
        },
        { email, link: fragment.get('link') },
      )) as { own: number; answers: Array<[number, string]> };
      expect(byHand.own).toBe(400);
      expect(byHand.answers).toEqual([
        [401, 'link_elsewhere'],
        [401, 'link_elsewhere'],
      ]);
      expect((await elsewhere.request.get('/api/auth/me')).status()).toBe(401);
      await elsewhere.context().close();
    }

    // The same browser, in a new tab: signed in with the start's token; the first tab notices and goes on.
    const opened = await watchedPage(context);
    await opened.goto(link);
    await opened.waitForURL(`${site.base}/account?from=mail`);
    await waiting.waitForURL(`${site.base}/account?from=mail`);
    await finish(waiting);
  }, 60_000);
});
