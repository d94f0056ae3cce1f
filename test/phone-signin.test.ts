/**
 * Signing in from a phone in headless Chromium (docs/protocol.md §6
 * "Signing in from a phone"), with two browsers: the desktop opens /signin
 * and the phone dialog, the phone (390 px, with a UniSat-style wallet that
 * signs with a real key) opens the QR code's address, sees the same code and
 * the desktop's browser, and approves; the desktop ends signed in, the phone
 * does not, and only once the person confirmed, in the desktop's dialog,
 * the account the phone approved with (whoever saw the QR code could have
 * approved with their own wallet). The dialog, its question and the phone
 * page are checked at desktop and phone width, light and dark, with axe, in
 * every language, with no CSP violation.
 */
import type { BrowserContext, ConsoleMessage, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newWallet, type Wallet } from './support/auth-client.js';
import { signBip322 } from './support/bitcoin-signer.js';
import { CHROMIUM_PATH, DESKTOP, HAVE_CHROMIUM, IN_CI, PHONE, expectLaidOut, pageContext } from './support/chromium.js';
import { usePageHost } from './support/page-host.js';

/** The dialog's button, the phone's wallet button and the dialog's Confirm, as each language says them (src/platform/i18n/pages/). */
const WORDS: Readonly<Record<string, { readonly open: string; readonly sign: string; readonly confirm: string }>> = {
  'en-GB': { open: 'Use a wallet on your phone', sign: 'Sign in with UniSat', confirm: 'Confirm' },
  'de-DE': { open: 'Eine Wallet auf dem Telefon verwenden', sign: 'Mit UniSat anmelden', confirm: 'Bestätigen' },
  'es-ES': { open: 'Usar una cartera en tu teléfono', sign: 'Iniciar sesión con UniSat', confirm: 'Confirmar' },
  'fr-FR': { open: 'Utiliser un portefeuille sur votre téléphone', sign: 'Se connecter avec UniSat', confirm: 'Confirmer' },
};

/** How the dialog's question names an address: cut in the middle, as `shortName` does (src/pages/common.js). */
const shortAddress = (address: string) => `${address.slice(0, 10)}…${address.slice(-6)}`;

if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium to drive (CI=true)', () => {
    throw new Error(`phone-signin: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

describe.skipIf(!HAVE_CHROMIUM)('signing in from a phone in headless Chromium', () => {
  const site = usePageHost();
  const problems: string[] = [];

  /** Console errors and page errors are problems; a 401 of /me on a signed-out page and passkeys' 503 on plain http are not. */
  function watch(page: Page): void {
    page.on('console', (message: ConsoleMessage) => {
      if (/^Failed to load resource: the server responded with a status of (401|503)/.test(message.text())) return;
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
  }

  /** A phone-sized context whose pages have a UniSat-style wallet for `signer`. */
  async function phoneWithWallet(locale: string, signer: Wallet): Promise<BrowserContext> {
    const context = await pageContext(site.browser, site.base, locale, PHONE);
    await context.exposeFunction('ocTestSign', (message: string) =>
      signBip322({ privateKey: signer.privateKey, address: signer.address, message }),
    );
    await context.addInitScript((address: string) => {
      const scope = globalThis as unknown as Record<string, any>;
      scope.unisat = { requestAccounts: async () => [address], signMessage: (message: string) => scope.ocTestSign(message) };
    }, signer.address);
    return context;
  }

  /** A watched desktop-sized page in a new context (closing the context closes it). */
  async function desktopPage(locale: string): Promise<{ desktop: BrowserContext; pc: Page }> {
    const desktop = await pageContext(site.browser, site.base, locale, DESKTOP);
    const pc = await desktop.newPage();
    watch(pc);
    return { desktop, pc };
  }

  /** Opens /signin's phone dialog in `page`: the answer of the start it makes. */
  async function openDialog(page: Page, name: string): Promise<any> {
    await page.goto('/signin');
    const [started] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith('/api/auth/handoff') && response.request().method() === 'POST'),
      page.getByRole('button', { name }).click(),
    ]);
    const body = await started.json();
    await expect.poll(() => page.locator('dialog.phone-dialog svg[role="img"]').count()).toBe(1);
    return body;
  }

  /** Both widths, both schemes, no axe finding; the viewport is left at `back`. */
  async function laidOutAtBothWidths(page: Page, what: string, back: { width: number; height: number }): Promise<void> {
    for (const viewport of [DESKTOP, PHONE]) {
      await page.setViewportSize(viewport);
      await expectLaidOut(page, `${what} ${viewport.width}px`);
    }
    await page.setViewportSize(back);
  }

  it('signs the desktop in when the phone approves, in every language, and only the desktop', async () => {
    for (const [locale, words] of Object.entries(WORDS)) {
      const wallet = newWallet();
      const { desktop, pc } = await desktopPage(locale);
      const started = await openDialog(pc, words.open);
      const spaced = `${started.code.slice(0, 3)} ${started.code.slice(3)}`;
      const dialog = pc.locator('dialog.phone-dialog');
      await expect.poll(() => dialog.textContent()).toContain(spaced);
      expect(await dialog.getAttribute('aria-labelledby')).toBe('phone-signin-title');
      await laidOutAtBothWidths(pc, `${locale} dialog`, DESKTOP);

      const phone = await phoneWithWallet(locale, wallet);
      const handset = await phone.newPage();
      watch(handset);
      const [looked] = await Promise.all([
        handset.waitForResponse((response) => response.url().endsWith('/api/auth/handoff/look')),
        handset.goto(started.phone_url),
      ]);
      const view = await looked.json();
      await expect.poll(() => handset.locator('#phone-code').textContent()).toBe(spaced);
      expect(await handset.locator('#phone-question').textContent()).toContain(view.desktop_text);
      expect(view.desktop_text).toMatch(/Chrom/);
      // The key leaves the address bar once read.
      expect(new URL(handset.url()).hash).toBe('');
      await expect.poll(() => handset.locator('[data-wallet="unisat"]').count()).toBe(1);
      await laidOutAtBothWidths(handset, `${locale} phone page`, PHONE);

      await handset.getByRole('button', { name: words.sign }).click();
      await expect.poll(() => handset.locator('#phone-done').isVisible()).toBe(true);
      // The desktop asks before it signs in, naming the address that approved; until Confirm nobody is signed in.
      const question = pc.locator('#phone-signin-question');
      await expect.poll(() => question.isVisible(), { timeout: 6000 }).toBe(true);
      expect(await question.textContent()).toContain(shortAddress(wallet.address));
      expect(await dialog.textContent()).toContain(wallet.address);
      expect((await pc.request.get('/api/auth/me')).status()).toBe(401);
      await laidOutAtBothWidths(pc, `${locale} question`, DESKTOP);
      await pc.getByRole('button', { name: words.confirm }).click();
      await pc.waitForURL(`${site.base}/account`);
      const me = await pc.request.get('/api/auth/me');
      expect(me.status()).toBe(200);
      expect((await me.json()).account.primary_btc).toBe(wallet.address);
      // The phone that approved holds no session.
      expect((await handset.request.get('/api/auth/me')).status()).toBe(401);
      await phone.close();
      await desktop.close();
    }
    expect(problems).toEqual([]);
  }, 240_000);

  it('stops waiting when the dialog is closed with Escape, and gives focus back to its button', async () => {
    const { desktop, pc } = await desktopPage('en-GB');
    let claims = 0;
    pc.on('request', (request) => {
      if (request.url().endsWith('/api/auth/handoff/claim')) claims += 1;
    });
    const started = await openDialog(pc, WORDS['en-GB']!.open);
    expect(await pc.evaluate('document.activeElement.textContent')).toBe('Close');
    await expect.poll(() => claims, { timeout: 5000 }).toBeGreaterThan(0);
    await pc.keyboard.press('Escape');
    expect(await pc.locator('dialog.phone-dialog').evaluate((element) => (element as unknown as { open: boolean }).open)).toBe(false);
    expect(await pc.evaluate('document.activeElement.textContent')).toBe('Use a wallet on your phone');
    const seen = claims;
    await pc.waitForTimeout(2500);
    expect(claims).toBe(seen);
    // Whoever holds only the phone key (the QR code) cannot claim it.
    const stolen = await pc.request.post('/api/auth/handoff/claim', {
      data: { id: started.id, token: new URL(started.phone_url).hash.slice(1) },
      headers: { origin: site.base },
    });
    expect(stolen.status()).toBe(401);
    await desktop.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('signs nobody in when the person cancels the account a phone approved with', async () => {
    const { desktop, pc } = await desktopPage('en-GB');
    const started = await openDialog(pc, WORDS['en-GB']!.open);
    const stranger = newWallet();
    const phone = await phoneWithWallet('en-GB', stranger);
    const handset = await phone.newPage();
    watch(handset);
    await handset.goto(started.phone_url);
    await handset.getByRole('button', { name: WORDS['en-GB']!.sign }).click();
    await expect
      .poll(() => pc.locator('#phone-signin-question').textContent(), { timeout: 6000 })
      .toBe(`Sign in as ${shortAddress(stranger.address)}?`);
    expect(await pc.evaluate('document.activeElement.textContent')).toBe('Confirm');
    await pc.getByRole('button', { name: 'Cancel' }).click();
    await expect
      .poll(() => pc.locator('dialog.phone-dialog [role="alert"]').textContent())
      .toBe('The sign-in was cancelled. Ask for a new code to start again.');
    await expect.poll(() => pc.getByRole('button', { name: 'New code' }).isVisible()).toBe(true);
    // The approval is gone: a claim that confirms it afterwards signs nobody in.
    const late = await pc.request.post('/api/auth/handoff/claim', {
      data: { id: started.id, token: started.token, confirm_address: stranger.address },
      headers: { origin: site.base },
    });
    expect((await late.json()).status).toBe('declined');
    expect((await pc.request.get('/api/auth/me')).status()).toBe(401);
    await phone.close();
    await desktop.close();
    expect(problems).toEqual([]);
  }, 60_000);

  it('tells the desktop a decline, and offers a new code', async () => {
    const { desktop, pc } = await desktopPage('en-GB');
    const started = await openDialog(pc, WORDS['en-GB']!.open);
    const phone = await phoneWithWallet('en-GB', newWallet());
    const handset = await phone.newPage();
    watch(handset);
    await handset.goto(started.phone_url);
    await handset.getByRole('button', { name: "This wasn't me" }).click();
    await expect.poll(() => handset.locator('#phone-done-title').textContent()).toBe('Stopped');
    // The desktop learns it at its next poll, within 2 seconds.
    await expect
      .poll(() => pc.locator('dialog.phone-dialog [role="alert"]').textContent(), { timeout: 6000 })
      .toBe('The sign-in was stopped on the phone.');
    await expect.poll(() => pc.getByRole('button', { name: 'New code' }).isVisible()).toBe(true);
    expect((await pc.request.get('/api/auth/me')).status()).toBe(401);
    await phone.close();
    await desktop.close();
    expect(problems).toEqual([]);
  }, 60_000);
});
