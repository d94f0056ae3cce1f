/**
 * Leaving and the operator's hold (docs/protocol.md §6 "Export", §2
 * "Disabling and deleting") through HTTP on every engine: the export after a
 * re-proof holds everything and no secret; deletion after a re-proof and an
 * explicit confirmation revokes every session (other rosters lose the
 * account, the revocation feed lists it), frees the identities, keeps a
 * tombstone; a disabled account cannot sign in or be switched to.
 */
import { expect, it } from 'vitest';
import { newWallet, type Wallet } from './support/auth-client.js';
import { expectError, addDeskKey, forEachEngine, rosterDidsOf, useMailingAuthSuite, type TimedBrowser } from './support/auth-harness.js';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';

function lifecycleSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useMailingAuthSuite(engine);

  async function signedIn(wallet: Wallet, client: TimedBrowser = auth.harness.browser(auth.app), add = false): Promise<TimedBrowser> {
    client.userAgent = FIREFOX;
    client.remoteAddress = '198.51.100.77';
    const reply = await client.signIn(wallet, { add });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return client;
  }

  async function sudo(client: TimedBrowser, wallet: Wallet): Promise<void> {
    expect((await client.post('/api/auth/sudo', await client.prove(wallet, 'sudo'))).status).toBe(200);
  }

  async function didOf(client: TimedBrowser): Promise<string> {
    return (await client.me()).body.account.did_oc as string;
  }

  it('exports everything stored about the account after a re-proof, and no token hash, key hash or API key', async () => {
    const wallet = newWallet();
    const client = await signedIn(wallet);
    expectError(await client.get('/api/auth/account/export'), 401, 'sudo_required');
    await sudo(client, wallet);
    const email = `export-${engine}@example.org`;
    const started = await client.post('/api/auth/email-otp/start', { email });
    const code = await auth.mailbox.nextCode(email);
    expect((await client.post('/api/auth/link/email', { email, code, token: started.body.token })).status).toBe(200);
    const { added } = await addDeskKey(client);
    const shop = await client.post('/api/connect/apps', { name: 'Shop' });
    expect(shop.status).toBe(200);
    await signedIn(wallet); // a second browser

    const reply = await client.get('/api/auth/account/export');
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.headers['content-disposition']).toMatch(/^attachment; filename="account-[0-9a-f]{12}-\d{4}-\d{2}-\d{2}\.json"$/);
    expect(reply.headers['cache-control']).toContain('no-store');
    const document = reply.body;
    expect(document.format).toBe('oc-host.account-export.v1');
    expect(document.account.did_oc).toBe(await didOf(client));
    expect(document.identities.map((identity: { kind: string; value: string }) => `${identity.kind}:${identity.value}`).sort()).toEqual(
      [`btc:${wallet.address}`, `email:${email}`].sort(),
    );
    expect(document.sessions).toHaveLength(2);
    expect(document.sessions.filter((row: { current: boolean }) => row.current)).toHaveLength(1);
    expect(document.sessions[0]).toMatchObject({ device: 'Firefox 140 on Linux', network: '198.51.100.0/24', signing_method: 'bip322' });
    expect(document.keys).toEqual([
      expect.objectContaining({ id: added.body.credential.id, label: 'Desk key', public_key: expect.any(String) }),
    ]);
    expect(document.connect_apps).toEqual([expect.objectContaining({ id: shop.body.app.id, name: 'Shop' })]);
    expect(document.activity.map((event: { kind: string }) => event.kind)).toContain('identity_linked');

    const text = JSON.stringify(document);
    const rows = await auth.harness.sessionRows(document.account.did_oc.slice('did:oc:'.length));
    for (const row of rows) expect(text).not.toContain(row.token_hash);
    for (const secret of [shop.body.api_key, code, started.body.token, client.cookie as string, '198.51.100.77'])
      expect(text).not.toContain(secret);
    expect(text).not.toContain('key_hash');
    expect(text).not.toContain('user_handle');
    expect((await client.get('/api/auth/activity?limit=1')).body.events[0].kind).toBe('account_exported');
  });

  it('deletes the account after a re-proof and the typed did: every session ends, other rosters lose it, identities are free, a tombstone stays', async () => {
    const wallet = newWallet();
    const client = await signedIn(wallet);
    const did = await didOf(client);
    const accountId = did.slice('did:oc:'.length);
    // Another browser holds the account next to a second one.
    const otherWallet = newWallet();
    const elsewhere = await signedIn(otherWallet);
    await signedIn(wallet, elsewhere, true);
    const otherDid = (await auth.harness.store.findAccountByIdentity('btc', otherWallet.address))!.id;
    // There the other account is active: a browser whose active session is revoked is signed out (its token is dead).
    expect((await elsewhere.post('/api/auth/switch', { did_oc: `did:oc:${otherDid}` })).status).toBe(200);
    // This browser holds a second account too, to move on to.
    const secondWallet = newWallet();
    await signedIn(secondWallet, client, true);
    expect((await client.post('/api/auth/switch', { did_oc: did })).status).toBe(200);
    const cookie = client.cookie as string;

    expectError(await client.request('DELETE', '/api/auth/account', { confirm: did }), 401, 'sudo_required');
    await sudo(client, wallet);
    expectError(await client.request('DELETE', '/api/auth/account', { confirm: 'did:oc:0000' }), 400, 'confirmation_mismatch');
    expectError(await client.request('DELETE', '/api/auth/account', {}), 400, 'bad_request');
    const reply = await client.request('DELETE', '/api/auth/account', { confirm: did });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.deleted).toEqual({ did_oc: did, identities: 1, sessions: 2, keys: 0, connect_apps: 0 });
    expect(reply.body.switched_to.did_oc).not.toBe(did);
    expect(await didOf(client)).toBe(reply.body.switched_to.did_oc);

    // The old token is dead on the host and in the revocation feed.
    const stale = auth.harness.browser(auth.app);
    stale.cookie = cookie;
    expectError(await stale.me(), 401, 'not_authenticated');
    const feed = await auth.harness.browser(auth.app).get('/api/auth/revocations');
    expect(feed.body.revocations.map((entry: { jti: string }) => entry.jti)).toEqual(
      expect.arrayContaining((await auth.harness.sessionRows(accountId)).map((row) => row.jti)),
    );
    // The other browser lost it and kept its own account.
    const me = await elsewhere.me();
    expect(me.status).toBe(200);
    expect([me.body.account.did_oc, ...rosterDidsOf(me)]).toEqual([`did:oc:${otherDid}`]);
    expectError(await elsewhere.post('/api/auth/switch', { did_oc: did }), 404, 'unknown_did_oc');

    // The tombstone: no identity, no name, the deletion recorded, the rows forget the browser.
    const tombstone = await auth.harness.store.findAccount(accountId);
    expect(tombstone).toMatchObject({ deleted_at: auth.harness.clock.ms, display_name: null, primary_btc: null });
    expect(await auth.harness.store.listIdentities(accountId)).toEqual([]);
    const events = await auth.harness.store.listActivity(accountId, { limit: 10 });
    expect(events.map((event) => [event.kind, event.detail])).toEqual([
      ['account_deleted', { by: 'self', identities: 1, sessions: 2, keys: 0, connect_apps: 0, merged_accounts: 0 }],
    ]);
    expect((await auth.harness.sessionRows(accountId)).every((row) => (row as unknown as { device: unknown }).device === null)).toBe(true);

    // The address is free: signing in with it makes a new account.
    const again = await signedIn(wallet, auth.harness.browser(auth.app));
    expect(await didOf(again)).not.toBe(did);
    // And a deleted account cannot be deleted twice or exported.
    expectError(await stale.request('DELETE', '/api/auth/account', { confirm: did }), 401, 'not_authenticated');
  });

  it('a disabled account cannot sign in or be switched to, loses its sessions, and signs in again once enabled', async () => {
    const wallet = newWallet();
    const client = await signedIn(wallet);
    const did = await didOf(client);
    const accountId = did.slice('did:oc:'.length);
    const roster = await signedIn(newWallet());
    await signedIn(wallet, roster, true);
    const other = rosterDidsOf(await roster.me())[0]!;
    expect((await roster.post('/api/auth/switch', { did_oc: other })).status).toBe(200);

    const result = await auth.harness.store.setAccountDisabled(accountId, true, auth.harness.clock.ms);
    expect(result).toMatchObject({ changed: true, revoked_sessions: 2 });
    expect(await auth.harness.store.setAccountDisabled(accountId, true, auth.harness.clock.ms)).toMatchObject({ changed: false });
    expectError(await client.me(), 401, 'not_authenticated');
    expectError(await auth.harness.browser(auth.app).signIn(wallet), 403, 'account_disabled');
    expectError(await roster.post('/api/auth/switch', { did_oc: did }), 403, 'account_disabled');

    expect(await auth.harness.store.setAccountDisabled(accountId, false, auth.harness.clock.ms)).toMatchObject({
      changed: true,
      revoked_sessions: 0,
    });
    const back = await signedIn(wallet, auth.harness.browser(auth.app));
    expect(await didOf(back)).toBe(did);
  });
}

await forEachEngine('account export, deletion and disabling', lifecycleSuite);
