/**
 * The account page's devices and activity in headless Chromium (docs/protocol.md
 * §3 "Devices"): a device label, stored in English as the host made it, is
 * said in the page's language, in every language, at desktop and phone
 * width, light and dark, with axe finding nothing and no CSP violation.
 */
import { describe, expect, it } from 'vitest';
import { newWallet } from './support/auth-client.js';
import { useMailbox } from './support/auth-harness.js';
import { CHROMIUM_PATH, DESKTOP, HAVE_CHROMIUM, IN_CI, PHONE, pageContext, expectLaidOut } from './support/chromium.js';
import { usePageHost } from './support/page-host.js';

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';

/** "Safari 18 on iOS (mobile)" as each language says it (src/platform/i18n/pages/). */
const LABELS: Readonly<Record<string, string>> = {
  'en-GB': 'Safari 18 on iOS (phone)',
  'de-DE': 'Safari 18 unter iOS (Smartphone)',
  'fr-FR': 'Safari 18 sur iOS (mobile)',
  'es-ES': 'Safari 18 en iOS (móvil)',
};

if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium to drive (CI=true)', () => {
    throw new Error(`devices-pages: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

describe.skipIf(!HAVE_CHROMIUM)('device labels on the account page in headless Chromium', () => {
  // Before the host, so that its SMTP URL is known when the host starts.
  const mailbox = useMailbox();
  const site = usePageHost({ env: () => ({ SMTP_URL: mailbox.url(), RATE_LIMIT_OTP_PER_HOUR: '0' }) });
  const problems: string[] = [];

  it('says where the account is signed in in the page language, desktop and phone, light and dark', async () => {
    for (const [locale, label] of Object.entries(LABELS)) {
      for (const viewport of [DESKTOP, PHONE]) {
        // The session was made by a phone's browser; this one shows it.
        const host = site.harness.browser(site.app, site.base);
        host.userAgent = IPHONE;
        expect((await host.signIn(newWallet())).status).toBe(200);
        const context = await pageContext(site.browser, site.base, locale, viewport, host.cookie as string);
        const page = await context.newPage();
        page.on('console', (message) => {
          // Passkeys answer 503 on a plain-http origin; nothing else may fail.
          if (/^Failed to load resource: the server responded with a status of 503/.test(message.text())) return;
          if (message.type() === 'error') problems.push(message.text());
        });
        page.on('pageerror', (error) => problems.push(error.message));
        await page.goto('/account');
        await expect.poll(() => page.locator('#main').getAttribute('aria-busy')).toBe('false');
        await expect
          .poll(() => page.locator('#devices .item-title').first().textContent())
          .toMatch(new RegExp(`^${label.replace(/[()]/g, '\\$&')}`));
        await expect.poll(() => page.locator('#activity .item-title').first().textContent()).toContain(label);
        await expectLaidOut(page, `${locale} ${viewport.width}px`);
        await context.close();
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);

  it('shows an e-mail address whole in the account heading, wrapped where it must, desktop and phone, light and dark', async () => {
    const email = 'second-design-reviewer@long-subdomain.example.org';
    for (const viewport of [DESKTOP, PHONE]) {
      const host = site.harness.browser(site.app, site.base);
      expect((await host.post('/api/auth/email-otp/start', { email })).status).toBe(200);
      const code = await mailbox.nextCode(email);
      expect((await host.post('/api/auth/email-otp/verify', { email, code })).status).toBe(200);
      const context = await pageContext(site.browser, site.base, 'en-GB', viewport, host.cookie as string);
      const page = await context.newPage();
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto('/account');
      await expect.poll(() => page.locator('#active-title').textContent()).toBe(`Signed in as ${email}`);
      await expectLaidOut(page, `heading ${viewport.width}px`);
      await context.close();
    }
    expect(problems).toEqual([]);
  }, 120_000);
});
