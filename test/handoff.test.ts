/**
 * Signing in on a desktop from a phone (docs/protocol.md "Signing in from a
 * phone", docs/api.md "Signing in from a phone"), through HTTP on every
 * engine: the desktop starts and claims, the phone looks and approves with
 * a signed login challenge. What an attacker holding only the QR code (the
 * phone key) can and cannot do is tested here too.
 */
import { expect, it } from 'vitest';
import { newWallet, type Browser, type Reply } from './support/auth-client.js';
import { forEachEngine, expectError, expectSessionCookie, LOCAL_ORIGIN, rosterDidsOf, useAuthSuite } from './support/auth-harness.js';
import { MINUTE, SECOND } from './support/clock.js';

const DESKTOP_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const PHONE_AGENT =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1';

function handoffSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  function desktop(): Browser {
    const client = auth.harness.browser(auth.app);
    client.userAgent = DESKTOP_AGENT;
    client.remoteAddress = '198.51.100.7';
    return client;
  }

  function phone(remoteAddress = '198.51.100.23'): Browser {
    const client = auth.harness.browser(auth.app);
    client.userAgent = PHONE_AGENT;
    client.remoteAddress = remoteAddress;
    return client;
  }

  async function start(client: Browser, body: Record<string, unknown> = {}) {
    const reply = await client.post('/api/auth/handoff', body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const key = new URL(reply.body.phone_url).hash.slice(1);
    return { id: String(reply.body.id), token: String(reply.body.token), code: String(reply.body.code), key, reply };
  }

  async function approve(client: Browser, key: string, wallet = newWallet()): Promise<Reply> {
    const { message, signature } = await client.prove(wallet, 'login');
    return client.post('/api/auth/handoff/approve', { key, message, signature });
  }

  type Started = Awaited<ReturnType<typeof start>>;

  const claim = (client: Browser, started: Started, extra: Record<string, unknown> = {}): Promise<Reply> =>
    client.post('/api/auth/handoff/claim', { id: started.id, token: started.token, ...extra });

  /** The desktop's poll finds the hand-off approved, and the person confirms the account it names. */
  async function confirm(client: Browser, started: Started, extra: Record<string, unknown> = {}): Promise<Reply> {
    const asked = await claim(client, started, extra);
    expect(asked.body.status, JSON.stringify(asked.body)).toBe('approved');
    return claim(client, started, { ...extra, confirm_address: asked.body.address });
  }

  it('signs the desktop in once the phone approves, and the phone sees what it approves', async () => {
    const wallet = newWallet();
    const pc = desktop();
    const started = await start(pc, { return_to: '/account' });
    const body = started.reply.body;
    expect(body.phone_url).toMatch(new RegExp(`^${LOCAL_ORIGIN}/signin/phone#[A-Za-z0-9_-]{43}$`));
    expect(body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.token).not.toBe(started.key);
    expect(body.code).toMatch(/^[0-9]{6}$/);
    expect(body.qr.size).toBeGreaterThanOrEqual(21);
    expect(body.qr.rows).toHaveLength(body.qr.size);
    expect(body.qr.rows.every((row: string) => row.length === body.qr.size && /^[01]+$/.test(row))).toBe(true);
    expect(Date.parse(body.expires_at) - auth.harness.clock.ms).toBe(3 * MINUTE);
    expect(started.reply.headers['cache-control']).toBe('no-store, private');
    // Neither secret is stored as it is.
    const raw = await auth.harness.raw();
    const row = await raw.db.selectFrom('handoffs').selectAll().where('id', '=', started.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(started.key);
    expect(JSON.stringify(row)).not.toContain(started.token);
    expect(row.network).toBe('198.51.100.0/24');

    const handset = phone();
    const looked = await handset.post('/api/auth/handoff/look', { key: started.key });
    expect(looked.body).toEqual({
      ok: true,
      code: started.code,
      desktop: 'Chrome 131 on Linux',
      desktop_text: 'Chrome 131 on Linux',
      site: 'localhost:8787',
      other_network: false,
      expires_at: body.expires_at,
    });
    expect((await claim(pc, started)).body).toEqual({ ok: true, status: 'pending', expires_at: body.expires_at });

    const approved = await approve(handset, started.key, wallet);
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.setCookies).toEqual([]);
    expect(handset.cookie).toBeUndefined();

    const asked = await claim(pc, started);
    expect(asked.body).toEqual({ ok: true, status: 'approved', address: wallet.address, expires_at: body.expires_at });
    expect(asked.setCookies).toEqual([]);
    const signedIn = await claim(pc, started, { confirm_address: wallet.address });
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    expect(signedIn.body).toMatchObject({ ok: true, status: 'signed_in', return_to: '/account' });
    const token = expectSessionCookie(signedIn);
    expect(signedIn.body.token).toBe(token);
    const me = await pc.me();
    expect(me.status).toBe(200);
    expect(me.body.account.primary_btc).toBe(wallet.address);
    // The phone that approved has no session, and a second claim is refused.
    expect((await handset.me()).status).toBe(401);
    expectError(await claim(pc, started), 409, 'handoff_used');
    expectError(await claim(pc, started, { confirm_address: wallet.address }), 409, 'handoff_used');
  });

  it('does not sign the desktop in on a stranger’s approval: the poll names the account and waits for the desktop’s confirmation', async () => {
    const pc = desktop();
    const started = await start(pc);
    const stranger = newWallet();
    expect((await approve(phone('203.0.113.9'), started.key, stranger)).status).toBe(200);
    // The poll says who approved, and signs nobody in, however often it is asked.
    for (let poll = 0; poll < 2; poll++) {
      const asked = await claim(pc, started);
      expect(asked.status, JSON.stringify(asked.body)).toBe(200);
      expect(asked.body).toEqual({ ok: true, status: 'approved', address: stranger.address, expires_at: started.reply.body.expires_at });
      expect(asked.setCookies).toEqual([]);
    }
    expect((await pc.me()).status).toBe(401);
    // A confirmation naming another account is refused, and consumes nothing.
    expectError(await claim(pc, started, { confirm_address: newWallet().address }), 409, 'handoff_mismatch');
    expect(pc.cookie).toBeUndefined();
    // The person cancels: the approval is discarded, and a later confirmation signs nobody in.
    const cancelled = await pc.post('/api/auth/handoff/cancel', { id: started.id, token: started.token });
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    expect((await claim(pc, started, { confirm_address: stranger.address })).body.status).toBe('declined');
    expect((await pc.me()).status).toBe(401);
    // Only the poll token cancels: the phone key, another hand-off's token, or a forged one are refused.
    const other = await start(pc);
    for (const token of [other.key, started.token, 'A'.repeat(43)]) {
      expectError(await pc.post('/api/auth/handoff/cancel', { id: other.id, token }), 401, 'invalid_handoff');
    }
    expect((await claim(pc, other)).body.status).toBe('pending');
  });

  it('never switches a signed-in desktop to a stranger’s account with add=1 until the person confirms that account', async () => {
    const pc = desktop();
    const own = await pc.signIn(newWallet());
    expect(own.status).toBe(200);
    const started = await start(pc);
    const stranger = newWallet();
    expect((await approve(phone('203.0.113.9'), started.key, stranger)).status).toBe(200);
    for (const asked of [
      await pc.post(`/api/auth/handoff/claim?add=1`, { id: started.id, token: started.token }),
      await claim(pc, started, { add: true }),
    ]) {
      expect(asked.body).toMatchObject({ ok: true, status: 'approved', address: stranger.address });
      expect(asked.setCookies).toEqual([]);
    }
    // Still the browser's own account, alone in its roster.
    const me = await pc.me();
    expect(me.body.account.did_oc).toBe(own.body.account.did_oc);
    expect(rosterDidsOf(me)).toEqual([]);
    expectError(await claim(pc, started, { add: true, confirm_address: own.body.account.primary_btc }), 409, 'handoff_mismatch');
    expect((await pc.me()).body.account.did_oc).toBe(own.body.account.did_oc);
    // Confirmed by name, it joins the roster.
    const added = await claim(pc, started, { add: true, confirm_address: stranger.address });
    expect(added.body.status).toBe('signed_in');
    expect(added.body.account.primary_btc).toBe(stranger.address);
    expect(rosterDidsOf(await pc.me())).toEqual([own.body.account.did_oc]);
  });

  it('gives whoever holds only the QR code no session: approve, look and claims with the key all fail to sign them in', async () => {
    const pc = desktop();
    const started = await start(pc);
    const attacker = phone('203.0.113.9');
    // The key is not the poll token: claiming with it (or with the id and anything else) is refused.
    expectError(await attacker.post('/api/auth/handoff/claim', { id: started.id, token: started.key }), 401, 'invalid_handoff');
    const approved = await approve(attacker, started.key);
    expect(approved.status).toBe(200);
    expect(approved.setCookies).toEqual([]);
    expectError(await attacker.post('/api/auth/handoff/claim', { id: started.id, token: started.key }), 401, 'invalid_handoff');
    expect((await attacker.me()).status).toBe(401);
    // The desktop that started it is the only one signed in; the legitimate phone is told it was answered.
    expect((await confirm(pc, started)).body.status).toBe('signed_in');
    expectError(await approve(phone(), started.key), 409, 'handoff_used');
    expect((await attacker.me()).status).toBe(401);
  });

  it('warns the phone on another network than the desktop', async () => {
    const started = await start(desktop());
    const looked = await phone('203.0.113.9').post('/api/auth/handoff/look', { key: started.key });
    expect(looked.body.other_network).toBe(true);
  });

  it('names the family site of a return_to, and refuses a return_to elsewhere', async () => {
    const started = await start(desktop(), { return_to: `${LOCAL_ORIGIN}/account?tab=1` });
    expect((await phone().post('/api/auth/handoff/look', { key: started.key })).body.site).toBe('localhost:8787');
    const refused = await desktop().post('/api/auth/handoff', { return_to: 'https://evil.example/' });
    expectError(refused, 400, 'bad_request');
    // A bodiless start is an ordinary one.
    const bare = await desktop().request('POST', '/api/auth/handoff', undefined);
    expect(bare.status, JSON.stringify(bare.body)).toBe(200);
  });

  it('refuses forged, wrong and malformed secrets with invalid_handoff, never a 500', async () => {
    const pc = desktop();
    const started = await start(pc);
    const other = await start(desktop());
    const forged = 'A'.repeat(43);
    for (const body of [
      { id: started.id, token: forged },
      { id: started.id, token: other.token },
      { id: other.id, token: started.token },
      { id: 'not-an-id', token: started.token },
      { id: started.id, token: 'short' },
    ]) {
      expectError(await pc.post('/api/auth/handoff/claim', body), 401, 'invalid_handoff');
    }
    for (const key of [forged, 'short', `${started.key}x`, started.token]) {
      expectError(await phone().post('/api/auth/handoff/look', { key }), 401, 'invalid_handoff');
      expectError(await phone().post('/api/auth/handoff/decline', { key }), 401, 'invalid_handoff');
    }
    expectError(await approve(phone(), forged), 401, 'invalid_handoff');
    for (const body of [{}, { key: 5 }, { id: started.id }, { token: started.token }]) {
      expectError(await pc.post('/api/auth/handoff/claim', body), 400, 'bad_request');
    }
    expectError(await phone().post('/api/auth/handoff/look', { key: 5 }), 400, 'bad_request');
    expectError(await phone().post('/api/auth/handoff/approve', { key: started.key }), 400, 'bad_request');
    // Nothing of the above touched the hand-off.
    expect((await claim(pc, started)).body.status).toBe('pending');
  });

  it('expires after 3 minutes: the phone is told, the desktop polls expired', async () => {
    const pc = desktop();
    const started = await start(pc);
    const handset = phone();
    auth.harness.clock.advance(3 * MINUTE);
    expectError(await handset.post('/api/auth/handoff/look', { key: started.key }), 410, 'handoff_expired');
    expectError(await approve(handset, started.key), 410, 'handoff_expired');
    expect((await claim(pc, started)).body.status).toBe('expired');
  });

  it('lets an approval made in the last seconds be claimed shortly after expiry, not later', async () => {
    const pc = desktop();
    const late = await start(pc);
    const later = await start(pc);
    auth.harness.clock.advance(3 * MINUTE - 5 * SECOND);
    expect((await approve(phone(), late.key)).status).toBe(200);
    expect((await approve(phone(), later.key)).status).toBe(200);
    auth.harness.clock.advance(10 * SECOND);
    expect((await confirm(pc, late)).body.status).toBe('signed_in');
    auth.harness.clock.advance(MINUTE);
    expect((await claim(desktop(), later)).body.status).toBe('expired');
  });

  it('tells the desktop a decline, and a declined hand-off cannot be approved', async () => {
    const pc = desktop();
    const started = await start(pc);
    const handset = phone();
    expect((await handset.post('/api/auth/handoff/decline', { key: started.key })).status).toBe(200);
    expect((await claim(pc, started)).body.status).toBe('declined');
    expectError(await approve(handset, started.key), 409, 'handoff_used');
    expectError(await handset.post('/api/auth/handoff/look', { key: started.key }), 409, 'handoff_used');
    expect(pc.cookie).toBeUndefined();
  });

  it('refuses a reused challenge and one made for another site, keeping the hand-off pending', async () => {
    const pc = desktop();
    const started = await start(pc);
    const handset = phone();
    const wallet = newWallet();
    // A proof already used for an ordinary sign-in does not approve a hand-off.
    const proof = await handset.prove(wallet, 'login');
    expect((await auth.harness.browser(auth.app).post('/api/auth/signin', proof)).status).toBe(200);
    expectError(
      await handset.post('/api/auth/handoff/approve', { key: started.key, message: proof.message, signature: proof.signature }),
      401,
      'nonce_reused',
    );
    // A signature of another message, and one for another audience, do not verify.
    const first = await handset.prove(wallet, 'login');
    const second = await handset.prove(wallet, 'login');
    const swapped = await handset.post('/api/auth/handoff/approve', {
      key: started.key,
      message: second.message,
      signature: first.signature,
    });
    expectError(swapped, 401, 'invalid_challenge');
    const elsewhere = await handset.prove(wallet, 'login', 'https://shop.example');
    const foreign = await handset.post('/api/auth/handoff/approve', {
      key: started.key,
      message: elsewhere.message,
      signature: elsewhere.signature,
    });
    expectError(foreign, 401, 'invalid_challenge');
    const sudo = await handset.prove(wallet, 'sudo');
    expectError(
      await handset.post('/api/auth/handoff/approve', { key: started.key, message: sudo.message, signature: sudo.signature }),
      401,
      'invalid_challenge',
    );
    expect((await claim(pc, started)).body.status).toBe('pending');
    // A second approval after the first is refused: single use.
    expect((await approve(handset, started.key, wallet)).status).toBe(200);
    expectError(await approve(handset, started.key), 409, 'handoff_used');
  });

  it('adds the account to the desktop roster with add, as a sign-in does', async () => {
    const pc = desktop();
    const first = await pc.signIn(newWallet());
    expect(first.status).toBe(200);
    const started = await start(pc);
    expect((await approve(phone(), started.key)).status).toBe(200);
    const added = await confirm(pc, started, { add: true });
    expect(added.body.status).toBe('signed_in');
    expect(rosterDidsOf(await pc.me())).toEqual([first.body.account.did_oc]);
  });

  it('signs in exactly one of two racing claims', async () => {
    const pc = desktop();
    const started = await start(pc);
    expect((await approve(phone(), started.key)).status).toBe(200);
    const address = (await claim(pc, started)).body.address;
    const claims = await Promise.all([0, 1, 2, 3].map(() => claim(desktop(), started, { confirm_address: address })));
    const statuses = claims.map((reply) => reply.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409]);
    expect(claims.filter((reply) => reply.setCookies.some((line) => line.startsWith('oc_session=ey'))).length).toBe(1);
  });

  it('lets only one of two racing phones approve or decline', async () => {
    const started = await start(desktop());
    const replies = await Promise.all([
      approve(phone(), started.key),
      approve(phone(), started.key),
      phone().post('/api/auth/handoff/decline', { key: started.key }),
    ]);
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(1);
    for (const reply of replies.filter((one) => one.status !== 200)) expectError(reply, 409, 'handoff_used');
  });
}

await forEachEngine('phone hand-off', handoffSuite);
