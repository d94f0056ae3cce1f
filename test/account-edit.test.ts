/**
 * Account edit (docs/protocol.md §6 "Account edit": `PATCH /api/auth/account`
 * with `{display_name?, display_identity?}` answering `{ok, account, token}`
 * and re-minting the cookie), through HTTP on every engine.
 */
import { describe, expect, it } from 'vitest';
import { newWallet, type Reply, type Wallet } from './support/auth-client.js';
import {
  decodeJwt,
  expectError,
  expectSessionCookie,
  forEachEngine,
  type TimedBrowser,
  useMailingAuthSuite,
} from './support/auth-harness.js';

const EVIL_ORIGIN = 'https://evil.example';

function accountEdit(engine: 'sqlite' | 'postgres'): void {
  const auth = useMailingAuthSuite(engine);

  const browser = (origin?: string): TimedBrowser => auth.harness.browser(auth.app, origin);

  async function signIn(client: TimedBrowser, wallet: Wallet = newWallet(), add = false): Promise<{ did: string; token: string }> {
    const reply = await client.signIn(wallet, { add });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { did: reply.body.account.did_oc, token: reply.body.token };
  }

  async function signInByEmail(client: TimedBrowser, email: string): Promise<{ did: string }> {
    const started = await client.post('/api/auth/email-otp/start', { email });
    expect(started.status).toBe(200);
    const code = await auth.mailbox.nextCode(email);
    const reply = await client.post('/api/auth/email-otp/verify', { email, code });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { did: reply.body.account.did_oc };
  }

  const patch = (client: TimedBrowser, body: unknown, headers?: Record<string, string>): Promise<Reply> =>
    client.request('PATCH', '/api/auth/account', body, headers);

  describe('display_name', () => {
    it('sets a trimmed name, re-mints the cookie with the new name claim, and kills the old token', async () => {
      const client = browser();
      const signedIn = await signIn(client);
      const reply = await patch(client, { display_name: '  Ada Lovelace  ' });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      const token = expectSessionCookie(reply);
      expect(reply.body).toMatchObject({ ok: true, token, account: { did_oc: signedIn.did, display_name: 'Ada Lovelace' } });
      expect(decodeJwt(token).payload.name).toBe('Ada Lovelace');
      expect(decodeJwt(token).payload.jti).toBe(decodeJwt(signedIn.token).payload.jti);
      expect((await client.me()).body.account.display_name).toBe('Ada Lovelace');
      const stale = browser();
      stale.cookie = signedIn.token;
      expectError(await stale.me(), 401, 'not_authenticated');
    });

    it('shows the new name to every roster and browser that holds the account', async () => {
      const walletA = newWallet();
      const editor = browser();
      const accountA = await signIn(editor, walletA);
      // Another browser holds A in its roster while B is active.
      const other = browser();
      await signIn(other, walletA);
      await signIn(other, newWallet(), true);

      expect((await patch(editor, { display_name: 'Grace' })).status).toBe(200);
      const me = await other.me();
      expect(me.body.roster).toEqual([expect.objectContaining({ did_oc: accountA.did, display_name: 'Grace' })]);
      expect((await other.switchTo(accountA.did)).body.account.display_name).toBe('Grace');
    });

    it('clears the name with null', async () => {
      const client = browser();
      await signIn(client);
      expect((await patch(client, { display_name: 'Temporary' })).status).toBe(200);
      const cleared = await patch(client, { display_name: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body.account.display_name).toBeNull();
      expect(decodeJwt(cleared.body.token).payload.name ?? null).toBeNull();
    });

    it('counts characters as code points, up to 64', async () => {
      const client = browser();
      await signIn(client);
      const emoji = '🟠'.repeat(64);
      expect((await patch(client, { display_name: emoji })).body.account.display_name).toBe(emoji);
      expect((await patch(client, { display_name: 'x'.repeat(64) })).status).toBe(200);
      const tooLong = await patch(client, { display_name: 'x'.repeat(65) });
      expectError(tooLong, 400, 'bad_request');
      expect(tooLong.body.detail).toContain('display_name');
      // NFC: a decomposed "é" is one character and is stored composed.
      expect((await patch(client, { display_name: 'Rene\u0301' })).body.account.display_name).toBe('Ren\u00e9');
    });

    it.each([
      ['blank', '   '],
      ['empty', ''],
      ['a line break', 'Ada\nLovelace'],
      ['a trailing carriage return', 'Ada\r'],
      ['a NUL', 'Ada\u0000'],
      ['a right-to-left override', 'Ada\u202egnp.exe'],
      ['an unpaired surrogate', 'Ada\ud800'],
    ])('refuses a name with %s with 400 bad_request', async (_label, name) => {
      const client = browser();
      await signIn(client);
      const reply = await patch(client, { display_name: name });
      expectError(reply, 400, 'bad_request');
      expect(reply.body.detail).toContain('display_name');
      expect((await client.me()).body.account.display_name).toBeNull();
    });

    it('refuses a name that is not a string', async () => {
      const client = browser();
      await signIn(client);
      expectError(await patch(client, { display_name: 42 }), 400, 'bad_request');
    });
  });

  describe('display_identity', () => {
    it('switches a Bitcoin account to its did and back to the default', async () => {
      const client = browser();
      const wallet = newWallet();
      const signedIn = await signIn(client, wallet);
      const toDid = await patch(client, { display_identity: 'did' });
      expect(toDid.status).toBe(200);
      expect(toDid.body.account.display_identity).toEqual({ kind: 'did', value: signedIn.did });
      expect(decodeJwt(toDid.body.token).payload.display_identity).toEqual({ kind: 'did', value: signedIn.did });
      const toBtc = await patch(client, { display_identity: 'btc' });
      expect(toBtc.body.account.display_identity).toEqual({ kind: 'btc', value: wallet.address });
      expect((await patch(client, { display_identity: 'did' })).status).toBe(200);
      const reset = await patch(client, { display_identity: null });
      expect(reset.body.account.display_identity).toEqual({ kind: 'btc', value: wallet.address });
    });

    it('refuses a kind the account does not hold, or an unknown kind, with 400', async () => {
      const client = browser();
      await signIn(client);
      for (const kind of ['email', 'nostr']) {
        const reply = await patch(client, { display_identity: kind });
        expectError(reply, 400, 'bad_request');
        expect(reply.body.detail).toContain('display_identity');
      }
      expectError(await patch(client, { display_identity: 'github' }), 400, 'bad_request');
      expectError(await patch(client, { display_identity: 1 }), 400, 'bad_request');
    });

    it('shows an e-mail to the account but keeps it out of the JWT; an e-mail account has no btc to show', async () => {
      const client = browser();
      const email = 'display-me@example.org';
      const signedIn = await signInByEmail(client, email);
      expectError(await patch(client, { display_identity: 'btc' }), 400, 'bad_request');
      expect((await patch(client, { display_identity: 'did' })).body.account.display_identity).toEqual({
        kind: 'did',
        value: signedIn.did,
      });
      const shown = await patch(client, { display_identity: 'email', display_name: 'Mail User' });
      expect(shown.status).toBe(200);
      expect(shown.body.account).toMatchObject({ display_name: 'Mail User', display_identity: { kind: 'email', value: email } });
      const claims = decodeJwt(shown.body.token).payload;
      expect(JSON.stringify(claims)).not.toContain(email);
      expect(claims.name).toBe('Mail User');
    });
  });

  describe('requests', () => {
    it('refuses an empty edit with 400 bad_request', async () => {
      const client = browser();
      await signIn(client);
      expectError(await patch(client, {}), 400, 'bad_request');
      expectError(await patch(client, { unknown_field: 'x' }), 400, 'bad_request');
    });

    it('needs a session (401) and refuses cross-site requests (403)', async () => {
      expectError(await patch(browser(), { display_name: 'Nobody' }), 401, 'not_authenticated');
      const client = browser();
      await signIn(client);
      expectError(await patch(client, { display_name: 'Mallory' }, { origin: EVIL_ORIGIN }), 403, 'cross_site');
      expectError(await patch(client, { display_name: 'Mallory' }, { origin: '', 'sec-fetch-site': 'cross-site' }), 403, 'cross_site');
      expect((await client.me()).body.account.display_name).toBeNull();
    });
  });
}

await forEachEngine('account edit', accountEdit);
