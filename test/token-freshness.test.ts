/**
 * A token never carries more freshness than it was minted with
 * (docs/protocol.md §3 "Freshness"), played as the attacker who holds a tab
 * token: one minted before the owner stepped up, one superseded since, and
 * one whose step-up was made away from the browser. And the revocation feed
 * keeps a superseded token until its own expiry, however many were minted
 * since. On every engine.
 */
import { expect, it } from 'vitest';
import { newWallet, type Reply, type Wallet } from './support/auth-client.js';
import { expectError, forEachEngine, useAuthSuite, type TimedBrowser } from './support/auth-harness.js';
import { DAY, MINUTE } from './support/clock.js';

function freshnessSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  async function signedIn(wallet: Wallet): Promise<{ browser: TimedBrowser; did: string }> {
    const browser = auth.harness.browser(auth.app);
    const reply = await browser.signIn(wallet);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { browser, did: reply.body.account.did_oc as string };
  }

  /** A request with a tab token alone, as from a machine that holds no cookie of the browser. */
  function withTab(token: string, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>): Promise<Reply> {
    return auth.harness
      .browser(auth.app)
      .request(method, url, payload ?? (method === 'GET' ? undefined : {}), { 'x-oc-tab-session': token });
  }

  async function mintTab(browser: TimedBrowser): Promise<string> {
    const reply = await browser.post('/api/auth/tab', {});
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body.token as string;
  }

  function jtiOf(token: string): string {
    return JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).jti;
  }

  /** Every jti the revocation feed lists now, read from its start as a consumer started afresh would. */
  async function feedJtis(): Promise<string[]> {
    // The feed answers are cached a second per cursor.
    auth.harness.clock.advance(2000);
    const jtis: string[] = [];
    let url = '/api/auth/revocations';
    for (;;) {
      const feed = await auth.app.inject({ method: 'GET', url });
      expect(feed.statusCode).toBe(200);
      const body = feed.json() as { revocations: Array<{ jti: string }>; cursor: string; more: boolean };
      jtis.push(...body.revocations.map((entry) => entry.jti));
      if (!body.more) return jtis;
      url = `/api/auth/revocations?since=${encodeURIComponent(body.cursor)}`;
    }
  }

  it("a tab token minted before the owner's step-up gains none of it: no export, no deletion, no signing devices out", async () => {
    const wallet = newWallet();
    const { browser, did } = await signedIn(wallet);
    const stolen = await mintTab(browser);
    // The owner steps up in the browser (the cookie).
    expect((await browser.post('/api/auth/sudo', await browser.prove(wallet, 'sudo'))).status).toBe(200);
    expect((await browser.get('/api/auth/account/export')).status).toBe(200);

    // The tab token still reads as the account, but passes no step-up gate.
    expect((await withTab(stolen, 'GET', '/api/auth/me')).status).toBe(200);
    expectError(await withTab(stolen, 'GET', '/api/auth/account/export'), 401, 'sudo_required');
    expectError(await withTab(stolen, 'POST', '/api/auth/sessions/revoke-others'), 401, 'sudo_required');
    expectError(await withTab(stolen, 'DELETE', '/api/auth/account', { confirm: did }), 401, 'sudo_required');
    // A token it mints carries no more than it does.
    const minted = await withTab(stolen, 'POST', '/api/auth/tab', {});
    expect(minted.status).toBe(200);
    expectError(await withTab(minted.body.token as string, 'GET', '/api/auth/account/export'), 401, 'sudo_required');
    // The account is intact, and its owner's cookie still carries the step-up.
    expect((await browser.me()).body.account.did_oc).toBe(did);
    expect((await browser.get('/api/auth/account/export')).status).toBe(200);
  });

  it('a tab token minted after the step-up carries it, and loses it with the window like the cookie', async () => {
    const wallet = newWallet();
    const { browser } = await signedIn(wallet);
    expect((await browser.post('/api/auth/sudo', await browser.prove(wallet, 'sudo'))).status).toBe(200);
    const tab = await mintTab(browser);
    expect((await withTab(tab, 'GET', '/api/auth/account/export')).status).toBe(200);
    auth.harness.clock.advance(5 * MINUTE);
    expectError(await withTab(tab, 'GET', '/api/auth/account/export'), 401, 'sudo_required');
  });

  it("a step-up made with a tab token away from the browser stays with the new tab token: the browser's cookie gains nothing", async () => {
    const wallet = newWallet();
    const { browser, did } = await signedIn(wallet);
    const tab = await mintTab(browser);
    // A server holding the tab token (no cookie, no roster binding) proves the wallet.
    const proof = await browser.prove(wallet, 'sudo');
    const stepped = await withTab(tab, 'POST', '/api/auth/sudo', proof);
    expect(stepped.status, JSON.stringify(stepped.body)).toBe(200);
    const fresh = stepped.body.token as string;
    expect((await withTab(fresh, 'GET', '/api/auth/account/export')).status).toBe(200);
    // The old tab token and the browser's cookie were minted without it.
    expectError(await withTab(tab, 'GET', '/api/auth/account/export'), 401, 'sudo_required');
    expectError(await browser.get('/api/auth/account/export'), 401, 'sudo_required');
    expectError(await browser.request('DELETE', '/api/auth/account', { confirm: did }), 401, 'sudo_required');
  });

  it('a superseded tab token changes nothing: it mints no token, makes no app or key, signs nothing out, deletes nothing', async () => {
    const wallet = newWallet();
    const { browser, did } = await signedIn(wallet);
    const stale = await mintTab(browser);
    const pinned = await mintTab(browser);
    // A step-up from a pinned tab of this browser supersedes the row's other tab tokens (docs/protocol.md §3 "Pinned tabs").
    const stepped = await browser.request('POST', '/api/auth/sudo', await browser.prove(wallet, 'sudo'), { 'x-oc-tab-session': pinned });
    expect(stepped.status, JSON.stringify(stepped.body)).toBe(200);
    expect((await withTab(stale, 'GET', '/api/auth/me')).status).toBe(401);

    // Within the owner's step-up window, the superseded token still gets nothing.
    expectError(await withTab(stale, 'POST', '/api/auth/tab', {}), 401, 'not_authenticated');
    expectError(await withTab(stale, 'POST', '/api/connect/apps', { name: 'Takeover' }), 401, 'not_authenticated');
    expectError(await withTab(stale, 'POST', '/api/auth/sessions/revoke-others'), 401, 'not_authenticated');
    expectError(await withTab(stale, 'DELETE', '/api/auth/account', { confirm: did }), 401, 'not_authenticated');
    expectError(await withTab(stale, 'GET', '/api/auth/account/export'), 401, 'sudo_required');
    expect((await browser.get('/api/connect/apps')).body.apps).toEqual([]);
    expect((await browser.me()).body.account.did_oc).toBe(did);
  });

  it('a tab token superseded by newer ones stays in the revocation feed until its own expiry, however many are minted since', async () => {
    const { browser } = await signedIn(newWallet());
    const first = await mintTab(browser);
    // 32 live tokens at most (docs/protocol.md §3): the 33rd supersedes the first, and 64 more pass it by.
    for (let index = 0; index < 96; index += 1) {
      await mintTab(browser);
      // Distinct tokens need distinct seconds (a JWT's iat).
      auth.harness.clock.advance(1000);
    }
    expect((await withTab(first, 'GET', '/api/auth/me')).status).toBe(401);
    expect(await feedJtis()).toContain(jtiOf(first));
    // Once the token would have expired anyway, the feed lets it go.
    auth.harness.clock.advance(30 * DAY);
    expect(await feedJtis()).not.toContain(jtiOf(first));
  });
}

await forEachEngine('token freshness', freshnessSuite);
