/**
 * The account page's devices and activity in headless Chromium (docs/protocol.md
 * §3 "Devices"): a device label, stored in English as the host made it, is
 * said in the page's language, in every language, at desktop and phone
 * width, light and dark, with axe finding nothing and no CSP violation.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newWallet } from './support/auth-client.js';
import { AuthHarness } from './support/auth-harness.js';
import { CHROMIUM_ARGS, CHROMIUM_PATH, HAVE_CHROMIUM, IN_CI } from './support/chromium.js';
import { TestClock } from './support/clock.js';
import { freePort } from './support/instances.js';

const AXE_PATH = fileURLToPath(new URL('../node_modules/axe-core/axe.min.js', import.meta.url));
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 900 };
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';

/** "Safari 18 on iOS (mobile)" as each language says it (src/i18n/pages/). */
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
  let harness: AuthHarness;
  let app: FastifyInstance;
  let browser: Browser;
  let base: string;
  let axe: string;
  const problems: string[] = [];

  beforeAll(async () => {
    harness = await AuthHarness.open('sqlite', new TestClock(Date.now()));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await harness.app({ PUBLIC_URL: base });
    await app.listen({ host: '127.0.0.1', port });
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
    axe = await readFile(AXE_PATH, 'utf8');
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

  async function axeViolations(page: Page): Promise<string[]> {
    if (!(await page.evaluate('typeof globalThis.axe !== "undefined"'))) await page.evaluate(axe);
    return page.evaluate(
      `globalThis.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => v.id + ' x' + v.nodes.length + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')))`,
    ) as Promise<string[]>;
  }

  it('says where the account is signed in in the page language, desktop and phone, light and dark', async () => {
    for (const [locale, label] of Object.entries(LABELS)) {
      for (const viewport of [DESKTOP, PHONE]) {
        // The session was made by a phone's browser; this one shows it.
        const host = harness.browser(app, base);
        host.userAgent = IPHONE;
        expect((await host.signIn(newWallet())).status).toBe(200);
        const context = await browser.newContext({ baseURL: base, locale, viewport, timezoneId: 'UTC' });
        await context.addCookies([{ name: 'oc_session', value: host.cookie as string, url: base, httpOnly: true, sameSite: 'Lax' }]);
        await context.addInitScript(() => {
          (
            globalThis as unknown as {
              document: { addEventListener(type: string, listener: (event: { violatedDirective: string }) => void): void };
            }
          ).document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective}`));
        });
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
        const overflow = await page.evaluate('document.documentElement.scrollWidth > window.innerWidth');
        expect(overflow, `${locale} ${viewport.width}px scrolls sideways`).toBe(false);
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          expect(await axeViolations(page), `${locale} ${viewport.width}px ${scheme}`).toEqual([]);
        }
        await context.close();
      }
    }
    expect(problems).toEqual([]);
  }, 180_000);
});
