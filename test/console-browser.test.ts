/**
 * The operators' console in headless Chromium (docs/operations.md "The
 * console"), on SQLite and on PostgreSQL: an operator named on the command
 * line adds a security key, steps up with it (a virtual authenticator),
 * reads the dashboard, finds a person by e-mail, disables them and sees their session refused
 * at a consumer site (the verifier package with the revocation feed), adds
 * an OpenID app and rotates its secret, sends a failed webhook again,
 * rotates the session key and reads the audit trail of all of it; each
 * view at desktop and phone width, light and dark, with axe finding
 * nothing, and in the four languages. A non-operator, an operator without
 * a fresh key, and a removed operator's open console are refused.
 * `UPDATE_SCREENSHOTS=1` writes docs/screenshots/console-*.png (from the SQLite run).
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createSessionVerifier, stopRevocationPolling, type SessionVerifier } from '../packages/verify/src/index.js';
import { newWallet, type Browser } from './support/auth-client.js';
import { forEachEngine, useMailbox } from './support/auth-harness.js';
import {
  CHROMIUM_PATH,
  DESKTOP,
  HAVE_CHROMIUM,
  IN_CI,
  PHONE,
  expectLaidOut,
  pageContext,
  virtualAuthenticator,
} from './support/chromium.js';
import { operatorCommand } from './support/operators.js';
import { usePageHost, type PageHost } from './support/page-host.js';

if (!HAVE_CHROMIUM && IN_CI) {
  it('has Chromium to drive (CI=true)', () => {
    throw new Error(`console-browser: ${CHROMIUM_PATH} is missing and CI=true; run scripts/ensure-chromium.sh before the tests`);
  });
}

const MINUTE = 60_000;
const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';
const SCREENSHOT_DIR = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));

/** Runs `oc-host …` against the site's store; its exit code. */
async function cli(site: PageHost, argv: string[]): Promise<number> {
  return (await operatorCommand(site.harness, argv, site.base)).code;
}

/** A wallet's account, signed in on the host (not yet in Chromium): its browser and its did. */
async function walletAccount(site: PageHost): Promise<{ host: Browser; did: string; wallet: ReturnType<typeof newWallet> }> {
  const wallet = newWallet();
  const host = site.harness.browser(site.app, site.base);
  const reply = await host.signIn(wallet);
  expect(reply.status).toBe(200);
  return { host, did: reply.body.account.did_oc as string, wallet };
}

/** In `page` (signed in, with a virtual authenticator), adds a security key to the account, as the account page would. */
async function addKey(page: Page): Promise<void> {
  // A string, so the test runner's transform leaves the page's dynamic import alone.
  const added = await page.evaluate<{ ok: boolean }>(`(async () => {
    const passkeys = await import('/assets/passkeys.js');
    const post = async (path, body) =>
      (await fetch(path, { method: 'POST', credentials: 'include', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
    const started = await post('/api/auth/webauthn/register/options', { label: 'Desk key' });
    const response = await passkeys.createCredential(started.options);
    return post('/api/auth/webauthn/register/verify', { challenge_token: started.challenge_token, response });
  })()`);
  expect(added).toMatchObject({ ok: true });
}

/** `fetch` in the page, same-origin with its cookie: the status and the error code. */
async function fetchIn(page: Page, method: string, path: string, body?: unknown): Promise<{ status: number; error: string | null }> {
  return page.evaluate(
    async ([method, path, body]) => {
      const response = await fetch(path as string, {
        method: method as string,
        credentials: 'same-origin',
        ...(body === null ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      });
      const parsed = (await response.json().catch(() => null)) as { error?: string } | null;
      return { status: response.status, error: parsed?.error ?? null };
    },
    [method, path, body ?? null] as const,
  );
}

async function ready(page: Page): Promise<void> {
  await expect.poll(() => page.locator('#main').getAttribute('aria-busy'), { timeout: 15_000 }).toBe('false');
}

await forEachEngine('the operators’ console in headless Chromium', (engine) => {
  if (!HAVE_CHROMIUM) return;
  const mailbox = useMailbox();
  const site = usePageHost({
    engine,
    hostname: 'localhost',
    env: () => ({ SMTP_URL: mailbox.url(), RATE_LIMIT_OTP_PER_HOUR: '0', WEBHOOK_ALLOW_PRIVATE: '1' }),
  });
  const problems: string[] = [];
  /** The README's pictures of the console, taken on one engine only. */
  async function screenshot(page: Page, name: string): Promise<void> {
    if (!UPDATE_SCREENSHOTS || engine !== 'sqlite') return;
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.screenshot({ path: `${SCREENSHOT_DIR}${name}`, fullPage: true });
  }
  const watch = (page: Page) => {
    page.on('pageerror', (error) => problems.push(error.message));
    page.on('console', (message) => {
      // The refusals this suite asks for on purpose answer 401, 403 or 404.
      if (/^Failed to load resource: the server responded with a status of (401|403|404)/.test(message.text())) return;
      if (message.type() === 'error') problems.push(message.text());
    });
  };

  /** An operator named on the command line, with a fresh re-proof on the host so a key can be added; its Chromium page. */
  async function operatorPage(
    viewport: { readonly width: number; readonly height: number } = DESKTOP,
    locale = 'en-GB',
  ): Promise<{ page: Page; did: string; close(): Promise<void> }> {
    const operator = await walletAccount(site);
    expect(await cli(site, ['operators', 'add', operator.did])).toBe(0);
    expect((await operator.host.post('/api/auth/sudo', await operator.host.prove(operator.wallet, 'sudo'))).status).toBe(200);
    const context = await pageContext(site.browser, site.base, locale, viewport, operator.host.cookie as string);
    const page = await context.newPage();
    watch(page);
    await virtualAuthenticator(page, 'security key');
    return { page, did: operator.did, close: () => context.close() };
  }

  it('walks an operator through people, apps, keys and the audit trail, each view laid out and in four languages', async () => {
    // The person: an e-mail account, signed in at a consumer site that verifies locally and polls the revocation feed.
    const email = `person-${engine}@example.org`;
    const person = site.harness.browser(site.app, site.base);
    const started = await person.post('/api/auth/email-otp/start', { email });
    expect(started.status).toBe(200);
    expect((await person.post('/api/auth/email-otp/verify', { email, code: '000000', token: started.body.token })).status).toBe(401);
    const signedIn = await person.post('/api/auth/email-otp/verify', {
      email,
      code: await mailbox.nextCode(email),
      token: started.body.token,
    });
    expect(signedIn.status).toBe(200);
    const personDid = signedIn.body.account.did_oc as string;
    const personToken = person.cookie as string;
    const consumer: SessionVerifier = createSessionVerifier({
      jwksUrl: `${site.base}/.well-known/jwks.json`,
      issuer: site.base,
      revocations: { url: `${site.base}/api/auth/revocations`, intervalSeconds: 1 },
    });
    expect(await consumer.verify(personToken)).toMatchObject({ did_oc: personDid });

    // Their Connect app, with a webhook delivery that failed.
    const now = site.harness.clock.now().getTime();
    const app = await site.harness.store.createConnectApp({
      owner_account_id: personDid.slice('did:oc:'.length),
      name: 'Person’s shop',
      key_hash: 'a'.repeat(64),
      created_at: now,
    });
    const failedId = `${engine === 'sqlite' ? 'a' : 'b'}${'f'.repeat(31)}`;
    const raw = await site.harness.raw();
    await raw.db
      .insertInto('webhook_deliveries')
      .values({
        id: failedId,
        app_id: app.id,
        event_type: 'identity.linked',
        payload: '{}',
        created_at: now,
        state: 'failed',
        attempts: 8,
        next_attempt_at: now,
        lease_owner: null,
        lease_until: null,
        last_attempt_at: now,
        last_status: 503,
        last_error: 'http_503',
        delivered_at: null,
      })
      .execute();

    const operator = await operatorPage();
    const { page } = operator;
    // No key yet: the console says how to add one, and shows nothing else.
    await page.goto('/admin');
    await ready(page);
    await expect.poll(() => page.locator('#no-key').isVisible()).toBe(true);
    expect(await page.locator('#console').isVisible()).toBe(false);
    await expectLaidOut(page, 'no key');
    await addKey(page);

    // With a key: one touch opens the console.
    await page.reload();
    await ready(page);
    await expect.poll(() => page.locator('#step-up-button').isVisible()).toBe(true);
    await page.locator('#step-up-button').click();
    // It opens on the dashboard: the person's e-mail sign-in and the refused code are counted.
    await expect.poll(() => page.locator('#active-sessions').isVisible()).toBe(true);
    expect(await page.locator('#fresh-until').textContent()).toMatch(/^Key confirmed until /);
    expect(await page.locator('#dashboard-signins-title + * thead').textContent()).toContain('e-mail code');
    expect(await page.locator('#dashboard-failures-title + *').textContent()).toContain('e-mail code: invalid_code');
    await expectLaidOut(page, 'dashboard desktop');
    await screenshot(page, 'console-dashboard.png');
    await page.locator('#nav-people').click();
    await expect.poll(() => page.locator('#people-form').isVisible()).toBe(true);

    // Find the person by the start of their e-mail, in upper case.
    await page.locator('#people-q').fill(`PERSON-${engine.toUpperCase()}@`);
    await page.locator('#people-form button[type="submit"]').click();
    await expect.poll(() => page.locator('#people-count').textContent()).toBe('One person found.');
    expect(page.url()).toBe(`${site.base}/admin/people?q=PERSON-${engine.toUpperCase()}%40`);
    await expectLaidOut(page, 'people desktop');
    await page.locator('#people-results a').first().click();
    await expect.poll(() => page.locator('#person-did').textContent()).toBe(personDid);
    expect(await page.locator('#person-status').textContent()).toBe('Active');
    expect(await page.locator('#person-identities-title + * ').textContent()).toContain(email);
    expect(await page.locator('#person-attestation-title + *').textContent()).toBe(
      'This account has no Bitcoin address, so it has no attestation.',
    );
    await expectLaidOut(page, 'person desktop');
    await screenshot(page, 'console-person.png');

    // Disable them with a reason: their session is refused at the consumer site.
    await page.locator('#person-hold').click();
    await expect.poll(() => page.locator('#person-error').textContent()).toBe('Say why first: the reason goes into the audit log.');
    await page.locator('#person-reason').fill('Reported for spam');
    await page.locator('#person-hold').click();
    await expect.poll(() => page.locator('#person-status').textContent()).toBe('Disabled');
    await expect.poll(() => page.locator('#person-done').textContent()).toBe('The account is disabled and one device was signed out.');
    // The feed is cached for a second of the host's clock, which this suite moves by hand.
    site.harness.clock.advance(2000);
    await expect.poll(() => consumer.verify(personToken), { timeout: 10_000, interval: 200 }).toBeNull();
    expect((await person.me()).status).toBe(401);

    // Apps: add an OpenID app (its secret shown once), then a new secret for it, asked again of the key.
    await page.locator('#nav-apps').click();
    await expect.poll(() => page.locator('#client-form').isVisible()).toBe(true);
    await page.locator('#client-name').fill('Reporting');
    await page.locator('#client-uris').fill('https://reports.example.org/callback');
    await page.locator('#client-form button[type="submit"]').click();
    await expect.poll(() => page.locator('#apps-done').textContent()).toMatch(/^Reporting was added as /);
    const clientId = /added as (oc_[0-9a-f]{32})\./.exec((await page.locator('#apps-done').textContent()) ?? '')?.[1] as string;
    expect(clientId).toMatch(/^oc_/);
    const firstSecret = await page.locator('.shown-once code').textContent();
    expect(firstSecret).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    await page.locator('#apps-reason').fill('Quarterly rotation');
    // More than a minute after the step-up: the key is asked again, in place, before the secret changes.
    site.harness.clock.advance(2 * MINUTE);
    await page.getByRole('button', { name: 'New secret: Reporting' }).click();
    await expect.poll(() => page.locator('#apps-done').textContent()).toBe('Reporting has a new secret; the old one no longer works.');
    const secondSecret = await page.locator('.shown-once code').textContent();
    expect(secondSecret).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(secondSecret).not.toBe(firstSecret);
    // Edit its redirect addresses and logo, then hold it and lift the hold.
    await page.getByRole('button', { name: 'Edit: Reporting' }).click();
    await expect.poll(() => page.locator('#client-edit-form').isVisible()).toBe(true);
    await page.locator('#edit-uris').fill('https://reports.example.org/callback\nhttps://reports.example.org/again');
    await page.locator('#edit-logo').fill('https://reports.example.org/logo.png');
    await expectLaidOut(page, 'client edit desktop');
    await page.locator('#client-edit-form button[type="submit"]').click();
    await expect.poll(() => page.locator('#apps-done').textContent()).toBe('Reporting was saved.');
    expect(await page.locator('#view table').first().textContent()).toContain('https://reports.example.org/again');
    await page.locator('#apps-reason').fill('Its domain lapsed');
    await page.getByRole('button', { name: 'Hold: Reporting' }).click();
    await expect
      .poll(() => page.locator('#apps-done').textContent())
      .toBe('Reporting is held: it signs nobody in, and its codes and tokens are refused.');
    expect(await page.locator('#view table').first().textContent()).toContain('Held');
    await page.getByRole('button', { name: 'Lift the hold: Reporting' }).click();
    await expect.poll(() => page.locator('#apps-done').textContent()).toBe('Reporting signs people in again.');
    await expectLaidOut(page, 'apps desktop');
    await screenshot(page, 'console-apps.png');

    // Three sign-ins to it today, as the provider counts them (test/dashboard.test.ts counts real ones): the dashboard shows them by day.
    await site.harness.store.addDailyCounts([
      { day: Math.floor(site.harness.clock.now().getTime() / 86_400_000), metric: 'oidc_signin', label: clientId, count: 3 },
    ]);
    await page.locator('#nav-dashboard').click();
    await expect.poll(() => page.locator('#dashboard-oidc-title').isVisible()).toBe(true);
    const perApp = page.locator('#dashboard-oidc-title ~ .table-wrap').last();
    expect(await perApp.locator('thead').textContent()).toContain('Reporting');
    expect(await perApp.locator('tbody tr').first().textContent()).toContain('3');
    await expectLaidOut(page, 'dashboard with an app desktop');
    await page.locator('#nav-apps').click();
    await expect.poll(() => page.locator('#client-form').isVisible()).toBe(true);

    // The person's Connect app: its failed delivery, sent again.
    await page.getByRole('link', { name: 'Person’s shop' }).click();
    await expect.poll(() => page.locator('#deliveries-title').isVisible()).toBe(true);
    expect(await page.locator('#view table').textContent()).toContain('http_503');
    await page.getByRole('button', { name: 'Send again: identity.linked' }).click();
    await expect.poll(() => page.locator('#deliveries-done').textContent()).toBe('It will be sent again in a moment.');
    await expectLaidOut(page, 'deliveries desktop');

    // The service: every dependency, the keys; the session key rotated.
    await page.locator('#nav-service').click();
    await expect.poll(() => page.locator('#health-title').isVisible()).toBe(true);
    expect(await page.locator('#view').textContent()).toContain('database');
    expect(await page.locator('#view').textContent()).not.toContain('SESSION_SECRET=');
    const sessionKeysBefore = await page.locator('#view table').nth(1).locator('tr', { hasText: 'Sessions' }).count();
    await page.locator('#keys-reason').fill('Yearly rotation');
    await page.locator('#rotate-session').click();
    await expect.poll(() => page.locator('#keys-done').textContent()).toMatch(/^A new key was made/);
    expect(await page.locator('#view table').nth(1).locator('tr', { hasText: 'Sessions' }).count()).toBe(sessionKeysBefore + 1);
    await expectLaidOut(page, 'service desktop');

    // The audit trail of all of it, with a filter.
    await page.locator('#nav-audit').click();
    await expect.poll(() => page.locator('#audit-results table').isVisible()).toBe(true);
    const trail = (await page.locator('#audit-results').textContent()) ?? '';
    for (const action of [
      'account.search',
      'account.view',
      'account.disable',
      'client.create',
      'client.rotate',
      'webhook.resend',
      'keys.rotate',
    ]) {
      expect(trail, action).toContain(action);
    }
    expect(trail).toContain('Reported for spam');
    expect(trail).toContain('console');
    expect(trail).not.toContain(firstSecret as string);
    expect(trail).not.toContain(secondSecret as string);
    await page.locator('#audit-order').selectOption('oldest');
    await page.locator('#audit-form button[type="submit"]').click();
    await expect.poll(() => page.url()).toBe(`${site.base}/admin/audit?order=oldest`);
    await expect.poll(() => page.locator('#audit-results tbody tr').first().textContent()).toContain('operator.add');
    await page.locator('#audit-order').selectOption('newest');
    await page.locator('#audit-action').fill('account.disable');
    await page.locator('#audit-form button[type="submit"]').click();
    await expect.poll(() => page.locator('#audit-results tbody tr').count()).toBe(1);
    expect(await page.locator('#audit-results tbody').textContent()).toContain(personDid);
    await expectLaidOut(page, 'audit desktop');
    await screenshot(page, 'console-audit.png');

    // At phone width, and in the other three languages, each view stays laid out.
    await page.setViewportSize(PHONE);
    for (const lang of ['de', 'es', 'fr', 'en']) {
      for (const path of ['/admin', `/admin/people/${personDid}`, '/admin/apps', '/admin/service', '/admin/audit']) {
        await page.goto(`${path}?lang=${lang}`);
        await ready(page);
        await expect.poll(() => page.locator('#view h2').first().isVisible()).toBe(true);
        expect(await page.locator('html').getAttribute('lang')).toBe(lang);
        await expectLaidOut(page, `${path} ${lang} phone`);
      }
    }
    expect(await page.locator('#console-title').textContent()).toBe('Console');

    // Enabled again with a reason: the person reads both of the operator's reasons in their activity, in each language.
    await page.setViewportSize(DESKTOP);
    await page.goto(`/admin/people/${personDid}`);
    await ready(page);
    await page.locator('#person-reason').fill('Cleared after review');
    await page.locator('#person-hold').click();
    await expect.poll(() => page.locator('#person-status').textContent()).toBe('Active');
    const back = site.harness.browser(site.app, site.base);
    const again = await back.post('/api/auth/email-otp/start', { email });
    expect(
      (await back.post('/api/auth/email-otp/verify', { email, code: await mailbox.nextCode(email), token: again.body.token })).status,
    ).toBe(200);
    const said: Record<string, readonly string[]> = {
      en: ['The operator disabled this account: “Reported for spam”', 'The operator enabled this account again: “Cleared after review”'],
      de: [
        'Der Betreiber hat dieses Konto gesperrt: „Reported for spam“',
        'Der Betreiber hat dieses Konto wieder freigegeben: „Cleared after review“',
      ],
      es: ['El operador desactivó esta cuenta: «Reported for spam»', 'El operador volvió a activar esta cuenta: «Cleared after review»'],
      fr: ['L’opérateur a désactivé ce compte : « Reported for spam »', 'L’opérateur a réactivé ce compte : « Cleared after review »'],
    };
    const personContext = await pageContext(site.browser, site.base, 'en-GB', PHONE, back.cookie as string);
    const personPage = await personContext.newPage();
    watch(personPage);
    for (const [lang, lines] of Object.entries(said)) {
      await personPage.goto(`/account?lang=${lang}#security`);
      await ready(personPage);
      await expect.poll(() => personPage.locator('#activity').textContent()).toContain(lines[0]);
      expect(await personPage.locator('#activity').textContent()).toContain(lines[1]);
      await expectLaidOut(personPage, `person's activity ${lang}`);
    }
    await personContext.close();
    await operator.close();
    stopRevocationPolling();
    expect(problems).toEqual([]);
  }, 240_000);

  it('refuses a non-operator everywhere, asks an operator for a key again after 10 minutes, and closes a removed operator’s open console', async () => {
    // A non-operator: the console and the admin API are a path no route serves.
    const stranger = await walletAccount(site);
    const strangerContext = await pageContext(site.browser, site.base, 'en-GB', DESKTOP, stranger.host.cookie as string);
    const strangerPage = await strangerContext.newPage();
    const answer = await strangerPage.goto('/admin');
    expect(answer?.status()).toBe(404);
    expect(JSON.parse((await answer?.text()) ?? '{}')).toMatchObject({ error: 'not_found', detail: 'no route GET /admin' });
    expect(await fetchIn(strangerPage, 'GET', '/api/admin/session')).toEqual({ status: 404, error: 'not_found' });
    expect(await fetchIn(strangerPage, 'POST', `/api/admin/accounts/${stranger.did}/disable`, { reason: 'x' })).toEqual({
      status: 404,
      error: 'not_found',
    });
    await strangerContext.close();

    // An operator whose step-up is older than 10 minutes: refused until the key answers again.
    const operator = await operatorPage(PHONE);
    const { page } = operator;
    await page.goto('/admin');
    await ready(page);
    await addKey(page);
    await page.reload();
    await ready(page);
    await page.locator('#step-up-button').click();
    await expect.poll(() => page.locator('#active-sessions').isVisible()).toBe(true);
    await expectLaidOut(page, 'console phone');
    site.harness.clock.advance(11 * MINUTE);
    expect(await fetchIn(page, 'GET', '/api/admin/accounts?q=a')).toEqual({ status: 401, error: 'step_up_required' });
    await page.locator('#nav-audit').click();
    await expect.poll(() => page.locator('#step-up').isVisible()).toBe(true);
    expect(await page.locator('#step-up-text').textContent()).toBe(
      'Your last confirmation is more than 10 minutes old. Confirm with your security key to go on.',
    );
    await expectLaidOut(page, 'step-up again phone');
    await screenshot(page, 'console-step-up-phone.png');
    await page.locator('#step-up-button').click();
    await expect.poll(() => page.locator('#audit-results table').isVisible()).toBe(true);

    // Removed on the command line while the console is open: the next request is refused as if nothing were here.
    expect(await cli(site, ['operators', 'remove', operator.did, '--yes'])).toBe(0);
    expect(await fetchIn(page, 'GET', '/api/admin/session')).toEqual({ status: 404, error: 'not_found' });
    await page.locator('#nav-service').click();
    await expect.poll(() => page.locator('#view .form-error').textContent()).toBe('That is not here any more. Reload the page.');
    expect((await page.reload())?.status()).toBe(404);
    await operator.close();
    expect(problems).toEqual([]);
  }, 120_000);
});
