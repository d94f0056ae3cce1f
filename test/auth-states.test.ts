/**
 * docs/api.md "States and transitions" and "Errors of POST /api/auth/switch",
 * through HTTP, on every engine: one test per row of the state table and per
 * switch error. What is asserted is what a user sees (status, body, cookie,
 * JWT claims) and the session rows behind it (docs/protocol.md §3).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SESSION_LIFETIME_SECONDS, mintSessionJwt, tokenHash } from '../src/identity/session/jwt.js';
import { signLegacy } from './support/bitcoin-signer.js';
import { loadKeyRing } from '../src/identity/session/keystore.js';
import { newWallet, type Reply, type Wallet } from './support/auth-client.js';
import {
  DID_FORMAT,
  LOCAL_ORIGIN,
  UUID_ANYWHERE,
  decodeJwt,
  expectClearedCookies,
  expectError,
  expectSessionCookie,
  forEachEngine,
  rosterDidsOf,
  sorted,
  unknownDid,
  type TimedBrowser,
  useAuthSuite,
} from './support/auth-harness.js';
import { DAY, HOUR, MINUTE, SECOND } from './support/clock.js';
import { mergeEverything } from './support/merge.js';

/** docs/protocol.md §3: Max-Age is the seconds to the row's expiry, 30 days for a new row. */
const THIRTY_DAYS_SECONDS = 2_592_000;

interface SignedIn {
  readonly reply: Reply;
  readonly did: string;
  readonly id: string;
  readonly token: string;
}

function authStates(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  const browser = (): TimedBrowser => auth.harness.browser(auth.app);

  /** Signs `wallet` in and checks the common shape of a successful sign-in (docs/protocol.md §3). */
  async function signIn(client: TimedBrowser, wallet: Wallet, add = false): Promise<SignedIn> {
    const reply = await client.signIn(wallet, { add });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const token = expectSessionCookie(reply);
    expect(reply.body.ok).toBe(true);
    expect(reply.body.token).toBe(token);
    expect(client.cookie).toBe(token);
    expect(reply.body.account.primary_btc).toBe(wallet.address);
    return { reply, did: reply.body.account.did_oc, id: reply.body.account.id, token };
  }

  /** An account that exists but belongs to no roster of the browser under test. */
  async function accountElsewhere(wallet = newWallet()): Promise<SignedIn> {
    return signIn(browser(), wallet);
  }

  /** What /me answers for a token, from a jar holding only that token. */
  async function meWith(token: string): Promise<Reply> {
    const other = browser();
    other.cookie = token;
    return other.me();
  }

  describe('anonymous → sign-in without add', () => {
    it('creates a fresh roster with this session as its only member and sets the cookie exactly', async () => {
      const client = browser();
      const wallet = newWallet();
      const { reply, did, id, token } = await signIn(client, wallet);
      expect(did).toMatch(DID_FORMAT);
      expect(did).toBe(`did:oc:${id}`);
      expect(reply.setCookies[0]).toBe(`oc_session=${token}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${THIRTY_DAYS_SECONDS}`);

      const me = await client.me();
      expect(me.status).toBe(200);
      expect(me.headers['cache-control']).toBe('no-store, private');
      expect(me.body.ok).toBe(true);
      expect(me.body.account).toMatchObject({
        id,
        did_oc: did,
        primary_btc: wallet.address,
        display_identity: { kind: 'btc', value: wallet.address },
      });
      // docs/protocol.md §3: /me's account.id is the JWT sub.
      expect(me.body.account.id).toBe(decodeJwt(token).payload.sub);
      expect(me.body.roster).toEqual([]);

      const row = await auth.harness.rowOf(token);
      expect(row).toMatchObject({ account_id: id, revoked_at: null, signing_method: 'bip322' });
      expect(row!.roster_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(row!.expires_at - row!.created_at).toBe(30 * DAY);
      expect(decodeJwt(token).payload.exp).toBe(Math.floor(row!.expires_at / 1000));
      // The roster id never leaves the server.
      for (const text of [
        JSON.stringify(reply.body),
        JSON.stringify(me.body),
        reply.setCookies.join('\n'),
        JSON.stringify(decodeJwt(token)),
      ]) {
        expect(text).not.toContain(row!.roster_id!);
        expect(text).not.toMatch(UUID_ANYWHERE);
      }
    });

    it.each(['p2tr', 'p2sh-p2wpkh', 'p2pkh'] as const)('signs in with a %s address (BIP-322)', async (type) => {
      const client = browser();
      const wallet = newWallet(type);
      const { did } = await signIn(client, wallet);
      expect((await client.me()).body.account).toMatchObject({ did_oc: did, primary_btc: wallet.address });
    });

    it('signs in a P2PKH address with a legacy signmessage signature, with or without scheme: legacy', async () => {
      const client = browser();
      const wallet = newWallet('p2pkh');
      for (const scheme of [undefined, 'legacy']) {
        const proof = await client.prove(wallet, 'login');
        const signature = signLegacy(wallet.privateKey, proof.message);
        const reply = await client.post('/api/auth/signin', { ...proof, signature, ...(scheme ? { scheme } : {}) });
        expect(reply.status, JSON.stringify(reply.body)).toBe(200);
        expect(reply.body.account.primary_btc).toBe(wallet.address);
      }
    });

    it('a sign-in without add by a signed-in browser starts a new roster', async () => {
      const client = browser();
      const first = await signIn(client, newWallet());
      const second = await signIn(client, newWallet());
      expect(rosterDidsOf(await client.me())).toEqual([]);
      const [firstRow, secondRow] = [await auth.harness.rowOf(first.token), await auth.harness.rowOf(second.token)];
      expect(secondRow!.roster_id).not.toBe(firstRow!.roster_id);
    });

    it('adds Domain=<COOKIE_DOMAIN> when one is configured, and clears with it', async () => {
      const familyApp = await auth.harness.app({ PUBLIC_URL: 'https://auth.example.com', COOKIE_DOMAIN: '.example.com' });
      const client = auth.harness.browser(familyApp, 'https://app.example.com');
      const reply = await client.signIn(newWallet());
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      const token = expectSessionCookie(reply, { domain: '.example.com', maxAge: THIRTY_DAYS_SECONDS });
      expect(reply.setCookies[0]).toBe(
        `oc_session=${token}; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=${THIRTY_DAYS_SECONDS}; Domain=.example.com`,
      );
      expect(decodeJwt(token).payload.iss).toBe('https://auth.example.com');
      const logout = await client.logout();
      expect(logout.status).toBe(200);
      expectClearedCookies(logout, '.example.com');
    });
  });

  describe('signed in (active A) → sign-in with add=1', () => {
    it("?add=1 keeps the roster; A's row stays alive and a switch back works", async () => {
      const client = browser();
      const a = await signIn(client, newWallet());
      const b = await signIn(client, newWallet(), true);
      const me = await client.me();
      expect(me.body.account.did_oc).toBe(b.did);
      expect(rosterDidsOf(me)).toEqual([a.did]);
      expect(me.body.roster[0]).toMatchObject({ did_oc: a.did, id: a.id, display_identity: { kind: 'btc' } });
      expect(Date.parse(me.body.roster[0].last_seen_at)).toBeGreaterThan(0);

      const [rowA, rowB] = [await auth.harness.rowOf(a.token), await auth.harness.rowOf(b.token)];
      expect(rowA, "A's row is alive: its token still authenticates").not.toBeNull();
      expect(rowB!.roster_id).toBe(rowA!.roster_id);

      const back = await client.switchTo(a.did);
      expect(back.status, JSON.stringify(back.body)).toBe(200);
      expect(back.body.account.did_oc).toBe(a.did);
      expect(rosterDidsOf(await client.me())).toEqual([b.did]);
    });

    /** A browser signed in as a new account A, and a login proof of a second new wallet. */
    async function signedInWithProofOfAnother() {
      const client = browser();
      const a = await signIn(client, newWallet());
      const wallet = newWallet();
      return { client, a, wallet, proof: await client.prove(wallet, 'login') };
    }

    it('the body field add: true is the same as ?add=1', async () => {
      const { client, a, proof } = await signedInWithProofOfAnother();
      const reply = await client.post('/api/auth/signin', { ...proof, add: true });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expectSessionCookie(reply);
      expect(rosterDidsOf(await client.me())).toEqual([a.did]);
    });

    it('the client-library body {message, signature, scheme, expectedNonce, expectedAudience, expectedPurpose, add} works too', async () => {
      const { client, a, wallet, proof } = await signedInWithProofOfAnother();
      const reply = await client.post('/api/auth/signin', {
        message: proof.message,
        signature: proof.signature,
        scheme: 'bip322',
        expectedNonce: proof.nonce,
        expectedAudience: client.origin,
        expectedPurpose: 'login',
        add: true,
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body.account.primary_btc).toBe(wallet.address);
      expect(rosterDidsOf(await client.me())).toEqual([a.did]);
    });

    it('add=1 of an account already in the roster is a re-authentication, not a duplicate', async () => {
      const client = browser();
      const walletA = newWallet();
      const walletB = newWallet();
      const a1 = await signIn(client, walletA);
      const b = await signIn(client, walletB, true);
      const a2 = await signIn(client, walletA, true);
      expect(a2.did).toBe(a1.did);
      const me = await client.me();
      expect(me.body.account.did_oc).toBe(a1.did);
      expect(rosterDidsOf(me)).toEqual([b.did]);
      // One live row for A: the re-authentication replaced the first.
      expect(await auth.harness.liveRows(a1.id)).toHaveLength(1);
      expect((await meWith(a1.token)).status).toBe(401);

      await signIn(client, walletB, true);
      const again = await client.me();
      expect(again.body.account.did_oc).toBe(b.did);
      expect(rosterDidsOf(again)).toEqual([a1.did]);
      expect(await auth.harness.liveRows(b.id)).toHaveLength(1);
      expect(await auth.harness.duplicateLiveRosterRows()).toEqual([]);
    });

    /** `reply` made `active` the browser's account (the cookie names it too) over a roster of `others`. */
    async function expectActive(client: TimedBrowser, reply: Reply, active: SignedIn, others: readonly string[]): Promise<void> {
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body.account.did_oc).toBe(active.did);
      expect(decodeJwt(expectSessionCookie(reply)).payload.sub).toBe(active.id);
      const me = await client.me();
      expect(me.body.account.did_oc).toBe(active.did);
      expect(rosterDidsOf(me)).toEqual(others);
    }

    it('add=1 with an address of a merged account lands in the canonical account; /me shows the post-merge roster', async () => {
      const client = browser();
      const walletB = newWallet();
      const b = await signIn(client, walletB);
      const a = await signIn(client, newWallet(), true);
      const c = await accountElsewhere();
      expect(rosterDidsOf(await client.me())).toEqual([b.did]);

      await mergeEverything(auth.harness.store, b.id, c.id, auth.harness.clock.ms);

      const afterMerge = await client.me();
      expect(afterMerge.body.account.did_oc).toBe(a.did);
      expect(rosterDidsOf(afterMerge), 'the roster loses the merged account and does not gain the survivor').toEqual([]);

      const reply = await client.signIn(walletB, { add: true });
      await expectActive(client, reply, c, [a.did]);
      expect(await auth.harness.duplicateLiveRosterRows()).toEqual([]);
    });

    it("a switch to a merged account's did follows the pointer to the canonical account (docs/protocol.md §2)", async () => {
      const client = browser();
      const walletC = newWallet();
      const b = await signIn(client, newWallet());
      const c = await signIn(client, walletC, true);
      const a = await signIn(client, newWallet(), true);
      await mergeEverything(auth.harness.store, b.id, c.id, auth.harness.clock.ms);
      const reply = await client.switchTo(b.did);
      await expectActive(client, reply, c, [a.did]);

      // A roster that held only the merged account gains no way into the canonical one.
      const other = browser();
      await signIn(other, walletC);
      const d = await signIn(other, newWallet(), true);
      const e = await accountElsewhere();
      await mergeEverything(auth.harness.store, c.id, e.id, auth.harness.clock.ms);
      const otherMe = await other.me();
      expect(otherMe.body.account.did_oc).toBe(d.did);
      expect(rosterDidsOf(otherMe)).toEqual([]);
      expectError(await other.switchTo(c.did), 403, 'not_in_roster');
      expectError(await other.switchTo(e.did), 403, 'not_in_roster');
    });

    it('add=1 with an address of an account merged into the active one re-authenticates the active account', async () => {
      const client = browser();
      const walletB = newWallet();
      const b = await signIn(client, walletB);
      const a = await signIn(client, newWallet(), true);
      await mergeEverything(auth.harness.store, b.id, a.id, auth.harness.clock.ms);
      const afterMerge = await client.me();
      expect(afterMerge.body.account.did_oc).toBe(a.did);
      expect(rosterDidsOf(afterMerge)).toEqual([]);

      const reply = await client.signIn(walletB, { add: true });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body.account.did_oc).toBe(a.did);
      expect(rosterDidsOf(await client.me())).toEqual([]);
      expect(await auth.harness.liveRows(a.id)).toHaveLength(1);
      expect(await auth.harness.liveRows(b.id)).toHaveLength(0);
    });
  });

  describe('signed in (active A) → POST /api/auth/switch to B', () => {
    it("mints a fresh JWT for B with B's own step-up claims and B's row's original expiry", async () => {
      const client = browser();
      const a = await signIn(client, newWallet());
      auth.harness.clock.advance(1 * HOUR);
      const b = await signIn(client, newWallet(), true);
      const [rowA, rowB] = [(await auth.harness.rowOf(a.token))!, (await auth.harness.rowOf(b.token))!];
      // A sign-in sets neither freshness claim (docs/protocol.md §3).
      expect([rowA.step_up_at, rowA.sudo_at, rowB.step_up_at, rowB.sudo_at]).toEqual([null, null, null, null]);

      // B stepped up four minutes after its sign-in and re-proved itself (sudo) at five; A did neither.
      const bStepUp = rowB.created_at + 4 * MINUTE;
      const bSudo = rowB.created_at + 5 * MINUTE;
      expect(
        await auth.harness.store.updateSessionToken(rowB.jti, rowB.token_hash, { step_up_at: bStepUp, sudo_at: bSudo }),
      ).not.toBeNull();

      auth.harness.clock.advance(2 * HOUR);
      const toA = await client.switchTo(a.did);
      expect(toA.status, JSON.stringify(toA.body)).toBe(200);
      const tokenA = expectSessionCookie(toA, { maxAge: Math.floor((rowA.expires_at - auth.harness.clock.ms) / 1000) });
      const claimsA = decodeJwt(tokenA).payload;
      expect(claimsA).toMatchObject({
        sub: a.id,
        did_oc: a.did,
        jti: rowA.jti,
        iat: auth.harness.clock.seconds,
        exp: Math.floor(rowA.expires_at / 1000),
      });
      expect(claimsA.step_up_at, "never the previous account's step_up_at").toBeUndefined();
      expect(claimsA.sudo_at, "never the previous account's sudo_at").toBeUndefined();

      auth.harness.clock.advance(3 * HOUR);
      const toB = await client.switchTo(b.did);
      expect(toB.status, JSON.stringify(toB.body)).toBe(200);
      expect(toB.headers['cache-control']).toBe('no-store, private');
      expect(toB.body).toMatchObject({ ok: true, account: { did_oc: b.did, id: b.id } });
      const tokenB = expectSessionCookie(toB, { maxAge: Math.floor((rowB.expires_at - auth.harness.clock.ms) / 1000) });
      expect(toB.body.token).toBe(tokenB);
      expect(tokenB, 'a fresh JWT').not.toBe(b.token);
      const claimsB = decodeJwt(tokenB).payload;
      expect(claimsB).toMatchObject({ sub: b.id, did_oc: b.did, jti: rowB.jti, iat: auth.harness.clock.seconds });
      expect(claimsB.exp, "B's row's original expiry, never extended").toBe(Math.floor(rowB.expires_at / 1000));
      expect(claimsB.exp).toBe(decodeJwt(b.token).payload.exp);
      expect(claimsB.step_up_at).toBe(Math.floor(bStepUp / 1000));
      expect(claimsB.sudo_at).toBe(Math.floor(bSudo / 1000));

      // The row still expires when it did; the token B held before is replaced.
      const rowAfter = (await auth.harness.rowOf(tokenB))!;
      expect(rowAfter.expires_at).toBe(rowB.expires_at);
      expect((await meWith(b.token)).status).toBe(401);
      const me = await client.me();
      expect(me.body.account.did_oc).toBe(b.did);
      expect(rosterDidsOf(me)).toEqual([a.did]);
    });
  });

  describe('signed in → POST /api/auth/logout', () => {
    it('scope=all revokes every session of the roster: old cookies of A and B are refused, cookies are cleared', async () => {
      const client = browser();
      const a = await signIn(client, newWallet());
      const b = await signIn(client, newWallet(), true);
      const c = await signIn(client, newWallet(), true);
      expect((await meWith(a.token)).status).toBe(200);
      expect((await meWith(b.token)).status).toBe(200);

      const reply = await client.logout('all');
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body).toEqual({ ok: true, scope: 'all' });
      expectClearedCookies(reply);
      expect(client.cookie).toBeUndefined();
      for (const token of [a.token, b.token, c.token]) expectError(await meWith(token), 401, 'not_authenticated');
      for (const account of [a, b, c]) expect(await auth.harness.liveRows(account.id)).toEqual([]);
      expectError(await client.me(), 401, 'not_authenticated');
    });

    it('the default scope is all', async () => {
      const client = browser();
      const a = await signIn(client, newWallet());
      const b = await signIn(client, newWallet(), true);
      const reply = await client.logout();
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ ok: true, scope: 'all' });
      expectClearedCookies(reply);
      expectError(await meWith(a.token), 401, 'not_authenticated');
      expectError(await meWith(b.token), 401, 'not_authenticated');
      expect(await auth.harness.liveRows(a.id)).toEqual([]);
    });

    it('scope=current with another member: A is revoked, a fresh session for the other account is set', async () => {
      const client = browser();
      const a = await signIn(client, newWallet());
      const b = await signIn(client, newWallet(), true);
      auth.harness.clock.advance(MINUTE);
      const reply = await client.logout('current');
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body).toMatchObject({ ok: true, scope: 'current', switched_to: { did_oc: a.did }, account: { did_oc: a.did } });
      const token = expectSessionCookie(reply);
      expect(reply.body.token).toBe(token);
      expect(token).not.toBe(a.token);
      expect(decodeJwt(token).payload).toMatchObject({ sub: a.id, iat: auth.harness.clock.seconds, exp: decodeJwt(a.token).payload.exp });
      const me = await client.me();
      expect(me.body.account.did_oc).toBe(a.did);
      expect(rosterDidsOf(me)).toEqual([]);
      expectError(await meWith(b.token), 401, 'not_authenticated');
      expect(await auth.harness.liveRows(b.id)).toEqual([]);
      expect(await auth.harness.liveRows(a.id)).toHaveLength(1);
    });

    it('scope=current as the last member leaves the browser anonymous', async () => {
      const client = browser();
      const a = await signIn(client, newWallet());
      const reply = await client.logout('current');
      expect(reply.status).toBe(200);
      expect(reply.body).toEqual({ ok: true, scope: 'current', switched_to: null });
      expectClearedCookies(reply);
      expect(client.cookie).toBeUndefined();
      expectError(await meWith(a.token), 401, 'not_authenticated');
    });

    it('scope=current twice walks the whole roster down to anonymous', async () => {
      const client = browser();
      const a = await signIn(client, newWallet());
      const b = await signIn(client, newWallet(), true);
      const c = await signIn(client, newWallet(), true);
      const first = await client.logout('current');
      expect([a.did, b.did]).toContain(first.body.switched_to.did_oc);
      const second = await client.logout('current');
      const remaining = [a.did, b.did].find((did) => did !== first.body.switched_to.did_oc);
      expect(second.body.switched_to).toEqual({ did_oc: remaining });
      expect(rosterDidsOf(await client.me())).toEqual([]);
      const third = await client.logout('current');
      expect(third.body).toEqual({ ok: true, scope: 'current', switched_to: null });
      expectError(await meWith(c.token), 401, 'not_authenticated');
    });
  });

  describe('session row → 30 days elapse', () => {
    it('a switch to the expired member is 403 not_in_roster and /me omits it; add=1 restores it', async () => {
      const client = browser();
      const walletA = newWallet();
      const a = await signIn(client, walletA);
      auth.harness.clock.advance(1 * DAY);
      const b = await signIn(client, newWallet(), true);
      expect(rosterDidsOf(await client.me())).toEqual([a.did]);

      // A's row was created 30 days ago now, to the millisecond: it is expired; B's is not.
      const rowA = (await auth.harness.rowOf(a.token))!;
      auth.harness.clock.set(rowA.expires_at);
      expect(await auth.harness.rowOf(a.token)).toBeNull();
      const me = await client.me();
      expect(me.body.account.did_oc).toBe(b.did);
      expect(rosterDidsOf(me)).toEqual([]);
      expectError(await client.switchTo(a.did), 403, 'not_in_roster');
      expectError(await meWith(a.token), 401, 'not_authenticated');

      const restored = await signIn(client, walletA, true);
      expect(restored.did).toBe(a.did);
      expect(decodeJwt(restored.token).payload.exp).toBe(Math.floor(auth.harness.clock.ms / 1000) + SESSION_LIFETIME_SECONDS);
      expect(rosterDidsOf(await client.me())).toEqual([b.did]);
      const toB = await client.switchTo(b.did);
      expect(toB.status).toBe(200);
      expect(rosterDidsOf(await client.me())).toEqual([a.did]);

      // When B's row expires too, the cookie B holds is refused.
      auth.harness.clock.advance(1 * DAY);
      expectError(await client.me(), 401, 'not_authenticated');
    });
  });

  describe('errors of POST /api/auth/switch', () => {
    it('401 not_authenticated without a cookie, or with a garbage one', async () => {
      const target = await accountElsewhere();
      const client = browser();
      expectError(await client.switchTo(target.did), 401, 'not_authenticated');
      client.cookie = 'garbage';
      expectError(await client.switchTo(target.did), 401, 'not_authenticated');
      client.cookie = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ4In0.c2ln';
      expectError(await client.switchTo(target.did), 401, 'not_authenticated');
    });

    it('403 not_in_roster for an account that exists but is not in this roster', async () => {
      const target = await accountElsewhere();
      const client = browser();
      const a = await signIn(client, newWallet());
      const reply = await client.switchTo(target.did);
      expectError(reply, 403, 'not_in_roster');
      expect(reply.setCookies).toEqual([]);
      expect(client.cookie).toBe(a.token);
    });

    it('404 unknown_did_oc for a well-formed did of no account', async () => {
      const client = browser();
      await signIn(client, newWallet());
      expectError(await client.switchTo(unknownDid()), 404, 'unknown_did_oc');
    });

    it('409 no_roster for a session that predates multi-account (roster_id NULL)', async () => {
      const a = await accountElsewhere();
      const b = await accountElsewhere();
      // A row as a pre-multi-account host wrote it, with a JWT signed by the service's own key.
      const ring = await loadKeyRing(auth.harness.store, undefined, auth.harness.clock.now());
      const nowMs = auth.harness.clock.ms;
      const jti = randomBytes(16).toString('hex');
      const expiresAt = nowMs + 30 * DAY;
      const token = mintSessionJwt(ring.active, {
        iss: LOCAL_ORIGIN,
        sub: a.id,
        did_oc: a.did,
        jti,
        iat: Math.floor(nowMs / 1000),
        exp: Math.floor(expiresAt / 1000),
        signing_method: 'bip322',
        step_up_at: Math.floor(nowMs / 1000),
      });
      await auth.harness.store.insertSession({
        jti,
        token_hash: tokenHash(token),
        account_id: a.id,
        roster_id: null,
        signing_method: 'bip322',
        created_at: nowMs,
        expires_at: expiresAt,
        step_up_at: nowMs,
      });
      const client = browser();
      client.cookie = token;
      const me = await client.me();
      expect(me.status).toBe(200);
      expect(me.body.account.did_oc).toBe(a.did);
      expect(me.body.roster ?? []).toEqual([]);
      expectError(await client.switchTo(b.did), 409, 'no_roster');

      // The client falls back to a normal sign-in, which starts a roster.
      const fresh = await signIn(client, newWallet(), true);
      const row = await auth.harness.rowOf(fresh.token);
      expect(row!.roster_id).not.toBeNull();
    });

    it('400 already_active for the active account', async () => {
      const client = browser();
      const a = await signIn(client, newWallet());
      await signIn(client, newWallet(), true);
      await client.switchTo(a.did);
      expectError(await client.switchTo(a.did), 400, 'already_active');
      expect((await client.me()).body.account.did_oc).toBe(a.did);
    });
  });

  it('every roster reply stays free of the roster id and of duplicates after a busy sequence', async () => {
    const client = browser();
    const wallets = [newWallet(), newWallet(), newWallet()];
    const accounts: SignedIn[] = [];
    for (const [index, wallet] of wallets.entries()) accounts.push(await signIn(client, wallet, index > 0));
    await client.switchTo(accounts[0]!.did);
    await signIn(client, wallets[1]!, true);
    auth.harness.clock.advance(10 * SECOND);
    await client.switchTo(accounts[2]!.did);
    const me = await client.me();
    expect(me.body.account.did_oc).toBe(accounts[2]!.did);
    expect(rosterDidsOf(me)).toEqual(sorted([accounts[0]!.did, accounts[1]!.did]));
    expect(JSON.stringify(me.body)).not.toMatch(UUID_ANYWHERE);
    expect(await auth.harness.duplicateLiveRosterRows()).toEqual([]);
  });
}

await forEachEngine('auth states and transitions', authStates);
