/**
 * The account's security events (docs/protocol.md §6 "Activity") through
 * HTTP on every engine: each kind is recorded by the action it describes,
 * pages run newest first, and no event holds a secret, a code, a token or a
 * full IP address. E-mail codes come from a real SMTP server on loopback.
 */
import { expect, it } from 'vitest';
import { newWallet, type Wallet } from './support/auth-client.js';
import { expectError, addDeskKey, forEachEngine, stepUpWithKey, useMailingAuthSuite, type TimedBrowser } from './support/auth-harness.js';
import { MINUTE } from './support/clock.js';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';

interface Event {
  readonly id: string;
  readonly at: string;
  readonly kind: string;
  readonly detail: Record<string, unknown>;
}

function activitySuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useMailingAuthSuite(engine);

  async function signedIn(wallet: Wallet = newWallet()): Promise<TimedBrowser> {
    const client = auth.harness.browser(auth.app);
    client.userAgent = FIREFOX;
    client.remoteAddress = '198.51.100.77';
    expect((await client.signIn(wallet)).status).toBe(200);
    return client;
  }

  async function events(client: TimedBrowser): Promise<Event[]> {
    const reply = await client.get('/api/auth/activity?limit=100');
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body.events;
  }

  it('records a sign-in with its method, device and coarse network', async () => {
    const client = await signedIn();
    const [signin] = await events(client);
    expect(signin).toMatchObject({
      kind: 'signin',
      detail: { method: 'bip322', device: 'Firefox 140 on Linux', network: '198.51.100.0/24', added: false },
    });
    expect(new Date(signin!.at).getTime()).toBe(auth.harness.clock.ms);
  });

  it('records step-ups that failed and succeeded, links, unlinks, merges and edits, and never a code, token, signature or address of the client', async () => {
    const wallet = newWallet();
    const client = await signedIn(wallet);
    const email = `activity-${engine}@example.org`;
    // A wrong code is a failed step-up (the e-mail is not linked yet: identity_not_linked).
    expectError(await client.post('/api/auth/sudo', { email, code: '000000' }), 401, 'identity_not_linked');
    const proof = await client.prove(wallet, 'sudo');
    expect((await client.post('/api/auth/sudo', proof)).status).toBe(200);
    const started = await client.post('/api/auth/email-otp/start', { email });
    const code = await auth.mailbox.nextCode(email);
    expect((await client.post('/api/auth/link/email', { email, code, token: started.body.token })).status).toBe(200);
    expect((await client.request('PATCH', '/api/auth/account', { display_name: 'Ada' })).status).toBe(200);

    // Another account's address, transferred: a merge on both accounts.
    const otherWallet = newWallet();
    const other = await signedIn(otherWallet);
    const otherDid = (await other.me()).body.account.did_oc as string;
    const transfer = await client.prove(otherWallet, 'link');
    expect((await client.post('/api/auth/link/btc', { ...transfer, confirm_transfer: true })).status).toBe(200);
    const identities = (await client.get('/api/auth/identities')).body.identities as Array<{ id: string; value: string }>;
    const emailId = identities.find((identity) => identity.value === email)?.id;
    expect((await client.request('DELETE', `/api/auth/identities?id=${emailId}`)).status).toBe(200);

    const kinds = (await events(client)).map((event) => `${event.kind}:${JSON.stringify(event.detail)}`);
    expect(kinds).toEqual([
      `identity_unlinked:${JSON.stringify({ kind: 'email', value: email })}`,
      `identity_linked:${JSON.stringify({ kind: 'btc', value: otherWallet.address })}`,
      `account_merged:${JSON.stringify({
        merged_from: otherDid,
        identities: [`btc:${otherWallet.address}`],
        apps: [],
        removed_identities: [],
        removed_keys: [],
        removed_apps: [],
      })}`,
      `account_edited:${JSON.stringify({ fields: ['display_name'] })}`,
      `identity_linked:${JSON.stringify({ kind: 'email', value: email })}`,
      `sudo:${JSON.stringify({ method: 'bip322' })}`,
      `sudo_failed:${JSON.stringify({ method: 'email_otp', reason: 'identity_not_linked' })}`,
      expect.stringMatching(/^signin:/),
    ]);
    const merged = await auth.harness.store.listActivity(otherDid.slice('did:oc:'.length), { limit: 10 });
    expect(merged.map((event) => event.kind)).toEqual(['account_merged', 'signin']);
    expect(merged[0]?.detail).toEqual({ merged_into: (await client.me()).body.account.did_oc });

    const all = JSON.stringify(await events(client));
    for (const secret of [code, started.body.token, proof.signature, transfer.signature, '198.51.100.77', client.cookie as string])
      expect(all).not.toContain(secret);
  });

  it('records keys added, used and removed, failed key step-ups, devices signed out and Connect apps', async () => {
    const wallet = newWallet();
    const client = await signedIn(wallet);
    expect((await client.post('/api/auth/sudo', await client.prove(wallet, 'sudo'))).status).toBe(200);
    const { key, added } = await addDeskKey(client);
    expectError(await stepUpWithKey(client, key, { origin: 'https://evil.example' }), 400, 'webauthn_origin_mismatch');
    expect((await stepUpWithKey(client, key)).status).toBe(200);
    expect((await client.request('DELETE', `/api/auth/webauthn/credentials/${added.body.credential.id}`)).status).toBe(200);
    await signedIn(wallet);
    expect((await client.post('/api/auth/sessions/revoke-others')).status).toBe(200);
    const app1 = await client.post('/api/connect/apps', { name: 'Shop' });
    expect((await client.post(`/api/connect/apps/${app1.body.app.id}/rotate`)).status).toBe(200);
    expect((await client.request('DELETE', `/api/connect/apps/${app1.body.app.id}`)).status).toBe(200);

    const list = (await events(client)).map((event) => [event.kind, event.detail]);
    expect(list.slice(0, 9)).toEqual([
      ['connect_app_deleted', { app_id: app1.body.app.id, name: 'Shop' }],
      ['connect_app_rotated', { app_id: app1.body.app.id, name: 'Shop' }],
      ['connect_app_created', { app_id: app1.body.app.id, name: 'Shop' }],
      ['sessions_revoked', { count: 1, scope: 'others' }],
      ['signin', { method: 'bip322', device: 'Firefox 140 on Linux', network: '198.51.100.0/24', added: false }],
      ['key_removed', { label: 'Desk key' }],
      ['step_up', { method: 'key', key: 'Desk key' }],
      ['step_up_failed', { method: 'key', reason: 'webauthn_origin_mismatch', key: 'Desk key' }],
      ['key_added', { label: 'Desk key', sign_in: false, type: 'unknown' }],
    ]);
    expect(JSON.stringify(list)).not.toContain(app1.body.api_key);
  });

  it('records a tab token for another account of the roster on that account, and never one for the active account', async () => {
    const client = await signedIn();
    const didA = (await client.me()).body.account.did_oc as string;
    const didB = (await client.signIn(newWallet(), { add: true })).body.account.did_oc as string;
    const pinned = (reply: { body: { token: string } }) => ({ 'x-oc-tab-session': reply.body.token });
    const eventsAs = async (tab: Record<string, string>): Promise<Event[]> =>
      (await client.request('GET', '/api/auth/activity?limit=100', undefined, tab)).body.events;

    // The client pins every tab on every page load: the active account, with no did or its own.
    const ownTab = await client.post('/api/auth/tab', {});
    expect(ownTab.status).toBe(200);
    expect((await client.post('/api/auth/tab', { did_oc: didB })).status).toBe(200);
    const tabA = await client.post('/api/auth/tab', { did_oc: didA });
    expect(tabA.status).toBe(200);
    // From a tab pinned to A, A itself is again the active account.
    expect((await client.request('POST', '/api/auth/tab', {}, pinned(tabA))).status).toBe(200);

    const [latestA, ...olderA] = await eventsAs(pinned(tabA));
    expect(latestA).toMatchObject({
      kind: 'tab_pinned',
      detail: { device: 'Firefox 140 on Linux', network: '198.51.100.0/24', active_account: didB },
    });
    expect(olderA.map((event) => event.kind)).toEqual(['signin']);
    expect((await events(client)).map((event) => event.kind)).toEqual(['signin']);

    // A tab pinned to A asking for B: recorded on B, with A as the active account.
    expect((await client.request('POST', '/api/auth/tab', { did_oc: didB }, pinned(tabA))).status).toBe(200);
    const listB = await eventsAs(pinned(ownTab));
    expect(listB.map((event) => [event.kind, event.detail.active_account])).toEqual([
      ['tab_pinned', didA],
      ['signin', undefined],
    ]);
    expect(JSON.stringify(listB)).not.toContain(tabA.body.token);
  });

  it('pages newest first with an opaque cursor, and refuses a bad cursor or limit', async () => {
    const wallet = newWallet();
    const client = await signedIn(wallet);
    for (let index = 0; index < 4; index += 1) {
      auth.harness.clock.advance(MINUTE);
      expect((await client.request('PATCH', '/api/auth/account', { display_name: `Name ${index}` })).status).toBe(200);
    }
    const first = await client.get('/api/auth/activity?limit=2');
    expect(first.body.events.map((event: Event) => event.kind)).toEqual(['account_edited', 'account_edited']);
    expect(typeof first.body.next).toBe('string');
    const second = await client.get(`/api/auth/activity?limit=2&before=${first.body.next}`);
    const third = await client.get(`/api/auth/activity?limit=2&before=${second.body.next}`);
    expect(third.body.events.map((event: Event) => event.kind)).toEqual(['signin']);
    expect(third.body.next).toBeNull();
    const ids = [...first.body.events, ...second.body.events, ...third.body.events].map((event: Event) => event.id);
    expect(new Set(ids).size).toBe(5);
    expectError(await client.get('/api/auth/activity?before=bm90LWEtY3Vyc29y'), 400, 'bad_request');
    expectError(await client.get('/api/auth/activity?limit=0'), 400, 'bad_request');
    expectError(await client.get('/api/auth/activity?limit=101'), 400, 'bad_request');
    expectError(await auth.harness.browser(auth.app).get('/api/auth/activity'), 401, 'not_authenticated');
    // Another account sees only its own.
    const stranger = await signedIn();
    expect((await events(stranger)).map((event) => event.kind)).toEqual(['signin']);
  });
}

await forEachEngine('activity', activitySuite);
