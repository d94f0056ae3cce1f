/**
 * Per-tab pinning as the OrangeCheck client sends it (oc-packages
 * `auth-client/src/tab-session.ts` at 79d8fe6, and its tests at 82a32c9): a
 * pinned tab sends its own session token in `x-oc-tab-session` ("servers
 * verify the header exactly like the cookie token"), so two tabs of one
 * browser act as two accounts of its roster; the preflight must allow the
 * header, or the browser blocks every cross-origin call of a pinned tab.
 *
 * `POST /api/auth/tab` (`consumeTabAccountHint`, and the provider's pin on
 * first load) answers `{ok, token, account: {did_oc}}` for the active account
 * or for another account of the roster, and refuses one outside it. What a
 * pinned tab changes (switch, logout, edit) is answered to that tab; the
 * cookie, and so every unpinned tab, stays (docs/protocol.md §3). A step-up or
 * re-proof also reaches the cookie and supersedes the row's older tab tokens,
 * so the provider's `refresh()` drops its dead pin and pins again with the
 * fresh claim.
 */
import { expect, it } from 'vitest';
import { type Browser, newWallet, type Reply } from '../support/auth-client.js';
import { expectError, forEachEngine, useAuthSuite } from '../support/auth-harness.js';

const SITE = 'https://shop.example.com';

function tabSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine, { COOKIE_DOMAIN: '.example.com', PUBLIC_URL: 'https://auth.example.com' });

  it('lets two tabs of one browser act as two accounts of its roster', async () => {
    const browser = auth.harness.browser(auth.app, 'https://auth.example.com');
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

  const pin = (reply: Reply) => ({ 'x-oc-tab-session': reply.body.token as string });
  const didOf = (reply: Reply) => reply.body.account.did_oc as string;
  const meAs = async (browser: Browser, headers: Record<string, string>) => browser.request('GET', '/api/auth/me', undefined, headers);

  /** A browser signed in to two accounts, A then B (the cookie's). */
  async function twoAccounts() {
    const browser = auth.harness.browser(auth.app, 'https://auth.example.com');
    const walletA = newWallet();
    const a = await browser.signIn(walletA);
    const b = await browser.signIn(newWallet(), { add: true });
    return { browser, walletA, a, b };
  }

  it('POST /api/auth/tab mints a token for the active account or another of the roster, and leaves the cookie alone', async () => {
    const { browser, a, b } = await twoAccounts();
    const cookie = browser.cookie;

    // The provider's first load: no body, the active (cookie) account.
    const own = await browser.request('POST', '/api/auth/tab');
    expect(own.status, JSON.stringify(own.body)).toBe(200);
    expect(own.body).toMatchObject({ ok: true, account: { did_oc: didOf(b) } });
    expect(typeof own.body.token).toBe('string');
    expect(own.setCookies).toEqual([]);
    expect(own.headers['cache-control']).toBe('no-store, private');

    const emptyJson = await browser.request('POST', '/api/auth/tab', undefined, { 'content-type': 'application/json' });
    expect(emptyJson.body.account.did_oc).toBe(didOf(b));

    // consumeTabAccountHint: `{did_oc}` of another account of the roster.
    const hinted = await browser.post('/api/auth/tab', { did_oc: didOf(a) });
    expect(hinted.status).toBe(200);
    expect(hinted.body.account.did_oc).toBe(didOf(a));
    expect(hinted.setCookies).toEqual([]);
    expect(browser.cookie).toBe(cookie);
    expect((await meAs(browser, pin(hinted))).body.account.did_oc).toBe(didOf(a));
    // Header only, as a consumer's server receives it: the pin is the credential.
    const bare = await auth.app.inject({ method: 'GET', url: '/api/auth/me', headers: pin(hinted) });
    expect(bare.json().account.did_oc).toBe(didOf(a));

    // The same, asked from a tab already pinned elsewhere.
    const fromTab = await browser.request('POST', '/api/auth/tab', { did_oc: didOf(b) }, pin(hinted));
    expect(fromTab.body.account.did_oc).toBe(didOf(b));
  });

  it('refuses a did outside the roster, a malformed one, and a caller without a session', async () => {
    const { browser } = await twoAccounts();
    const stranger = auth.harness.browser(auth.app, 'https://auth.example.com');
    const other = await stranger.signIn(newWallet());

    expectError(await browser.post('/api/auth/tab', { did_oc: didOf(other) }), 403, 'not_in_roster');
    expectError(await browser.post('/api/auth/tab', { did_oc: 'did:oc:XYZ' }), 400, 'bad_request');
    expectError(await browser.post('/api/auth/tab', { did_oc: `did:oc:${'0'.repeat(32)}` }), 404, 'unknown_did_oc');
    expectError(await browser.post('/api/auth/tab', { did_oc: 7 }), 400, 'bad_request');

    const anonymous = auth.harness.browser(auth.app, 'https://auth.example.com');
    expectError(await anonymous.post('/api/auth/tab', {}), 401, 'not_authenticated');
  });

  it('keeps a tab token working when another tab re-mints the cookie of the same account', async () => {
    const { browser, a } = await twoAccounts();
    const tabA = await browser.post('/api/auth/tab', { did_oc: didOf(a) });
    auth.harness.clock.advance(1000);
    // An unpinned tab switches the browser to A: A's row gets a new token.
    const switched = await browser.switchTo(didOf(a));
    expect(switched.status).toBe(200);
    expect(switched.body.token).not.toBe(tabA.body.token);
    expect((await meAs(browser, pin(tabA))).body.account.did_oc).toBe(didOf(a));
    // A sign-in response token pinned before the re-mint is the row's old token: it is gone.
    expect((await meAs(browser, pin(a))).status).toBe(401);
  });

  it('a pinned tab switches and edits for itself; the cookie stays', async () => {
    const { browser, a, b } = await twoAccounts();
    const cookie = browser.cookie;
    const tabA = await browser.post('/api/auth/tab', { did_oc: didOf(a) });

    const edit = await browser.request('PATCH', '/api/auth/account', { display_name: 'Tab A' }, pin(tabA));
    expect(edit.status).toBe(200);
    expect(edit.setCookies).toEqual([]);
    expect((await meAs(browser, pin(edit))).body.account.display_name).toBe('Tab A');
    // The tab's earlier token still works too: tab tokens are not rotated.
    expect((await meAs(browser, pin(tabA))).status).toBe(200);

    const switched = await browser.request('POST', '/api/auth/switch', { did_oc: didOf(b) }, pin(tabA));
    expect(switched.status).toBe(200);
    expect(switched.body.account.did_oc).toBe(didOf(b));
    expect(switched.setCookies).toEqual([]);
    expect(browser.cookie).toBe(cookie);
    expect((await meAs(browser, pin(switched))).body.account.did_oc).toBe(didOf(b));
    expect((await browser.me()).body.account.did_oc).toBe(didOf(b));
  });

  const claimsOf = (token: string) =>
    JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as Record<string, unknown>;

  it("a re-proof from a pinned tab reaches the cookie and supersedes the row's older tab tokens, so the client re-pins with it", async () => {
    const { browser, walletA, a, b } = await twoAccounts();
    const tabA = await browser.post('/api/auth/tab', { did_oc: didOf(a) });
    const otherTabA = await browser.post('/api/auth/tab', { did_oc: didOf(a) });
    const tabB = await browser.post('/api/auth/tab', { did_oc: didOf(b) });
    const before = await browser.get('/api/auth/revocations');

    const sudo = await browser.request('POST', '/api/auth/sudo', await browser.prove(walletA, 'sudo'), pin(tabA));
    expect(sudo.status, JSON.stringify(sudo.body)).toBe(200);
    // The tab's answer carries the claim, and so does the cookie now, which holds A (docs/protocol.md §3 "Pinned tabs").
    expect(claimsOf(sudo.body.token as string).sudo_at).toEqual(expect.any(Number));
    expect(sudo.setCookies.some((line) => line.startsWith('oc_session='))).toBe(true);
    expect(claimsOf(browser.cookie as string)).toMatchObject({ did_oc: didOf(a), sudo_at: expect.any(Number) });

    // The OrangeCheck provider's refresh(): the stale pin answers 401, so it drops it,
    // reads /me from the cookie, and pins again (POST /api/auth/tab without a did).
    expect((await meAs(browser, pin(tabA))).status).toBe(401);
    expect((await meAs(browser, pin(otherTabA))).status).toBe(401);
    // Only /me says so: the host's other routes still serve the tab as its account, so a tab whose
    // consumer cannot learn of the supersession (no feed, its own me route) is not cut off from the host.
    const identities = await browser.request('GET', '/api/auth/identities', undefined, pin(otherTabA));
    expect(identities.status).toBe(200);
    expect(identities.body.did_oc).toBe(didOf(a));
    expect((await browser.me()).body.account.did_oc).toBe(didOf(a));
    const repinned = await browser.request('POST', '/api/auth/tab');
    expect(repinned.body.account.did_oc).toBe(didOf(a));
    expect(claimsOf(repinned.body.token as string).sudo_at).toEqual(claimsOf(sudo.body.token as string).sudo_at);
    // The token answered to the tab stays valid; a tab pinned to B is untouched and has no sudo_at.
    expect((await meAs(browser, pin(sudo))).body.account.did_oc).toBe(didOf(a));
    expect((await meAs(browser, pin(tabB))).body.account.did_oc).toBe(didOf(b));

    // Consumer sites that poll the revocation feed refuse the superseded tokens, by their own jtis.
    const after = await browser.get('/api/auth/revocations');
    const listed = (after.body.revocations as Array<{ jti: string }>).map((entry) => entry.jti);
    expect(listed).toEqual(expect.arrayContaining([claimsOf(tabA.body.token as string).jti, claimsOf(otherTabA.body.token as string).jti]));
    expect(listed).not.toContain(claimsOf(tabB.body.token as string).jti);
    expect(listed).not.toContain(claimsOf(sudo.body.token as string).jti);
    expect((before.body.revocations as unknown[]).length).toBe(0);
    // Tab tokens have jtis of their own; the row's (the cookie's) is not revoked.
    expect(claimsOf(tabA.body.token as string).jti).not.toBe(claimsOf(browser.cookie as string).jti);
    expect(listed).not.toContain(claimsOf(browser.cookie as string).jti);
  });

  it("a re-proof from a pinned tab without this browser's roster binding stays with the tab, as before", async () => {
    const { browser, walletA, a } = await twoAccounts();
    const cookie = browser.cookie;
    const tabA = await browser.post('/api/auth/tab', { did_oc: didOf(a) });
    // The pin alone, as a consumer's server or another browser would present it.
    const elsewhere = auth.harness.browser(auth.app, 'https://auth.example.com');
    const sudo = await elsewhere.request('POST', '/api/auth/sudo', await elsewhere.prove(walletA, 'sudo'), pin(tabA));
    expect(sudo.status, JSON.stringify(sudo.body)).toBe(200);
    expect(sudo.setCookies).toEqual([]);
    expect(claimsOf(sudo.body.token as string).sudo_at).toEqual(expect.any(Number));
    expect((await meAs(browser, pin(tabA))).status).toBe(200);
    expect(browser.cookie).toBe(cookie);
  });

  it('a pinned tab signs its own account out; the cookie moves only when it held that account', async () => {
    const { browser, a, b } = await twoAccounts();
    const tabA = await browser.post('/api/auth/tab', { did_oc: didOf(a) });
    const out = await browser.request('POST', '/api/auth/logout?scope=current', {}, pin(tabA));
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ ok: true, scope: 'current', switched_to: { did_oc: didOf(b) } });
    expect(out.setCookies).toEqual([]);
    expect((await meAs(browser, pin(tabA))).status).toBe(401);
    expect((await meAs(browser, pin(out))).body.account.did_oc).toBe(didOf(b));
    expect((await browser.me()).body.account.did_oc).toBe(didOf(b));

    // The cookie's own account, signed out from a pinned tab: the cookie goes too.
    const tabB = await browser.post('/api/auth/tab', {});
    const last = await browser.request('POST', '/api/auth/logout?scope=current', {}, pin(tabB));
    expect(last.body).toMatchObject({ ok: true, switched_to: null });
    expect(browser.cookie).toBeUndefined();
    expect((await meAs(browser, pin(out))).status).toBe(401);
  });

  it("moves the cookie to the next account when a pinned tab signs out the cookie's account", async () => {
    const { browser, a, b } = await twoAccounts();
    const tabB = await browser.post('/api/auth/tab', { did_oc: didOf(b) });
    const out = await browser.request('POST', '/api/auth/logout?scope=current', {}, pin(tabB));
    expect(out.body.switched_to).toEqual({ did_oc: didOf(a) });
    expect(out.setCookies.some((line) => line.startsWith('oc_session='))).toBe(true);
    expect((await browser.me()).body.account.did_oc).toBe(didOf(a));

    // A header-only client (no cookie) signing out is given no cookie.
    const again = await browser.signIn(newWallet(), { add: true });
    const headerOnly = await auth.app.inject({
      method: 'POST',
      url: '/api/auth/logout?scope=current',
      headers: { ...pin(again), origin: 'https://auth.example.com' },
    });
    expect(headerOnly.json()).toMatchObject({ ok: true, switched_to: { did_oc: didOf(a) } });
    expect(headerOnly.headers['set-cookie']).toBeUndefined();
  });

  it('ends every tab token with its session, and keeps a bounded number per session', async () => {
    const { browser } = await twoAccounts();
    const tokens: Reply[] = [];
    for (let i = 0; i < 33; i += 1) {
      auth.harness.clock.advance(1000);
      tokens.push(await browser.post('/api/auth/tab', {}));
    }
    expect(new Set(tokens.map((reply) => reply.body.token)).size).toBe(33);
    expect((await meAs(browser, pin(tokens[0] as Reply))).status).toBe(401);
    expect((await meAs(browser, pin(tokens[1] as Reply))).status).toBe(200);
    expect((await meAs(browser, pin(tokens[32] as Reply))).status).toBe(200);

    expect((await browser.logout('all')).status).toBe(200);
    expect((await meAs(browser, pin(tokens[32] as Reply))).status).toBe(401);
  });

  it('allows the header in the preflight of the browser routes', async () => {
    const preflight = await auth.app.inject({
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
