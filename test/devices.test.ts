/**
 * Where an account is signed in (docs/protocol.md §3 "Devices"): the device
 * list across browsers with coarse device and network facts, signing one
 * other device out or all others after a step-up, and this browser's own
 * session as a logout, on every engine.
 */
import { describe, expect, it } from 'vitest';
import { newWallet, type Wallet } from './support/auth-client.js';
import { expectError, forEachEngine, rosterDidsOf, useAuthSuite, type TimedBrowser } from './support/auth-harness.js';
import { MINUTE } from './support/clock.js';

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const LINUX_FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';

function devicesSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  function browser(userAgent?: string, remoteAddress?: string): TimedBrowser {
    const client = auth.harness.browser(auth.app);
    client.userAgent = userAgent;
    client.remoteAddress = remoteAddress;
    return client;
  }

  async function signIn(client: TimedBrowser, wallet: Wallet, add = false): Promise<string> {
    const reply = await client.signIn(wallet, { add });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body.account.did_oc;
  }

  async function sudo(client: TimedBrowser, wallet: Wallet): Promise<void> {
    expect((await client.post('/api/auth/sudo', await client.prove(wallet, 'sudo'))).status).toBe(200);
  }

  it('lists every live session of the account, this browser first, with a device label and a coarse network only', async () => {
    const wallet = newWallet();
    const phone = browser(IPHONE, '203.0.113.57');
    await signIn(phone, wallet);
    auth.harness.clock.advance(MINUTE);
    const laptop = browser(LINUX_FIREFOX, '2001:db8:1:2:3:4:5:6');
    await signIn(laptop, wallet);
    const bare = browser(undefined, '::ffff:198.51.100.9');
    await signIn(bare, wallet);
    // Another account on the laptop is not listed.
    await signIn(laptop, newWallet(), true);

    const reply = await phone.get('/api/auth/sessions');
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.headers['cache-control']).toBe('no-store, private');
    const sessions = reply.body.sessions as Array<Record<string, unknown>>;
    expect(sessions).toHaveLength(3);
    expect(sessions[0]).toMatchObject({
      current: true,
      device: 'Safari 18 on iOS (mobile)',
      network: '203.0.113.0/24',
      signing_method: 'bip322',
    });
    expect(sessions.slice(1).map((session) => session.current)).toEqual([false, false]);
    expect(sessions.map((session) => session.network).sort()).toEqual(['198.51.100.0/24', '2001:db8:1::/48', '203.0.113.0/24']);
    expect(sessions.find((session) => session.network === '2001:db8:1::/48')?.device).toBe('Firefox 140 on Linux');
    expect(sessions.find((session) => session.network === '198.51.100.0/24')?.device).toBeNull();
    // Never a full address.
    expect(JSON.stringify(reply.body)).not.toMatch(/203\.0\.113\.57|198\.51\.100\.9|2001:db8:1:2/);
    expectError(await browser().get('/api/auth/sessions'), 401, 'not_authenticated');
  });

  it('signs another device out only after a step-up; that browser keeps its other accounts', async () => {
    const wallet = newWallet();
    const phone = browser(IPHONE, '203.0.113.5');
    await signIn(phone, wallet);
    const laptop = browser(LINUX_FIREFOX, '198.51.100.5');
    const did = await signIn(laptop, wallet);
    const otherDid = await signIn(laptop, newWallet(), true);
    expect((await laptop.post('/api/auth/switch', { did_oc: did })).status).toBe(200);

    const listed = (await phone.get('/api/auth/sessions')).body.sessions as Array<{ id: string; current: boolean }>;
    const laptopId = listed.find((session) => !session.current)?.id as string;
    expectError(await phone.request('DELETE', `/api/auth/sessions/${laptopId}`), 401, 'sudo_required');
    await sudo(phone, wallet);
    const revoked = await phone.request('DELETE', `/api/auth/sessions/${laptopId}`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(revoked.body).toEqual({ ok: true, current: false });
    expectError(await phone.request('DELETE', `/api/auth/sessions/${laptopId}`), 404, 'not_found');

    // The laptop's roster lost this account only: the next request there is signed out of it,
    // and the other account of that browser is still a switch away.
    expectError(await laptop.me(), 401, 'not_authenticated');
    expect((await phone.me()).status).toBe(200);
    const otherRows = await auth.harness.liveRows((await auth.harness.store.findAccount(otherDid.slice('did:oc:'.length)))!.id);
    expect(otherRows).toHaveLength(1);
  });

  it('signs every other device out after a step-up, and refuses sessions of other accounts and bad ids', async () => {
    const wallet = newWallet();
    const here = browser(LINUX_FIREFOX, '198.51.100.7');
    await signIn(here, wallet);
    const others = [browser(IPHONE, '203.0.113.8'), browser(undefined, '203.0.113.9')];
    for (const other of others) await signIn(other, wallet);
    const stranger = browser();
    await signIn(stranger, newWallet());
    const strangerId = ((await stranger.get('/api/auth/sessions')).body.sessions as Array<{ id: string }>)[0]?.id as string;

    expectError(await here.post('/api/auth/sessions/revoke-others'), 401, 'sudo_required');
    await sudo(here, wallet);
    expectError(await here.request('DELETE', `/api/auth/sessions/${strangerId}`), 404, 'not_found');
    expectError(await here.request('DELETE', '/api/auth/sessions/not-hex'), 400, 'bad_request');
    const reply = await here.post('/api/auth/sessions/revoke-others');
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toEqual({ ok: true, revoked: 2 });
    for (const other of others) expectError(await other.me(), 401, 'not_authenticated');
    expect((await here.get('/api/auth/sessions')).body.sessions).toHaveLength(1);
    expect((await stranger.me()).status).toBe(200);
    // The step-up expires: later, signing others out asks again.
    auth.harness.clock.advance(5 * MINUTE);
    expectError(await here.post('/api/auth/sessions/revoke-others'), 401, 'sudo_required');
  });

  /** The `jti` a token carries: a tab token carries its row's (docs/protocol.md §3). */
  function jtiOf(token: string): string {
    return JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).jti;
  }

  /** GET /api/auth/me with only a tab token, as from any machine: the status. */
  async function statusWithTab(token: string): Promise<number> {
    return (await auth.app.inject({ method: 'GET', url: '/api/auth/me', headers: { 'x-oc-tab-session': token } })).statusCode;
  }

  async function revokedJtis(): Promise<string[]> {
    const feed = await auth.app.inject({ method: 'GET', url: '/api/auth/revocations' });
    expect(feed.statusCode).toBe(200);
    return (feed.json().revocations as Array<{ jti: string }>).map((entry) => entry.jti);
  }

  /** Browser X holding accounts A and B, with a tab token minted there for each, as any family site may (docs/protocol.md §3). */
  async function browserWithTabs(walletA: Wallet, walletB: Wallet) {
    const x = browser(LINUX_FIREFOX, '198.51.100.5');
    const didA = await signIn(x, walletA);
    const didB = await signIn(x, walletB, true);
    const tabA = (await x.post('/api/auth/tab', { did_oc: didA })).body.token as string;
    const tabB = (await x.post('/api/auth/tab', { did_oc: didB })).body.token as string;
    expect([await statusWithTab(tabA), await statusWithTab(tabB)]).toEqual([200, 200]);
    return { x, didA, didB, tabA, tabB };
  }

  it('signing a browser out from another one ends the tab tokens of its rows, and the feed lists the rows and the tab tokens', async () => {
    const walletA = newWallet();
    const walletB = newWallet();
    const { x, didA, didB, tabA, tabB } = await browserWithTabs(walletA, walletB);
    const y = browser(IPHONE, '203.0.113.5');
    await signIn(y, walletA);
    await signIn(y, walletB, true);

    // As A in Y: sign X out of A ("Sign out" on one device).
    expect((await y.switchTo(didA)).status).toBe(200);
    await sudo(y, walletA);
    const rowA = ((await y.get('/api/auth/sessions')).body.sessions as Array<{ id: string; current: boolean }>).find((row) => !row.current)
      ?.id as string;
    // A tab token has a jti of its own (docs/protocol.md §3 "Pinned tabs").
    expect(jtiOf(tabA)).not.toBe(rowA);
    expect((await y.request('DELETE', `/api/auth/sessions/${rowA}`)).status).toBe(200);
    expect(await statusWithTab(tabA)).toBe(401);
    expect(await statusWithTab(tabB)).toBe(200);

    // As B in Y: sign every other browser out ("Sign out everywhere else").
    expect((await y.switchTo(didB)).status).toBe(200);
    await sudo(y, walletB);
    expect((await y.post('/api/auth/sessions/revoke-others')).body).toEqual({ ok: true, revoked: 1 });
    expect(await statusWithTab(tabB)).toBe(401);
    expectError(await x.me(), 401, 'not_authenticated');
    expect(await revokedJtis()).toEqual(expect.arrayContaining([rowA, jtiOf(tabA), jtiOf(tabB)]));
  });

  it('signing a browser out (scope=all) ends the tab tokens of every account of its roster', async () => {
    const { x, tabA, tabB } = await browserWithTabs(newWallet(), newWallet());
    expect((await x.logout('all')).status).toBe(200);
    expect([await statusWithTab(tabA), await statusWithTab(tabB)]).toEqual([401, 401]);
    expect(await revokedJtis()).toEqual(expect.arrayContaining([jtiOf(tabA), jtiOf(tabB)]));
  });

  it("this browser's own session needs no step-up: it is a logout of this account", async () => {
    const client = browser(LINUX_FIREFOX);
    await signIn(client, newWallet());
    const second = await signIn(client, newWallet(), true);
    const mine = ((await client.get('/api/auth/sessions')).body.sessions as Array<{ id: string; current: boolean }>)[0];
    expect(mine?.current).toBe(true);
    const reply = await client.request('DELETE', `/api/auth/sessions/${mine?.id}`);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body).toMatchObject({ ok: true, current: true, switched_to: { did_oc: expect.any(String) } });
    expect(reply.body.switched_to.did_oc).not.toBe(second);
    expect(rosterDidsOf(await client.me())).toEqual([]);
  });
}

await forEachEngine('devices', devicesSuite);

describe('device facts', () => {
  it('labels browsers coarsely and keeps only a /24 or /48 of the address', async () => {
    const { coarseNetwork, deviceLabel } = await import('../src/identity/session/device.js');
    expect(deviceLabel(IPHONE)).toBe('Safari 18 on iOS (mobile)');
    expect(deviceLabel(LINUX_FIREFOX)).toBe('Firefox 140 on Linux');
    expect(
      deviceLabel('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36'),
    ).toBe('Chrome 156 on Windows');
    expect(deviceLabel('')).toBeNull();
    expect(deviceLabel(undefined)).toBeNull();
    expect(deviceLabel('x'.repeat(5000))).toBeNull();
    expect(deviceLabel('<script>alert(1)</script>') ?? '').not.toMatch(/[<>()]/);
    expect(coarseNetwork('203.0.113.57')).toBe('203.0.113.0/24');
    expect(coarseNetwork('::ffff:198.51.100.9')).toBe('198.51.100.0/24');
    expect(coarseNetwork('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1::/48');
    expect(coarseNetwork('2001:db8::1')).toBe('2001:db8::/48');
    expect(coarseNetwork('::1')).toBe('::/48');
    expect(coarseNetwork('fe80::1%eth0')).toBe('fe80::/48');
    expect(coarseNetwork('not an address')).toBeNull();
    expect(coarseNetwork(undefined)).toBeNull();
  });

  it('says a label in each language, and a label of another shape as it is', async () => {
    const { localDeviceLabel } = await import('../src/identity/session/device.js');
    expect(localDeviceLabel('Safari 18 on iOS (mobile)', 'en')).toBe('Safari 18 on iOS (phone)');
    expect(localDeviceLabel('Safari 18 on iOS (mobile)', 'de')).toBe('Safari 18 unter iOS (Smartphone)');
    expect(localDeviceLabel('Firefox 140 on Linux', 'fr')).toBe('Firefox 140 sur Linux');
    expect(localDeviceLabel('Chrome 156 on Android (tablet)', 'es')).toBe('Chrome 156 en Android (tableta)');
    expect(localDeviceLabel('A browser on Linux', 'de')).toBe('Ein Browser unter Linux');
    expect(localDeviceLabel('Chrome 156', 'fr')).toBe('Chrome 156');
    expect(localDeviceLabel('', 'de')).toBe('');
  });
});
