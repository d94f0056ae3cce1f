/**
 * Step-up, linked identities, linking with the dual-proof transfer, and
 * unlinking (docs/protocol.md §2 "Merging", §6 "Step-up"; docs/api.md
 * Authentication 7: step-up is per account), through HTTP on every engine,
 * with e-mail codes delivered by a real SMTP server on loopback.
 */
import { describe, expect, it } from 'vitest';
import { newWallet, type Reply, type Wallet } from './support/auth-client.js';
import {
  decodeJwt,
  expectError,
  expectSessionCookie,
  forEachEngine,
  rosterDidsOf,
  type TimedBrowser,
  useMailingAuthSuite,
} from './support/auth-harness.js';
import { MINUTE, SECOND } from './support/clock.js';

const EVIL_ORIGIN = 'https://evil.example';

interface SignedIn {
  readonly did: string;
  readonly id: string;
  readonly token: string;
}

function sudoAndLink(engine: 'sqlite' | 'postgres'): void {
  const auth = useMailingAuthSuite(engine);

  const browser = (origin?: string): TimedBrowser => auth.harness.browser(auth.app, origin);

  async function signIn(client: TimedBrowser, wallet: Wallet, add = false): Promise<SignedIn> {
    const reply = await client.signIn(wallet, { add });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { did: reply.body.account.did_oc, id: reply.body.account.id, token: reply.body.token };
  }

  /** Starts an e-mail code through the API and reads it from the SMTP server. */
  async function mailedCode(client: TimedBrowser, email: string): Promise<{ code: string; token: string }> {
    const started = await client.post('/api/auth/email-otp/start', { email });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    const code = await auth.mailbox.nextCode(email);
    return { code, token: started.body.token };
  }

  async function signInByEmail(client: TimedBrowser, email: string, add = false): Promise<SignedIn> {
    const { code, token } = await mailedCode(client, email);
    const reply = await client.post(`/api/auth/email-otp/verify${add ? '?add=1' : ''}`, { email, code, token });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { did: reply.body.account.did_oc, id: reply.body.account.id, token: reply.body.token };
  }

  async function sudo(client: TimedBrowser, wallet: Wallet): Promise<Reply> {
    return client.post('/api/auth/sudo', await client.prove(wallet, 'sudo'));
  }

  async function linkBtc(client: TimedBrowser, wallet: Wallet, confirmTransfer?: boolean): Promise<Reply> {
    const proof = await client.prove(wallet, 'link');
    return client.post('/api/auth/link/btc', confirmTransfer === undefined ? proof : { ...proof, confirm_transfer: confirmTransfer });
  }

  async function linkEmail(client: TimedBrowser, email: string, confirmTransfer?: boolean): Promise<Reply> {
    const { code, token } = await mailedCode(client, email);
    return client.post('/api/auth/link/email', {
      email,
      code,
      token,
      ...(confirmTransfer === undefined ? {} : { confirm_transfer: confirmTransfer }),
    });
  }

  function valuesOf(reply: Reply): string[] {
    return (reply.body.identities as Array<{ value: string }>).map((identity) => identity.value).sort();
  }

  describe('POST /api/auth/sudo', () => {
    it('re-proves the account with a purpose=sudo challenge, stamps the row and the JWT, and re-mints the cookie', async () => {
      const client = browser();
      const wallet = newWallet();
      const signedIn = await signIn(client, wallet);
      expect(decodeJwt(signedIn.token).payload.sudo_at ?? null).toBeNull();

      const reply = await sudo(client, wallet);
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      const token = expectSessionCookie(reply);
      expect(reply.body).toMatchObject({ ok: true, token, account: { did_oc: signedIn.did, primary_btc: wallet.address } });
      const claims = decodeJwt(token).payload;
      expect(claims.sudo_at).toBe(auth.harness.clock.seconds);
      // A re-proof is not a hardware-key assertion: step_up_at stays unset.
      expect(claims.step_up_at).toBeUndefined();
      expect(claims.jti).toBe(decodeJwt(signedIn.token).payload.jti);
      const row = await auth.harness.rowOf(token);
      expect(row?.sudo_at).toBe(auth.harness.clock.ms);
      expect(row?.step_up_at).toBeNull();

      // The re-mint replaced the token: the old one no longer works on the host.
      const stale = browser();
      stale.cookie = signedIn.token;
      expectError(await stale.me(), 401, 'not_authenticated');
      expect((await client.me()).status).toBe(200);
    });

    it('re-proves an e-mail account with an e-mail code', async () => {
      const client = browser();
      const email = 'sudo-by-code@example.org';
      const signedIn = await signInByEmail(client, email);
      const { code, token } = await mailedCode(client, email);
      const reply = await client.post('/api/auth/sudo', { email: 'Sudo-By-Code@Example.org', code, token });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body.account.did_oc).toBe(signedIn.did);
      expect(decodeJwt(expectSessionCookie(reply)).payload.sudo_at).toBe(auth.harness.clock.seconds);
    });

    it('refuses a wrong e-mail code with 401 invalid_code', async () => {
      const client = browser();
      const email = 'sudo-wrong-code@example.org';
      await signInByEmail(client, email);
      const { code } = await mailedCode(client, email);
      const wrong = code === '000000' ? '111111' : '000000';
      expectError(await client.post('/api/auth/sudo', { email, code: wrong }), 401, 'invalid_code');
    });

    it('refuses an address or e-mail not linked to the active account with 401 identity_not_linked', async () => {
      const client = browser();
      await signIn(client, newWallet());
      const stranger = newWallet();
      expectError(await sudo(client, stranger), 401, 'identity_not_linked');

      // An e-mail is checked before its code is spent: the code still signs in afterwards.
      const email = 'not-on-this-account@example.org';
      const { code, token } = await mailedCode(client, email);
      expectError(await client.post('/api/auth/sudo', { email, code, token }), 401, 'identity_not_linked');
      const other = browser();
      expect((await other.post('/api/auth/email-otp/verify', { email, code, token })).status).toBe(200);
      expect((await auth.harness.rowOf(client.cookie!))?.sudo_at).toBeNull();
    });

    it('refuses a challenge issued for another purpose, and a replayed one', async () => {
      const client = browser();
      const wallet = newWallet();
      await signIn(client, wallet);
      const login = await client.prove(wallet, 'login');
      const wrongPurpose = await client.post('/api/auth/sudo', login);
      expectError(wrongPurpose, 401, 'invalid_challenge');
      expect(wrongPurpose.body.detail).toContain('purpose_mismatch');

      const proof = await client.prove(wallet, 'sudo');
      expect((await client.post('/api/auth/sudo', proof)).status).toBe(200);
      expectError(await client.post('/api/auth/sudo', proof), 401, 'nonce_reused');
    });

    it('answers bad input with 400 bad_request naming the problem', async () => {
      const client = browser();
      const wallet = newWallet();
      await signIn(client, wallet);
      const proof = await client.prove(wallet, 'sudo');
      const both = await client.post('/api/auth/sudo', { ...proof, email: 'a@example.org', code: '123456' });
      expectError(both, 400, 'bad_request');
      expect(both.body.detail).toContain('not both');
      expectError(await client.post('/api/auth/sudo', {}), 400, 'bad_request');
      const noNonce = await client.post('/api/auth/sudo', { message: proof.message, signature: proof.signature });
      expectError(noNonce, 400, 'bad_request');
      expect(noNonce.body.detail).toContain('nonce');
      const wrongType = await client.post('/api/auth/sudo', { ...proof, signature: 42 });
      expectError(wrongType, 400, 'bad_request');
      expect(wrongType.body.detail).toContain('signature');
      expectError(await client.post('/api/auth/sudo', { email: 'a@example.org' }), 400, 'bad_request');
    });

    it('needs a session (401) and refuses cross-site requests (403)', async () => {
      const wallet = newWallet();
      const anonymous = browser();
      expectError(await anonymous.post('/api/auth/sudo', await anonymous.prove(wallet, 'sudo')), 401, 'not_authenticated');

      const client = browser();
      await signIn(client, wallet);
      const proof = await client.prove(wallet, 'sudo');
      expectError(await client.request('POST', '/api/auth/sudo', proof, { origin: EVIL_ORIGIN }), 403, 'cross_site');
      // The refused request consumed nothing: the same proof still works from the family.
      expect((await client.post('/api/auth/sudo', proof)).status).toBe(200);
    });
  });

  describe('GET /api/auth/identities', () => {
    it("lists the active account's identities, never cached", async () => {
      const client = browser();
      const wallet = newWallet();
      await signIn(client, wallet);
      const reply = await client.get('/api/auth/identities');
      expect(reply.status).toBe(200);
      expect(reply.headers['cache-control']).toBe('no-store, private');
      // Gains the fields the OrangeCheck components read (test/compat/linking.test.ts); these stay as they were.
      expect(reply.body).toMatchObject({
        ok: true,
        identities: [
          {
            id: expect.stringMatching(/^[0-9a-f]{32}$/),
            kind: 'btc',
            value: wallet.address,
            verified: true,
            created_at: new Date(auth.harness.clock.ms).toISOString(),
          },
        ],
      });
      expect(reply.body.identities).toHaveLength(1);
    });

    it('needs a session (401)', async () => {
      expectError(await browser().get('/api/auth/identities'), 401, 'not_authenticated');
    });
  });

  describe('POST /api/auth/link/btc', () => {
    it('needs a step-up younger than 5 minutes (401 sudo_required), without spending the proof', async () => {
      const client = browser();
      const wallet = newWallet();
      const signedIn = await signIn(client, wallet);
      // Past the sign-in's own 5 minutes (below, "a sign-in in this browser").
      auth.harness.clock.advance(5 * MINUTE);
      const extra = newWallet();
      const proof = await client.prove(extra, 'link');
      expectError(await client.post('/api/auth/link/btc', proof), 401, 'sudo_required');
      expect(await auth.harness.store.findAccountByIdentity('btc', extra.address)).toBeNull();
      // The refusal came before the proof was checked: after a step-up the same proof links.
      expect((await sudo(client, wallet)).status).toBe(200);
      expect((await client.post('/api/auth/link/btc', proof)).status).toBe(200);
      expect((await auth.harness.store.findAccountByIdentity('btc', extra.address))?.id).toBe(signedIn.id);
    });

    it('links a free address, keeps the primary one, re-mints, and is a no-op the second time', async () => {
      const client = browser();
      const wallet = newWallet();
      const signedIn = await signIn(client, wallet);
      expect((await sudo(client, wallet)).status).toBe(200);
      const extra = newWallet();
      const before = client.cookie;

      const linked = await linkBtc(client, extra);
      expect(linked.status, JSON.stringify(linked.body)).toBe(200);
      const token = expectSessionCookie(linked);
      expect(token).not.toBe(before);
      expect(linked.body).toMatchObject({ ok: true, token, account: { did_oc: signedIn.did, primary_btc: wallet.address } });
      expect(linked.body.merged).toBeUndefined();
      expect(valuesOf(linked)).toEqual([wallet.address, extra.address].sort());
      expect((await auth.harness.store.findAccountByIdentity('btc', extra.address))?.id).toBe(signedIn.id);
      // Linking keeps the step-up: it stays fresh for the next operation.
      expect(decodeJwt(token).payload.sudo_at).toBeTypeOf('number');

      const again = await linkBtc(client, extra);
      expect(again.status).toBe(200);
      expect(again.body.merged).toBeUndefined();
      expect(valuesOf(again)).toEqual([wallet.address, extra.address].sort());

      // Signing in with the linked address lands in this account.
      expect((await signIn(browser(), extra)).did).toBe(signedIn.did);
    });

    it('makes the first linked address primary on an account that had none', async () => {
      const client = browser();
      const email = 'no-address-yet@example.org';
      await signInByEmail(client, email);
      const { code, token } = await mailedCode(client, email);
      expect((await client.post('/api/auth/sudo', { email, code, token })).status).toBe(200);
      const wallet = newWallet();
      const linked = await linkBtc(client, wallet);
      expect(linked.status).toBe(200);
      expect(linked.body.account).toMatchObject({
        kind: 'federated',
        primary_btc: wallet.address,
        display_identity: { kind: 'btc', value: wallet.address },
      });
      expect(decodeJwt(linked.body.token).payload.primary_btc).toBe(wallet.address);
    });

    it('refuses a challenge of another purpose, bad input, no session and cross-site requests', async () => {
      const client = browser();
      const wallet = newWallet();
      await signIn(client, wallet);
      expect((await sudo(client, wallet)).status).toBe(200);
      const extra = newWallet();
      const sudoProof = await client.prove(extra, 'sudo');
      expectError(await client.post('/api/auth/link/btc', sudoProof), 401, 'invalid_challenge');
      const proof = await client.prove(extra, 'link');
      const missing = await client.post('/api/auth/link/btc', { message: proof.message, nonce: proof.nonce });
      expectError(missing, 400, 'bad_request');
      expect(missing.body.detail).toContain('signature');
      expectError(await client.post('/api/auth/link/btc', { ...proof, confirm_transfer: 'yes' }), 400, 'bad_request');
      expectError(await client.request('POST', '/api/auth/link/btc', proof, { origin: EVIL_ORIGIN }), 403, 'cross_site');
      expectError(await browser().post('/api/auth/link/btc', proof), 401, 'not_authenticated');
      expect(await auth.harness.store.findAccountByIdentity('btc', extra.address)).toBeNull();
    });
  });

  describe('dual-proof transfer (docs/protocol.md §2)', () => {
    it('409s without confirm_transfer, then merges the other account into the active one', async () => {
      const walletW = newWallet(); // B's address
      const walletV = newWallet(); // A's address
      const walletX = newWallet(); // C's address

      const browser1 = browser();
      const accountB = await signIn(browser1, walletW);
      const browser2 = browser();
      const accountA = await signIn(browser2, walletV);
      // A roster that holds both A and B (A active) ...
      const browser3 = browser();
      await signIn(browser3, walletW);
      await signIn(browser3, walletV, true);
      expect(rosterDidsOf(await browser3.me())).toEqual([accountB.did]);
      // ... and one that holds B and C (C active).
      const browser4 = browser();
      const keptCookieOfB = (await signIn(browser4, walletW)).token;
      const accountC = await signIn(browser4, walletX, true);
      expect(rosterDidsOf(await browser4.me())).toEqual([accountB.did]);

      expect((await sudo(browser2, walletV)).status).toBe(200);
      const refused = await linkBtc(browser2, walletW);
      expectError(refused, 409, 'address_linked_elsewhere');
      // The proven address's account is named, so the person knows what a transfer merges.
      expect(refused.body.holder).toMatchObject({ did_oc: accountB.did, display_name: null });
      // Without a valid proof, nothing about the holder is said.
      const unproven = await browser2.prove(walletW, 'link');
      const forged = await browser2.post('/api/auth/link/btc', {
        ...unproven,
        signature: (await browser2.prove(walletV, 'link')).signature,
      });
      expectError(forged, 401, 'invalid_challenge');
      expect(forged.body.holder).toBeUndefined();
      expectError(await linkBtc(browser2, walletW, false), 409, 'address_linked_elsewhere');
      // Nothing moved: B is intact.
      expect((await browser1.me()).body.account.did_oc).toBe(accountB.did);

      const merged = await linkBtc(browser2, walletW, true);
      expect(merged.status, JSON.stringify(merged.body)).toBe(200);
      expect(merged.body).toMatchObject({
        ok: true,
        merged: { did_oc: accountB.did },
        account: { did_oc: accountA.did, primary_btc: walletV.address },
      });
      expect(valuesOf(merged)).toEqual([walletV.address, walletW.address].sort());
      expectSessionCookie(merged);

      // B's sessions are revoked everywhere: browser 1's next /me is 401.
      expectError(await browser1.me(), 401, 'not_authenticated');
      expect(await auth.harness.liveRows(accountB.id)).toEqual([]);
      expect((await auth.harness.store.findAccount(accountB.id))?.merged_into).toBe(accountA.id);
      // The roster that held A and B shows A once.
      const me3 = await browser3.me();
      expect(me3.body.account.did_oc).toBe(accountA.did);
      expect(rosterDidsOf(me3)).toEqual([]);
      // The roster that held B simply loses it: the merge gives a stale or
      // stolen session of B no way into A, by /me, a switch, or a kept cookie.
      const me4 = await browser4.me();
      expect(me4.body.account.did_oc).toBe(accountC.did);
      expect(rosterDidsOf(me4)).toEqual([]);
      expectError(await browser4.switchTo(accountA.did), 403, 'not_in_roster');
      expectError(await browser4.switchTo(accountB.did), 403, 'not_in_roster');
      expect((await browser4.me()).body.account.did_oc).toBe(accountC.did);
      const kept = browser();
      kept.cookie = keptCookieOfB;
      expectError(await kept.me(), 401, 'not_authenticated');
      expectError(await kept.switchTo(accountA.did), 401, 'not_authenticated');
      expectError(
        await kept.request('GET', '/api/auth/me', undefined, { authorization: `Bearer ${keptCookieOfB}`, cookie: '' }),
        401,
        'not_authenticated',
      );
      // A fresh sign-in with W lands in A.
      expect((await signIn(browser(), walletW)).did).toBe(accountA.did);
      expect(await auth.harness.duplicateLiveRosterRows()).toEqual([]);
    });

    it('merges by e-mail code the same way (email_linked_elsewhere first)', async () => {
      const email = 'transfer-me@example.org';
      const browser1 = browser();
      const accountB = await signInByEmail(browser1, email);
      const browser2 = browser();
      const walletA = newWallet();
      const accountA = await signIn(browser2, walletA);
      expect((await sudo(browser2, walletA)).status).toBe(200);

      expectError(await linkEmail(browser2, email), 409, 'email_linked_elsewhere');
      const merged = await linkEmail(browser2, email, true);
      expect(merged.status, JSON.stringify(merged.body)).toBe(200);
      expect(merged.body.merged).toMatchObject({ did_oc: accountB.did });
      expect(valuesOf(merged)).toEqual([walletA.address, email].sort());
      expectError(await browser1.me(), 401, 'not_authenticated');
      expect((await signInByEmail(browser(), email)).did).toBe(accountA.did);
    });

    it('links a free e-mail without a transfer, and refuses a wrong code', async () => {
      const client = browser();
      const wallet = newWallet();
      await signIn(client, wallet);
      auth.harness.clock.advance(5 * MINUTE);
      expectError(await linkEmail(client, 'needs-sudo@example.org'), 401, 'sudo_required');
      expect((await sudo(client, wallet)).status).toBe(200);
      const email = 'free-mailbox@example.org';
      await mailedCode(client, email);
      expectError(await client.post('/api/auth/link/email', { email, code: '12345x' }), 401, 'invalid_code');
      const linked = await linkEmail(client, email);
      expect(linked.status).toBe(200);
      expect(linked.body.identities).toContainEqual(expect.objectContaining({ kind: 'email', value: email, verified: true }));
      expectError(await client.post('/api/auth/link/email', { email: 'not-an-address', code: '123456' }), 400, 'bad_request');
      expectError(
        await client.request('POST', '/api/auth/link/email', { email, code: '123456' }, { origin: EVIL_ORIGIN }),
        403,
        'cross_site',
      );
    });
  });

  describe('a sign-in in this browser counts as the step-up for linking (docs/protocol.md §6 "Step-up")', () => {
    it('links right after a wallet sign-in and after an e-mail sign-in, for 5 minutes, writing no sudo_at', async () => {
      const client = browser();
      const wallet = newWallet();
      const signedIn = await signIn(client, wallet);
      const signedInAt = auth.harness.clock.ms;
      const linked = await linkBtc(client, newWallet());
      expect(linked.status, JSON.stringify(linked.body)).toBe(200);
      // The claims keep their meaning for consumer sites: no re-proof happened.
      expect(decodeJwt(linked.body.token).payload.sudo_at ?? null).toBeNull();
      expect((await auth.harness.liveRows(signedIn.id))[0]?.sudo_at).toBeNull();
      auth.harness.clock.set(signedInAt + 5 * MINUTE - 2 * SECOND);
      expect((await linkBtc(client, newWallet())).status).toBe(200);
      auth.harness.clock.set(signedInAt + 5 * MINUTE);
      expectError(await linkBtc(client, newWallet()), 401, 'sudo_required');
      // Unlinking, like every other sensitive operation, still needs a re-proof.
      const byEmail = browser();
      await signInByEmail(byEmail, 'fresh-sign-in@example.org');
      const linkedByEmail = await linkBtc(byEmail, newWallet());
      expect(linkedByEmail.status, JSON.stringify(linkedByEmail.body)).toBe(200);
      const id = (linkedByEmail.body.identities as Array<{ id: string; kind: string }>).find((identity) => identity.kind === 'btc')!.id;
      expectError(await byEmail.request('DELETE', `/api/auth/identities?id=${id}`), 401, 'sudo_required');
    });

    it('an added account has its own sign-in; a switch to an account signed in long ago does not', async () => {
      const client = browser();
      const accountA = await signIn(client, newWallet());
      auth.harness.clock.advance(5 * MINUTE);
      expectError(await linkBtc(client, newWallet()), 401, 'sudo_required');
      const accountB = await signIn(client, newWallet(), true);
      expect((await linkBtc(client, newWallet())).status).toBe(200);
      expect((await client.switchTo(accountA.did)).status).toBe(200);
      expectError(await linkBtc(client, newWallet()), 401, 'sudo_required');
      expect((await client.switchTo(accountB.did)).status).toBe(200);
      expect((await linkBtc(client, newWallet())).status).toBe(200);
    });

    it('not from a browser without the roster binding: a cookie carried elsewhere, or the token as a bearer', async () => {
      const client = browser();
      await signIn(client, newWallet());
      const elsewhere = browser();
      elsewhere.cookie = client.cookie;
      expectError(await linkBtc(elsewhere, newWallet()), 401, 'sudo_required');
      const bearer = browser();
      const proof = await bearer.prove(newWallet(), 'link');
      expectError(
        await bearer.request('POST', '/api/auth/link/btc', proof, { authorization: `Bearer ${client.cookie}` }),
        401,
        'sudo_required',
      );
      // The browser that signed in still can.
      expect((await linkBtc(client, newWallet())).status).toBe(200);
    });
  });

  describe('step-up is per account (docs/api.md Authentication 7)', () => {
    it('does not carry over a switch, survives a switch back, and expires after 5 minutes', async () => {
      const client = browser();
      const walletA = newWallet();
      const walletB = newWallet();
      const accountA = await signIn(client, walletA);
      const accountB = await signIn(client, walletB, true);
      auth.harness.clock.advance(5 * MINUTE);
      expect((await client.switchTo(accountA.did)).status).toBe(200);
      expect((await sudo(client, walletA)).status).toBe(200);
      const sudoAt = auth.harness.clock.ms;

      const toB = await client.switchTo(accountB.did);
      expect(toB.status).toBe(200);
      expect(decodeJwt(toB.body.token).payload.sudo_at ?? null).toBeNull();
      expect((await auth.harness.liveRows(accountB.id))[0]?.sudo_at).toBeNull();
      expectError(await linkBtc(client, newWallet()), 401, 'sudo_required');

      const toA = await client.switchTo(accountA.did);
      expect(decodeJwt(toA.body.token).payload.sudo_at).toBe(Math.floor(sudoAt / 1000));
      expect((await linkBtc(client, newWallet())).status).toBe(200);

      // Just under 5 minutes after the step-up (the proof itself moves the clock a second).
      auth.harness.clock.set(sudoAt + 5 * MINUTE - 2 * SECOND);
      expect((await linkBtc(client, newWallet())).status).toBe(200);
      auth.harness.clock.set(sudoAt + 5 * MINUTE - SECOND);
      expectError(await linkBtc(client, newWallet()), 401, 'sudo_required');
    });
  });

  describe('DELETE /api/auth/identities?id=', () => {
    async function accountWithTwoAddresses(): Promise<{ client: TimedBrowser; primary: Wallet; second: Wallet; account: SignedIn }> {
      const client = browser();
      const primary = newWallet();
      const account = await signIn(client, primary);
      expect((await sudo(client, primary)).status).toBe(200);
      const second = newWallet();
      expect((await linkBtc(client, second)).status).toBe(200);
      return { client, primary, second, account };
    }

    async function identityId(client: TimedBrowser, value: string): Promise<string> {
      const list = await client.get('/api/auth/identities');
      const found = (list.body.identities as Array<{ id: string; value: string }>).find((identity) => identity.value === value);
      if (!found) throw new Error(`test: ${value} is not linked`);
      return found.id;
    }

    it('unlinks an identity; unlinking the primary address moves primary to the remaining one', async () => {
      const { client, primary, second, account } = await accountWithTwoAddresses();
      const reply = await client.request('DELETE', `/api/auth/identities?id=${await identityId(client, primary.address)}`);
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      const token = expectSessionCookie(reply);
      expect(reply.body.account).toMatchObject({ did_oc: account.did, primary_btc: second.address });
      expect(decodeJwt(token).payload.primary_btc).toBe(second.address);
      expect(valuesOf(reply)).toEqual([second.address]);
      // The unlinked address is free again: it signs in to a new account.
      expect((await signIn(browser(), primary)).did).not.toBe(account.did);
    });

    it('revokes the sessions the unlinked identity opened, in every browser, except the one unlinking', async () => {
      const { client, primary, second, account } = await accountWithTwoAddresses();
      // Browser 2 signed in through the second address (say, a lost device).
      const lost = browser();
      expect((await signIn(lost, second)).did).toBe(account.did);
      const lostToken = lost.cookie!;
      // Browser 3 holds the account in its roster through the second address, another account active.
      const roster = browser();
      await signIn(roster, second);
      const other = await signIn(roster, newWallet(), true);
      expect(rosterDidsOf(await roster.me())).toEqual([account.did]);
      // Browser 4 signed in through the primary address: not opened by what is unlinked.
      const kept = browser();
      expect((await signIn(kept, primary)).did).toBe(account.did);
      // The browser doing the unlink signed in through the primary address;
      // a session opened through the second one unlinks it from itself below.
      const self = browser();
      await signIn(self, second);
      expect((await sudo(self, primary)).status).toBe(200);

      const reply = await self.request('DELETE', `/api/auth/identities?id=${await identityId(self, second.address)}`);
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);

      expectError(await lost.me(), 401, 'not_authenticated');
      const bearer = browser();
      bearer.cookie = lostToken;
      expectError(await bearer.switchTo(other.did), 401, 'not_authenticated');
      const rosterMe = await roster.me();
      expect(rosterMe.body.account.did_oc).toBe(other.did);
      expect(rosterDidsOf(rosterMe)).toEqual([]);
      expectError(await roster.switchTo(account.did), 403, 'not_in_roster');
      expect((await kept.me()).status).toBe(200);
      expect((await client.me()).status).toBe(200);
      // The session doing the unlink keeps working, though it was opened through the unlinked address.
      expect((await self.me()).body.account.did_oc).toBe(account.did);
    });

    it('refuses the last identity with 409 last_identity, and unknown or foreign ids with 404', async () => {
      const { client, primary, second } = await accountWithTwoAddresses();
      const removed = await client.request('DELETE', `/api/auth/identities?id=${await identityId(client, second.address)}`);
      expect(removed.status).toBe(200);
      expectError(
        await client.request('DELETE', `/api/auth/identities?id=${await identityId(client, primary.address)}`),
        409,
        'last_identity',
      );
      expectError(await client.request('DELETE', '/api/auth/identities?id=00000000000000000000000000000000'), 404, 'not_found');

      const other = browser();
      const otherWallet = newWallet();
      await signIn(other, otherWallet);
      const foreign = await identityId(other, otherWallet.address);
      expectError(await client.request('DELETE', `/api/auth/identities?id=${foreign}`), 404, 'not_found');
      expect(await auth.harness.store.findAccountByIdentity('btc', otherWallet.address)).not.toBeNull();
    });

    it('needs a fresh step-up, an id, a session, and a family origin', async () => {
      const { client, second } = await accountWithTwoAddresses();
      const id = await identityId(client, second.address);
      expectError(await client.request('DELETE', '/api/auth/identities'), 400, 'bad_request');
      expectError(await client.request('DELETE', `/api/auth/identities?id=${id}`, undefined, { origin: EVIL_ORIGIN }), 403, 'cross_site');
      expectError(await browser().request('DELETE', `/api/auth/identities?id=${id}`), 401, 'not_authenticated');
      auth.harness.clock.advance(5 * MINUTE);
      expectError(await client.request('DELETE', `/api/auth/identities?id=${id}`), 401, 'sudo_required');
      expect(valuesOf(await client.get('/api/auth/identities'))).toContain(second.address);
    });
  });
}

await forEachEngine('step-up and linking', sudoAndLink);
