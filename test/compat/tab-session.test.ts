/**
 * Per-tab pinning as the OrangeCheck client sends it (oc-packages
 * `auth-client/src/tab-session.ts` at 79d8fe6): a pinned tab sends its own
 * session token in `x-oc-tab-session` ("servers verify the header exactly
 * like the cookie token"), so two tabs of one browser act as two accounts of
 * its roster; the preflight must allow the header, or the browser blocks
 * every cross-origin call of a pinned tab.
 */
import type { FastifyInstance } from 'fastify';
import { expect, it } from 'vitest';
import { newWallet } from '../support/auth-client.js';
import { AuthHarness, forEachEngine, useAuthHarness } from '../support/auth-harness.js';

const SITE = 'https://shop.example.com';

function tabSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let app: FastifyInstance;
  useAuthHarness(
    engine,
    (opened, built) => {
      harness = opened;
      app = built;
    },
    { COOKIE_DOMAIN: '.example.com', PUBLIC_URL: 'https://auth.example.com' },
  );

  it('lets two tabs of one browser act as two accounts of its roster', async () => {
    const browser = harness.browser(app, 'https://auth.example.com');
    const a = await browser.signIn(newWallet());
    const b = await browser.signIn(newWallet(), { add: true });
    const tabA = { 'x-oc-tab-session': a.body.token as string };
    const tabB = { 'x-oc-tab-session': b.body.token as string };

    // The shared cookie follows the last sign-in; each tab follows its pin.
    expect((await browser.get('/api/auth/me')).body.account.did_oc).toBe(b.body.account.did_oc);
    expect((await browser.request('GET', '/api/auth/me', undefined, tabA)).body.account.did_oc).toBe(a.body.account.did_oc);
    expect((await browser.request('GET', '/api/auth/me', undefined, tabB)).body.account.did_oc).toBe(b.body.account.did_oc);

    // An edit in tab A changes A, not the cookie's account.
    const edit = await browser.request('PATCH', '/api/auth/account', { display_name: 'Tab A' }, tabA);
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    expect(edit.body.account.did_oc).toBe(a.body.account.did_oc);
    expect((await browser.request('GET', '/api/auth/me', undefined, tabB)).body.account.display_name).toBeNull();

    // A pin that is not a live session is no session at all, whatever the cookie says.
    expect((await browser.request('GET', '/api/auth/me', undefined, { 'x-oc-tab-session': 'not-a-token' })).status).toBe(401);
  });

  it('allows the header in the preflight of the browser routes', async () => {
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/api/auth/me',
      headers: { origin: SITE, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-oc-tab-session' },
    });
    expect(preflight.statusCode).toBe(204);
    expect(preflight.headers['access-control-allow-origin']).toBe(SITE);
    expect(String(preflight.headers['access-control-allow-headers'])).toContain('x-oc-tab-session');
  });
}

await forEachEngine('per-tab pinning as the OrangeCheck client sends it', tabSuite);
