/**
 * The headless Chromium the browser suites drive: where it is, whether it is
 * there, and the flags it starts with (no sandbox, GPU, QUIC or background
 * traffic, so a run needs nothing but loopback), and what the page suites
 * share: the two widths, axe, CSP violations as console errors, a context
 * in a language and size, a virtual WebAuthn authenticator.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM_PATH);
export const IN_CI = process.env.CI === 'true';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The two widths every page is tested at. */
export const DESKTOP = { width: 1280, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;

const AXE_PATH = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url));
let axeSource: string | undefined;

/** What axe finds on `page` (loaded into it on first use): one line per rule, with up to three of its nodes. */
export async function axeViolations(page: Page): Promise<string[]> {
  axeSource ??= await readFile(AXE_PATH, 'utf8');
  if (!(await page.evaluate('typeof globalThis.axe !== "undefined"'))) await page.evaluate(axeSource);
  return page.evaluate(
    `globalThis.axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => v.id + ' x' + v.nodes.length + ': ' + v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')))`,
  ) as Promise<string[]>;
}

/** Makes every Content-Security-Policy violation of the context's pages a console error, which the suites count as a problem. */
async function reportCspViolations(context: BrowserContext): Promise<void> {
  await context.addInitScript(() => {
    (
      globalThis as unknown as {
        document: { addEventListener(type: string, listener: (event: { violatedDirective: string }) => void): void };
      }
    ).document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective}`));
  });
}

/**
 * A context of `browser` at `base` in `locale` at `viewport` (UTC), signed in
 * with the host session `cookie` when given, reporting CSP violations.
 */
export async function pageContext(
  browser: Browser,
  base: string,
  locale: string,
  viewport: { readonly width: number; readonly height: number },
  cookie?: string,
): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL: base, locale, viewport, timezoneId: 'UTC' });
  if (cookie !== undefined) await context.addCookies([{ name: 'oc_session', value: cookie, url: base, httpOnly: true, sameSite: 'Lax' }]);
  await reportCspViolations(context);
  return context;
}

/** Whether `page` scrolls sideways (a layout too wide for its viewport). */
function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate('document.documentElement.scrollWidth > window.innerWidth') as Promise<boolean>;
}

/** The page fits its width, and axe finds nothing on it in the light and the dark scheme (it is left dark). */
export async function expectLaidOut(page: Page, what: string): Promise<void> {
  expect(await scrollsSideways(page), `${what} scrolls sideways`).toBe(false);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    expect(await axeViolations(page), `${what} ${scheme}`).toEqual([]);
  }
}

/** A credential a virtual authenticator already holds, as DevTools' WebAuthn domain takes it. */
export interface VirtualCredential {
  readonly credentialId: string;
  readonly isResidentCredential: boolean;
  readonly rpId: string;
  readonly privateKey: string;
  readonly signCount: number;
  readonly userHandle?: string;
}

/**
 * A virtual authenticator in `page`, through DevTools' WebAuthn domain: a
 * USB security key without resident keys, or a platform authenticator
 * holding passkeys. Either verifies the person and answers every prompt at
 * once. With `credentials`, it already holds them (a key registered
 * elsewhere, or the same passkey synced from another device).
 */
export async function virtualAuthenticator(
  page: Page,
  kind: 'security key' | 'platform',
  credentials: readonly VirtualCredential[] = [],
): Promise<{ credentials(): Promise<VirtualCredential[]> }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const platform = kind === 'platform';
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: platform ? 'internal' : 'usb',
      hasResidentKey: platform,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  for (const credential of credentials) await cdp.send('WebAuthn.addCredential', { authenticatorId, credential });
  return { credentials: async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials as VirtualCredential[] };
}
