/**
 * The account page in sections and the header's account menu, in headless
 * Chromium: every section reached by its navigation and by the address's
 * fragment (back and forward too), at desktop and phone width, light and
 * dark, axe clean, in the four languages; the default section far shorter
 * than the one long column it replaced; the menu used with the keyboard
 * alone, switching between two accounts and signing out; the edit forms
 * opening on demand; and every dialog of the page giving focus back to the
 * button that opened it.
 */
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { newWallet } from './support/auth-client.js';
import { CHROMIUM_PATH, DESKTOP, expectLaidOut, HAVE_CHROMIUM, IN_CI, PHONE, pageContext } from './support/chromium.js';
import { MINUTE } from './support/clock.js';
import { usePageHost } from './support/page-host.js';

/** The sections' links as each language names them (src/platform/i18n/pages/). */
const NAV: Readonly<Record<string, readonly string[]>> = {
  'en-GB': ['Profile', 'Ways to sign in', 'Security', 'Apps', 'Your data'],
  'de-DE': ['Profil', 'Anmeldewege', 'Sicherheit', 'Apps', 'Ihre Daten'],
  'es-ES': ['Perfil', 'Formas de iniciar sesión', 'Seguridad', 'Aplicaciones', 'Tus datos'],
  'fr-FR': ['Profil', 'Moyens de connexion', 'Sécurité', 'Applications', 'Vos données'],
};

const SECTIONS = ['profile', 'sign-in', 'security', 'apps', 'data'] as const;

if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium to drive (CI=true)', () => {
    throw new Error(`account-sections: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

describe.skipIf(!HAVE_CHROMIUM)('the account page in sections and the account menu in headless Chromium', () => {
  // On localhost, where WebAuthn runs: the security keys' section shows, and its dialogs are tested too.
  const site = usePageHost({ hostname: 'localhost' });
  const problems: string[] = [];

  /** A browser signed in to a new account, and with `others` more in its roster, the last one active. */
  async function signedIn(others = 0): Promise<{ cookie: string; dids: string[] }> {
    const host = site.harness.browser(site.app, site.base);
    const dids: string[] = [];
    for (let index = 0; index <= others; index += 1) {
      const reply = await host.signIn(newWallet(), { add: index > 0 });
      expect(reply.status).toBe(200);
      dids.push(reply.body.account.did_oc);
    }
    return { cookie: host.cookie as string, dids };
  }

  async function open(locale: string, viewport: { width: number; height: number }, cookie: string, path = '/account'): Promise<Page> {
    const context = await pageContext(site.browser, site.base, locale, viewport, cookie);
    const page = await context.newPage();
    page.on('console', (message) => {
      // Passkeys answer 503 on a plain-http origin, and /me 401 once signed out: nothing else may fail.
      if (/^Failed to load resource: the server responded with a status of (401|503)/.test(message.text())) return;
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(path);
    await expect.poll(() => page.locator('#main').getAttribute('aria-busy')).toBe('false');
    return page;
  }

  /** The sections shown, by their panels' ids. */
  const shown = (page: Page): Promise<string[]> =>
    page.locator('.account-panel:not([hidden])').evaluateAll((panels) => panels.map((panel) => panel.id));
  const current = (page: Page): Promise<string | null> => page.locator('.account-nav a[aria-current="true"]').textContent();
  /** Whether the first element `selector` finds has focus. */
  const isFocused = (page: Page, selector: string): Promise<boolean> =>
    page.evaluate(`document.activeElement === document.querySelector(${JSON.stringify(selector)})`) as Promise<boolean>;
  const focusedId = (page: Page): Promise<string> => page.evaluate('document.activeElement?.id ?? ""') as Promise<string>;

  it('reaches every section by its link and by the address, desktop and phone, light and dark, in four languages', async () => {
    const { cookie } = await signedIn();
    for (const [locale, names] of Object.entries(NAV)) {
      for (const viewport of [DESKTOP, PHONE]) {
        const page = await open(locale, viewport, cookie);
        const what = `${locale} ${viewport.width}px`;
        expect(await page.locator('.account-nav a').allTextContents(), what).toEqual(names);
        expect(await shown(page)).toEqual(['panel-profile']);
        expect(await current(page)).toBe(names[0]);
        await expectLaidOut(page, `${what} profile`);
        for (const [index, section] of SECTIONS.entries()) {
          await page
            .locator('.account-nav')
            .getByRole('link', { name: names[index] as string, exact: true })
            .click();
          await expect.poll(() => shown(page), { message: what }).toEqual([`panel-${section}`]);
          expect(page.url()).toBe(`${site.base}/account#${section}`);
          expect(await current(page)).toBe(names[index]);
          await expectLaidOut(page, `${what} ${section}`);
        }
        // Back goes to the section before; a reload keeps the section; an unknown name shows the profile.
        await page.goBack();
        await expect.poll(() => shown(page)).toEqual(['panel-apps']);
        await page.goForward();
        await expect.poll(() => shown(page)).toEqual(['panel-data']);
        await page.reload();
        await expect.poll(() => page.locator('#main').getAttribute('aria-busy')).toBe('false');
        expect(await shown(page)).toEqual(['panel-data']);
        await page.goto('/account#nothing-here');
        await expect.poll(() => shown(page)).toEqual(['panel-profile']);
        await page.context().close();
      }
    }
    expect(problems).toEqual([]);
  }, 300_000);

  it('is far shorter than one long column, desktop and phone (measured)', async () => {
    const { cookie } = await signedIn(1);
    const heights: Record<string, number> = {};
    for (const viewport of [DESKTOP, PHONE]) {
      for (const section of SECTIONS) {
        const page = await open('en-GB', viewport, cookie, `/account#${section}`);
        heights[`${viewport.width} ${section}`] = (await page.evaluate(
          'Math.ceil(document.body.getBoundingClientRect().height)',
        )) as number;
        await page.context().close();
      }
    }
    console.info(`account-sections: page heights ${JSON.stringify(heights)}`);
    // The one long column was 3,100 px at desktop and 7,700 px on a phone.
    expect(heights['1280 profile']).toBeLessThan(1400);
    expect(heights['390 profile']).toBeLessThan(2600);
    expect(problems).toEqual([]);
  }, 120_000);

  it('explains its terms and opens its edit forms on demand, focus going in and coming back', async () => {
    const { cookie } = await signedIn();
    for (const [locale, explained] of [
      ['en-GB', "Your account's permanent ID"],
      ['de-DE', 'Die dauerhafte ID Ihres Kontos'],
      ['es-ES', 'El ID permanente de tu cuenta'],
      ['fr-FR', 'L’identifiant permanent de votre compte'],
    ] as const) {
      const page = await open(locale, DESKTOP, cookie);
      expect(await page.locator('#did-explained').textContent()).toContain(explained);
      await page.context().close();
    }
    const page = await open('en-GB', DESKTOP, cookie);
    const forms: [section: string, opener: string, form: string, field: string][] = [
      ['profile', 'edit-name', 'name-form', 'display-name'],
      ['sign-in', 'link-btc-open', 'link-btc-panel', 'link-btc-address'],
      ['sign-in', 'link-email-open', 'link-email-panel', 'link-email-address'],
      ['data', 'delete-open', 'delete-form', 'delete-confirm'],
    ];
    for (const [section, opener, form, field] of forms) {
      await page.goto(`/account#${section}`);
      await expect.poll(() => shown(page)).toEqual([`panel-${section}`]);
      expect(await page.locator(`#${form}`).isVisible(), `${form} starts closed`).toBe(false);
      await page.locator(`#${opener}`).focus();
      await page.keyboard.press('Enter');
      expect(await page.locator(`#${opener}`).getAttribute('aria-expanded')).toBe('true');
      await expect.poll(() => focusedId(page)).toBe(field);
      await expectLaidOut(page, `${form} open`);
      // Cancel closes it and gives focus back; so does Escape.
      await page.locator(`#${form} [data-cancel]`).click();
      expect(await page.locator(`#${form}`).isVisible()).toBe(false);
      expect(await focusedId(page)).toBe(opener);
      await page.keyboard.press('Enter');
      await expect.poll(() => focusedId(page)).toBe(field);
      await page.keyboard.press('Escape');
      expect(await page.locator(`#${opener}`).getAttribute('aria-expanded')).toBe('false');
      expect(await focusedId(page)).toBe(opener);
    }
    // The ways to sign in point to the passkeys, which are under Security.
    await page.goto('/account#sign-in');
    await page.locator('#passkeys-elsewhere').getByRole('link', { name: 'Security' }).click();
    await expect.poll(() => shown(page)).toEqual(['panel-security']);
    // A name saved closes its form and says so.
    await page.goto('/account#profile');
    await page.getByRole('button', { name: 'Edit name' }).click();
    await page.getByLabel('Display name').fill('Ada');
    await page.getByRole('button', { name: 'Save name' }).click();
    await expect.poll(() => page.locator('#active-name').textContent()).toBe('Ada');
    expect(await page.locator('#name-form').isVisible()).toBe(false);
    expect(await page.locator('#account-menu-button').textContent()).toBe('AAccount menu: Ada');
    await page.context().close();
    expect(problems).toEqual([]);
  }, 120_000);

  it('gives focus back to the button that opened each dialog, closed with Cancel and with Escape', async () => {
    const host = site.harness.browser(site.app, site.base);
    const wallet = newWallet();
    expect((await host.signIn(wallet)).status).toBe(200);
    // A second identity (so one can be removed) and a second browser (so "everywhere else" means one).
    expect((await host.post('/api/auth/link/btc', await host.prove(newWallet(), 'link'))).status).toBe(200);
    expect((await site.harness.browser(site.app, site.base).signIn(wallet)).status).toBe(200);
    expect((await host.signIn(newWallet(), { add: true })).status).toBe(200);
    expect((await host.switchTo((await host.me()).body.roster[0].did_oc)).status).toBe(200);
    // Past the sign-in's own 5 minutes: each change asks for a step-up.
    site.harness.clock.advance(6 * MINUTE);
    const page = await open('en-GB', DESKTOP, host.cookie as string);

    /** Opens the dialog with the keyboard from `opener`, closes it the way `how` says, and checks where focus went. */
    async function roundTrip(section: string, opener: string, dialog: string, how: 'cancel' | 'escape'): Promise<void> {
      if (!page.url().endsWith(`#${section}`)) await page.goto(`/account#${section}`);
      await expect.poll(() => shown(page)).toEqual([`panel-${section}`]);
      const button = page.locator(opener).first();
      await button.focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator(`#${dialog}`).isVisible(), { message: `${opener} opens ${dialog}` }).toBe(true);
      if (how === 'escape') await page.keyboard.press('Escape');
      else await page.locator(`#${dialog} ${dialog === 'sudo-dialog' ? '#sudo-cancel' : '#confirm-no'}`).click();
      await expect.poll(() => page.locator(`#${dialog}`).isVisible()).toBe(false);
      await expect.poll(() => isFocused(page, opener), { message: `${opener} ${how}` }).toBe(true);
    }

    for (const how of ['cancel', 'escape'] as const) {
      await roundTrip('profile', '#logout-all', 'confirm-dialog', how);
      await roundTrip('sign-in', '#identities button.danger', 'confirm-dialog', how);
      await roundTrip('security', '#devices-others', 'sudo-dialog', how);
      await roundTrip('security', '#devices button.danger', 'sudo-dialog', how);
      await roundTrip('data', '#export-data', 'sudo-dialog', how);
    }
    // Adding a security key, from its form's button.
    await page.goto('/account#security');
    await page.getByRole('button', { name: 'Add a security key' }).click();
    for (const how of ['cancel', 'escape'] as const) {
      await roundTrip('security', '#key-add', 'sudo-dialog', how);
    }
    // Deleting, from its form's button, once the word is typed.
    await page.goto('/account#data');
    await page.getByRole('button', { name: 'Delete account' }).click();
    await page.getByLabel('Type delete to confirm').fill('delete');
    for (const how of ['cancel', 'escape'] as const) {
      await roundTrip('data', '#delete-form button[type="submit"]', 'sudo-dialog', how);
    }
    // A removal confirmed, then its step-up cancelled: focus is back on the removal's button too.
    await roundTrip('sign-in', '#identities button.danger', 'confirm-dialog', 'cancel');
    // What the page sent for the removal, named in a failure's message.
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/auth/identities')) sent.push(`${request.method()} ${request.url()}`);
    });
    page.on('requestfailed', (request) => sent.push(`failed: ${request.method()} ${request.failure()?.errorText}`));
    await page.locator('#identities button.danger').first().focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#confirm-dialog').isVisible(), { message: 'the removal asks first' }).toBe(true);
    // Cancelled and asked again in one task: the close event of the first
    // question then arrives while the second is open, and must not answer it.
    await page.evaluate(`document.querySelector('#confirm-no').click(); document.querySelector('#identities button.danger').click();`);
    await expect.poll(() => page.locator('#confirm-dialog').isVisible(), { message: 'the removal asks again' }).toBe(true);
    // Six minutes past the sign-in, the removal asks for a step-up; the page opens its dialog on that answer.
    const [answered] = await Promise.all([
      page
        .waitForResponse((response) => response.request().method() === 'DELETE' && response.url().includes('/api/auth/identities'))
        .catch((error: Error) => {
          throw new Error(`${error.message}; the page sent: ${JSON.stringify(sent)}`);
        }),
      page.locator('#confirm-yes').click(),
    ]);
    expect(`${answered.status()} ${await answered.text()}`).toMatch(/^401 .*"sudo_required"/);
    await expect.poll(() => page.locator('#sudo-dialog').isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => isFocused(page, '#identities button.danger')).toBe(true);
    await page.context().close();
    expect(problems).toEqual([]);
  }, 120_000);

  it('has a header menu used with the keyboard alone: it switches between two accounts and signs out', async () => {
    const { cookie, dids } = await signedIn(1);
    for (const viewport of [DESKTOP, PHONE]) {
      const page = await open('en-GB', viewport, cookie, '/account#security');
      const button = page.locator('#account-menu-button');
      expect(await button.getAttribute('aria-expanded')).toBe('false');
      expect(await page.locator('#account-menu-panel').isVisible()).toBe(false);
      // Enter opens it, the arrows move in it, Escape closes it and focus is back on the button.
      await button.focus();
      await page.keyboard.press('Enter');
      expect(await button.getAttribute('aria-expanded')).toBe('true');
      await expectLaidOut(page, `menu ${viewport.width}px`);
      if (process.env.UPDATE_SCREENSHOTS === '1' && viewport === DESKTOP) {
        await page.emulateMedia({ colorScheme: 'light' });
        await page.screenshot({ path: fileURLToPath(new URL('../docs/screenshots/account-menu.png', import.meta.url)) });
      }
      await page.keyboard.press('ArrowDown');
      expect(await page.evaluate('document.activeElement.textContent')).toMatch(/^.Switch to /);
      await page.keyboard.press('End');
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Sign out of all accounts');
      await page.keyboard.press('ArrowDown');
      expect(await page.evaluate('document.activeElement.textContent')).toMatch(/^.Switch to /);
      await page.keyboard.press('Escape');
      expect(await button.getAttribute('aria-expanded')).toBe('false');
      expect(await focusedId(page)).toBe('account-menu-button');
      // Space opens it as well; ArrowUp from the button lands on the last item.
      await page.keyboard.press('Space');
      expect(await button.getAttribute('aria-expanded')).toBe('true');
      await page.keyboard.press('Escape');
      await page.keyboard.press('ArrowUp');
      expect(await page.evaluate('document.activeElement.textContent')).toBe('Sign out of all accounts');
      await page.keyboard.press('Escape');
      await page.context().close();
    }

    // Its item that asks first: the dialog's Cancel and Escape give focus back to the item.
    const asking = await open('en-GB', DESKTOP, cookie);
    for (const how of ['Escape', 'Cancel'] as const) {
      await asking.locator('#account-menu-button').focus();
      await asking.keyboard.press('ArrowUp');
      await asking.keyboard.press('Enter');
      await expect.poll(() => asking.locator('#confirm-dialog').isVisible()).toBe(true);
      if (how === 'Escape') await asking.keyboard.press('Escape');
      else await asking.locator('#confirm-no').click();
      await expect.poll(() => asking.locator('#confirm-dialog').isVisible()).toBe(false);
      await expect.poll(() => asking.evaluate('document.activeElement.textContent')).toBe('Sign out of all accounts');
      await asking.keyboard.press('Escape');
      expect(await focusedId(asking)).toBe('account-menu-button');
    }
    await asking.context().close();

    // Switching with the keyboard: the section stays, the page and the menu show the other account.
    const page = await open('en-GB', DESKTOP, cookie, '/account#security');
    const before = await page.locator('#account-menu-button').textContent();
    await page.locator('#account-menu-button').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('#active-did').textContent()).toBe(dids[0]);
    expect(await shown(page)).toEqual(['panel-security']);
    expect(await page.locator('#account-menu-button').textContent()).not.toBe(before);
    expect(await focusedId(page)).toBe('account-menu-button');
    // The menu on another page switches back and reloads it.
    await page.goto('/sudo');
    await expect.poll(() => page.locator('#account-menu').isVisible()).toBe(true);
    await expectLaidOut(page, 'sudo with the menu');
    await page.locator('#account-menu-button').click();
    const reloaded = page.waitForEvent('load');
    await page
      .locator('#account-menu-panel')
      .getByRole('button', { name: /^Switch to / })
      .click();
    await reloaded;
    await page.goto('/account');
    await expect.poll(() => page.locator('#active-did').textContent()).toBe(dids[1]);
    // Signing out of the active account from the menu leaves the other one.
    await page.locator('#account-menu-button').click();
    await page.locator('#account-menu-panel').getByRole('button', { name: 'Sign out', exact: true }).click();
    await expect.poll(() => page.locator('#active-did').textContent()).toBe(dids[0]);
    await expect
      .poll(() =>
        page
          .locator('#account-menu-panel')
          .getByRole('button', { name: /^Switch to / })
          .count(),
      )
      .toBe(0);
    // The last one signs out to the sign-in page, which then has no menu.
    await page.locator('#account-menu-button').click();
    await page.locator('#account-menu-panel').getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL(`${site.base}/signin?signed_out=1`);
    await expect.poll(() => page.locator('#page-status').textContent()).toBe('You are signed out.');
    expect(await page.locator('#account-menu').isVisible()).toBe(false);
    await page.context().close();
    expect(problems).toEqual([]);
  }, 180_000);

  it('shows no menu to a first-time visitor, and asks nothing more than one /me', async () => {
    const context = await pageContext(site.browser, site.base, 'en-GB', DESKTOP);
    const page = await context.newPage();
    const asked: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/auth/')) asked.push(url.pathname);
    });
    await page.goto('/signin');
    await page.waitForLoadState('networkidle');
    expect(await page.locator('#account-menu').isVisible()).toBe(false);
    // The sign-in page asks once itself; the menu once.
    expect(asked.filter((path) => path === '/api/auth/me').length).toBeLessThanOrEqual(2);
    await page.goto('/api-explorer');
    await page.waitForLoadState('networkidle');
    expect(await page.locator('#account-menu').isVisible()).toBe(false);
    await context.close();
  }, 60_000);
});
