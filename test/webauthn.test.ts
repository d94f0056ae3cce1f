/**
 * Security keys and passkeys through HTTP (docs/protocol.md §6, docs/api.md
 * "Security keys and passkeys"), on every engine: the full WebAuthn
 * ceremonies with software authenticators making real attestations and
 * assertions (packed and none; ES256 and EdDSA), the body shapes the
 * OrangeCheck client's hooks read, and every refusal with its code: a
 * replayed or foreign challenge, a wrong origin or RP id, a counter that goes
 * back, another account's key, a removed key.
 */
import { describe, expect, it } from 'vitest';
import { newWallet, type Reply, type Wallet } from './support/auth-client.js';
import {
  AuthHarness,
  decodeJwt,
  expectError,
  expectSessionCookie,
  forEachEngine,
  LOCAL_ORIGIN,
  rosterDidsOf,
  stepUpWithKey,
  useAuthSuite,
  type TimedBrowser,
} from './support/auth-harness.js';
import { MINUTE, SECOND } from './support/clock.js';
import { SoftwareAuthenticator, type AuthenticatorOptions, type Bend } from './support/webauthn-authenticator.js';

function key(options: Partial<AuthenticatorOptions> = {}): SoftwareAuthenticator {
  return new SoftwareAuthenticator({ origin: LOCAL_ORIGIN, ...options });
}

function webauthnSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  async function signedIn(
    wallet: Wallet = newWallet(),
    client: TimedBrowser = auth.harness.browser(auth.app),
  ): Promise<{ client: TimedBrowser; wallet: Wallet; did: string }> {
    const reply = await client.signIn(wallet);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { client, wallet, did: reply.body.account.did_oc };
  }

  async function sudo(client: TimedBrowser, wallet: Wallet): Promise<void> {
    const reply = await client.post('/api/auth/sudo', await client.prove(wallet, 'sudo'));
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  }

  async function registerOptions(
    client: TimedBrowser,
    body: Record<string, unknown> = {},
  ): Promise<{ options: any; challenge_token: string }> {
    const reply = await client.post('/api/auth/webauthn/register/options', body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  }

  /** Answers a registration challenge with `response`. */
  function verifyRegistration(client: TimedBrowser, challengeToken: string, response: unknown): Promise<Reply> {
    return client.post('/api/auth/webauthn/register/verify', { challenge_token: challengeToken, response });
  }

  /** Answers an assertion challenge with `response`. */
  function verifyAssertion(client: TimedBrowser, challengeToken: string, response: unknown): Promise<Reply> {
    return client.post('/api/auth/webauthn/assertion/verify', { challenge_token: challengeToken, response });
  }

  async function register(
    client: TimedBrowser,
    authenticator: SoftwareAuthenticator,
    body: Record<string, unknown> = {},
    bend: Bend = {},
  ): Promise<Reply> {
    const started = await registerOptions(client, body);
    const response = authenticator.create(started.options, bend);
    return client.post('/api/auth/webauthn/register/verify', {
      challenge_token: started.challenge_token,
      response,
      ...(body.label === undefined ? {} : { label: body.label }),
    });
  }

  /** A signed-in account with one key of `authenticator` registered. */
  async function withKey(
    authenticator = key(),
    body: Record<string, unknown> = {},
  ): Promise<{ client: TimedBrowser; wallet: Wallet; did: string; id: string }> {
    const account = await signedIn();
    await sudo(account.client, account.wallet);
    const reply = await register(account.client, authenticator, body);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { ...account, id: reply.body.credential.id };
  }

  async function assertionOptions(client: TimedBrowser): Promise<{ options: any; challenge_token: string }> {
    const reply = await client.post('/api/auth/webauthn/assertion/options', { purpose: 'spend_over_1m' });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body;
  }

  async function stepUp(client: TimedBrowser, authenticator: SoftwareAuthenticator, bend: Bend = {}): Promise<Reply> {
    const started = await assertionOptions(client);
    return verifyAssertion(client, started.challenge_token, authenticator.get(started.options, bend));
  }

  async function passkeySignIn(client: TimedBrowser, authenticator: SoftwareAuthenticator, add = false, bend: Bend = {}): Promise<Reply> {
    const options = await client.post('/api/auth/passkey/options');
    expect(options.status, JSON.stringify(options.body)).toBe(200);
    return client.post(`/api/auth/passkey/signin${add ? '?add=1' : ''}`, {
      challenge_token: options.body.challenge_token,
      response: authenticator.get(options.body.options, bend),
    });
  }

  describe('registering', () => {
    it('needs a fresh step-up: 401 sudo_required before it, and again once 5 minutes have passed', async () => {
      const { client, wallet } = await signedIn();
      expectError(await client.post('/api/auth/webauthn/register/options', {}), 401, 'sudo_required');
      await sudo(client, wallet);
      auth.harness.clock.advance(5 * MINUTE);
      expectError(await client.post('/api/auth/webauthn/register/options', {}), 401, 'sudo_required');
      expectError(await auth.harness.browser(auth.app).post('/api/auth/webauthn/register/options', {}), 401, 'not_authenticated');
    });

    it('answers creation options for this host as the relying party, and stores an ES256 key with packed attestation', async () => {
      const { client, wallet, did } = await signedIn();
      await sudo(client, wallet);
      const started = await registerOptions(client, { label: 'Desk key' });
      expect(started.options).toMatchObject({
        rp: { id: 'localhost', name: 'localhost' },
        user: { name: wallet.address },
        attestation: 'none',
        authenticatorSelection: { residentKey: 'discouraged', userVerification: 'preferred' },
        excludeCredentials: [],
      });
      expect(started.options.pubKeyCredParams.map((param: { alg: number }) => param.alg)).toEqual([-8, -7, -257]);
      expect(started.options.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // The user handle is opaque: neither the account id nor the did.
      expect(Buffer.from(started.options.user.id, 'base64url')).toHaveLength(16);
      expect(did).not.toContain(Buffer.from(started.options.user.id, 'base64url').toString('hex'));

      const authenticator = key({ attestation: 'packed', attachment: 'cross-platform' });
      const reply = await client.post('/api/auth/webauthn/register/verify', {
        challenge_token: started.challenge_token,
        response: authenticator.create(started.options),
        label: 'Desk key',
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body).toEqual({
        ok: true,
        credential: {
          id: authenticator.credentials[0]?.id.toString('base64url'),
          label: 'Desk key',
          authenticator_type: 'cross-platform',
          transports: ['usb', 'nfc'],
          user_verified: true,
          created_at: new Date(auth.harness.clock.ms).toISOString(),
          last_used_at: null,
          sign_in: false,
          multi_device: false,
          backed_up: false,
        },
      });
      expect(reply.headers['cache-control']).toBe('no-store, private');
    });

    it('stores an EdDSA key with no attestation, lists keys oldest first and excludes them from the next options', async () => {
      const first = key({ alg: 'EdDSA' });
      const { client, id } = await withKey(first);
      const second = key({ attestation: 'packed', backedUp: true, attachment: 'platform', counts: false });
      auth.harness.clock.advance(SECOND);
      const added = await register(client, second);
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      expect(added.body.credential).toMatchObject({
        label: 'Security key',
        authenticator_type: 'platform',
        transports: ['internal'],
        multi_device: true,
        backed_up: true,
      });

      const listed = await client.get('/api/auth/webauthn/credentials');
      expect(listed.status).toBe(200);
      expect(listed.body.credentials.map((credential: { id: string }) => credential.id)).toEqual([id, added.body.credential.id]);
      const next = await registerOptions(client);
      expect(next.options.excludeCredentials.map((entry: { id: string }) => entry.id)).toEqual([id, added.body.credential.id]);
      // The same authenticator again: the browser refuses, as excludeCredentials asks.
      expect(() => first.create(next.options)).toThrow(/already registered/);
    });

    it('refuses a wrong origin, a wrong RP id, another challenge, a replay and a key registered already', async () => {
      const { client, wallet } = await signedIn();
      await sudo(client, wallet);
      const authenticator = key();

      const foreign = await registerOptions(client);
      expectError(
        await verifyRegistration(
          client,
          foreign.challenge_token,
          authenticator.create(foreign.options, { origin: 'https://evil.example' }),
        ),
        400,
        'webauthn_origin_mismatch',
      );
      const otherRp = await registerOptions(client);
      expectError(
        await verifyRegistration(client, otherRp.challenge_token, authenticator.create(otherRp.options, { rpId: 'evil.example' })),
        400,
        'webauthn_rp_id_mismatch',
      );
      const a = await registerOptions(client);
      const b = await registerOptions(client);
      expectError(await verifyRegistration(client, a.challenge_token, authenticator.create(b.options)), 401, 'invalid_challenge');

      const good = await registerOptions(client);
      const response = authenticator.create(good.options);
      expect((await verifyRegistration(client, good.challenge_token, response)).status).toBe(200);
      expectError(await verifyRegistration(client, good.challenge_token, response), 401, 'nonce_reused');

      // An authenticator that repeats a credential id, on another account: ids are unique on the host.
      const other = await signedIn();
      await sudo(other.client, other.wallet);
      const repeat = await register(other.client, key(), {}, { credentialId: authenticator.credentials.at(-1)?.id as Buffer });
      expectError(repeat, 409, 'credential_exists');
      expect((await other.client.get('/api/auth/webauthn/credentials')).body.credentials).toEqual([]);
    });

    it('holds at most 20 keys per account, counted again when the last one is verified', async () => {
      const { client, wallet } = await signedIn();
      await sudo(client, wallet);
      const pending = await registerOptions(client);
      for (let index = 0; index < 20; index += 1) expect((await register(client, key())).status).toBe(200);
      expectError(await client.post('/api/auth/webauthn/register/options', {}), 400, 'bad_request');
      // Options asked for before the 20th key cannot add a 21st.
      expectError(await verifyRegistration(client, pending.challenge_token, key().create(pending.options)), 400, 'bad_request');
      expect((await client.get('/api/auth/webauthn/credentials')).body.credentials).toHaveLength(20);
    });

    it('refuses an expired challenge token and one issued to another session', async () => {
      const { client, wallet } = await signedIn();
      await sudo(client, wallet);
      const started = await registerOptions(client);
      const response = key().create(started.options);
      auth.harness.clock.advance(5 * MINUTE);
      expectError(await verifyRegistration(client, started.challenge_token, response), 401, 'invalid_challenge');

      const other = await signedIn();
      await sudo(client, wallet);
      const mine = await registerOptions(client);
      expectError(await verifyRegistration(other.client, mine.challenge_token, key().create(mine.options)), 401, 'invalid_challenge');
      const forged = `${mine.challenge_token.split('.')[0]}.${'A'.repeat(43)}`;
      expectError(await verifyRegistration(client, forged, key().create(mine.options)), 401, 'invalid_challenge');
    });

    it('a sign-in passkey must verify the person and be discoverable', async () => {
      const { client, wallet } = await signedIn();
      await sudo(client, wallet);
      const started = await registerOptions(client, { sign_in: true });
      expect(started.options.authenticatorSelection).toMatchObject({ residentKey: 'required', userVerification: 'required' });
      expectError(
        await verifyRegistration(client, started.challenge_token, key({ userVerifying: false }).create(started.options)),
        401,
        'verify_failed',
      );
      const again = await registerOptions(client, { sign_in: true });
      expectError(
        await verifyRegistration(client, again.challenge_token, key().create(again.options, { rk: false })),
        400,
        'credential_not_discoverable',
      );
      // A step-up key need not verify the person.
      expect((await register(client, key({ userVerifying: false }))).body.credential).toMatchObject({
        user_verified: false,
        sign_in: false,
      });
    });
  });

  describe('step-up with a key', () => {
    it('sets step_up_at on this session row only, re-mints the cookie and records the use', async () => {
      const authenticator = key({ alg: 'EdDSA', attestation: 'packed' });
      const { client, did, id } = await withKey(authenticator);
      const before = client.cookie as string;
      const started = await assertionOptions(client);
      expect(started.options).toMatchObject({
        rpId: 'localhost',
        userVerification: 'preferred',
        allowCredentials: [{ id, type: 'public-key' }],
      });

      auth.harness.clock.advance(SECOND);
      const reply = await verifyAssertion(client, started.challenge_token, authenticator.get(started.options));
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      const token = expectSessionCookie(reply);
      expect(reply.body).toMatchObject({ ok: true, token, step_up_at: auth.harness.clock.seconds, account: { did_oc: did } });
      const claims = decodeJwt(token).payload;
      expect(claims.step_up_at).toBe(auth.harness.clock.seconds);
      expect(claims.jti).toBe(decodeJwt(before).payload.jti);
      const row = await auth.harness.rowOf(token);
      expect(row?.step_up_at).toBe(auth.harness.clock.ms);
      // The key is not a re-proof: sudo_at is what the sudo that preceded registration left.
      expect(row?.sudo_at).not.toBe(auth.harness.clock.ms);
      const stored = await auth.harness.store.findWebAuthnCredential(id);
      expect(stored).toMatchObject({ counter: 2, last_used_at: auth.harness.clock.ms });
      expect((await client.get('/api/auth/webauthn/credentials')).body.credentials[0].last_used_at).toBe(
        new Date(auth.harness.clock.ms).toISOString(),
      );
    });

    it("from a pinned tab, as useStepUpAuth runs: the cookie gets step_up_at and the tab's stale pin is superseded, so a re-pin carries it", async () => {
      const authenticator = key();
      const { client, did } = await withKey(authenticator);
      const pinned = await client.post('/api/auth/tab', {});
      const tab = { 'x-oc-tab-session': pinned.body.token as string };
      const started = await client.request('POST', '/api/auth/webauthn/assertion/options', { purpose: 'spend_over_1m' }, tab);
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      auth.harness.clock.advance(SECOND);
      const reply = await client.request(
        'POST',
        '/api/auth/webauthn/assertion/verify',
        { challenge_token: started.body.challenge_token, response: authenticator.get(started.body.options) },
        tab,
      );
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      expect(reply.body.step_up_at).toBe(auth.harness.clock.seconds);
      // The hook reads only step_up_at and calls refresh(): the cookie must carry the claim.
      expect(decodeJwt(expectSessionCookie(reply)).payload).toMatchObject({
        did_oc: did,
        step_up_at: auth.harness.clock.seconds,
        amr: ['swk', 'hwk', 'mfa'],
      });
      expect((await client.request('GET', '/api/auth/me', undefined, tab)).status).toBe(401);
      const repinned = await client.post('/api/auth/tab', {});
      expect(decodeJwt(repinned.body.token).payload.step_up_at).toBe(auth.harness.clock.seconds);
    });

    it('is per account: after a switch, the other account has no step_up_at of its own', async () => {
      const authenticator = key();
      const first = await withKey(authenticator);
      const second = await first.client.signIn(newWallet(), { add: true });
      expect(second.status).toBe(200);
      expect((await first.client.post('/api/auth/switch', { did_oc: first.did })).status).toBe(200);
      expect((await stepUp(first.client, authenticator)).status).toBe(200);
      const switched = await first.client.post('/api/auth/switch', { did_oc: second.body.account.did_oc });
      expect(decodeJwt(switched.body.token).payload.step_up_at).toBeUndefined();
      // That account has no key: 409, which the client shows as "add a key first".
      expectError(await first.client.post('/api/auth/webauthn/assertion/options', {}), 409, 'no_credentials_registered');
      const back = await first.client.post('/api/auth/switch', { did_oc: first.did });
      expect(decodeJwt(back.body.token).payload.step_up_at).toBe(auth.harness.clock.seconds);
    });

    it("refuses a replay, a counter that goes back, another account's key, a wrong origin and a wrong RP id", async () => {
      const authenticator = key();
      const { client } = await withKey(authenticator);
      const started = await assertionOptions(client);
      const response = authenticator.get(started.options);
      expect((await verifyAssertion(client, started.challenge_token, response)).status).toBe(200);
      expectError(await verifyAssertion(client, started.challenge_token, response), 401, 'nonce_reused');
      // The same signed response against a new challenge: it answers the old one.
      const fresh = await assertionOptions(client);
      expectError(await verifyAssertion(client, fresh.challenge_token, response), 401, 'invalid_challenge');

      const stored = authenticator.credentials[0];
      expectError(await stepUp(client, authenticator, { counter: stored?.counter ?? 0 }), 401, 'cloned_authenticator');
      expectError(await stepUp(client, authenticator, { counter: 1 }), 401, 'cloned_authenticator');
      expect((await stepUp(client, authenticator)).status).toBe(200);

      const stranger = key();
      const other = await withKey(stranger);
      const mine = await assertionOptions(client);
      expectError(
        await verifyAssertion(client, mine.challenge_token, stranger.get({ ...mine.options, allowCredentials: [] })),
        401,
        'credential_outside_allowlist',
      );
      expect(other.id).toBeDefined();

      expectError(await stepUp(client, authenticator, { origin: 'https://evil.example' }), 400, 'webauthn_origin_mismatch');
      expectError(await stepUp(client, authenticator, { rpId: 'evil.example' }), 400, 'webauthn_rp_id_mismatch');
      expectError(await stepUp(client, authenticator, { type: 'webauthn.create' }), 401, 'verify_failed');
    });

    it('refuses a signature that does not verify and a changed backup-eligibility flag', async () => {
      const authenticator = key();
      const { client } = await withKey(authenticator);
      const started = await assertionOptions(client);
      const response = authenticator.get(started.options) as { response: { signature: string } };
      const signature = Buffer.from(response.response.signature, 'base64url');
      signature[signature.length - 1]! ^= 1;
      response.response.signature = signature.toString('base64url');
      expectError(await verifyAssertion(client, started.challenge_token, response), 401, 'verify_failed');
      expectError(await stepUp(client, authenticator, { backupEligible: true }), 401, 'verify_failed');
    });

    it('a key is also a re-proof for POST /api/auth/sudo: it sets sudo_at, not step_up_at', async () => {
      const authenticator = key();
      const { client } = await withKey(authenticator);
      auth.harness.clock.advance(10 * MINUTE);
      const started = await assertionOptions(client);
      const reply = await client.post('/api/auth/sudo', {
        challenge_token: started.challenge_token,
        response: authenticator.get(started.options),
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      const claims = decodeJwt(expectSessionCookie(reply)).payload;
      expect(claims.sudo_at).toBe(auth.harness.clock.seconds);
      expect(claims.step_up_at).toBeUndefined();
      // A key proof mixed with another proof's fields is refused.
      const mixed = await assertionOptions(client);
      expectError(
        await client.post('/api/auth/sudo', {
          challenge_token: mixed.challenge_token,
          response: authenticator.get(mixed.options),
          email: 'a@example.org',
        }),
        400,
        'bad_request',
      );
      expectError(await client.post('/api/auth/sudo', { challenge_token: mixed.challenge_token }), 400, 'bad_request');
    });
  });

  describe('managing keys', () => {
    it('renames a key of the active account only, and refuses bad labels and turning a key into a passkey', async () => {
      const { client, id } = await withKey();
      const renamed = await client.request('PATCH', `/api/auth/webauthn/credentials/${id}`, { label: '  YubiKey 5C  ' });
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      expect(renamed.body.credential).toMatchObject({ id, label: 'YubiKey 5C' });
      expectError(await client.request('PATCH', `/api/auth/webauthn/credentials/${id}`, { label: 'a\u202eb' }), 400, 'bad_request');
      expectError(await client.request('PATCH', `/api/auth/webauthn/credentials/${id}`, { label: '   ' }), 400, 'bad_request');
      expectError(await client.request('PATCH', `/api/auth/webauthn/credentials/${id}`, {}), 400, 'bad_request');
      expectError(await client.request('PATCH', `/api/auth/webauthn/credentials/${id}`, { sign_in: true }), 400, 'bad_request');
      expectError(await client.request('PATCH', '/api/auth/webauthn/credentials/not+base64', { label: 'x' }), 400, 'bad_request');

      const other = await signedIn();
      expectError(await other.client.request('PATCH', `/api/auth/webauthn/credentials/${id}`, { label: 'Mine' }), 404, 'not_found');
      expectError(await other.client.request('DELETE', `/api/auth/webauthn/credentials/${id}`), 401, 'sudo_required');
    });

    it('removing needs sudo_at or step_up_at younger than 5 minutes; a removed key no longer steps up', async () => {
      const authenticator = key();
      const { client, id, wallet } = await withKey(authenticator);
      auth.harness.clock.advance(5 * MINUTE);
      expectError(await client.request('DELETE', `/api/auth/webauthn/credentials/${id}`), 401, 'sudo_required');
      expect((await stepUp(client, authenticator)).status).toBe(200);
      const pending = await assertionOptions(client);
      const removed = await client.request('DELETE', `/api/auth/webauthn/credentials/${id}`);
      expect(removed.status, JSON.stringify(removed.body)).toBe(200);
      expect(removed.body).toEqual({ ok: true });
      expectError(await client.request('DELETE', `/api/auth/webauthn/credentials/${id}`), 404, 'not_found');
      expect((await client.get('/api/auth/webauthn/credentials')).body.credentials).toEqual([]);
      expectError(
        await verifyAssertion(client, pending.challenge_token, authenticator.get(pending.options)),
        401,
        'credential_outside_allowlist',
      );
      expectError(await client.post('/api/auth/webauthn/assertion/options', {}), 409, 'no_credentials_registered');
      // With sudo instead of a key step-up.
      await sudo(client, wallet);
      const again = await register(client, key());
      expect((await client.request('DELETE', `/api/auth/webauthn/credentials/${again.body.credential.id}`)).status).toBe(200);
    });
  });

  describe('passkey sign-in', () => {
    it("signs in on a fresh browser (amr hwk and user, the row's method passkey), and add=1 keeps the roster", async () => {
      const passkey = key({ backedUp: true, counts: false, attachment: 'platform' });
      const owner = await withKey(passkey, { sign_in: true, label: 'Phone' });
      const listed = (await owner.client.get('/api/auth/webauthn/credentials')).body.credentials;
      expect(listed[0]).toMatchObject({ label: 'Phone', sign_in: true, multi_device: true });

      const fresh = auth.harness.browser(auth.app);
      const options = await fresh.post('/api/auth/passkey/options');
      expect(options.body.options).toMatchObject({ rpId: 'localhost', userVerification: 'required', allowCredentials: [] });
      const reply = await fresh.post('/api/auth/passkey/signin', {
        challenge_token: options.body.challenge_token,
        response: passkey.get(options.body.options),
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      const claims = decodeJwt(expectSessionCookie(reply)).payload;
      expect(claims).toMatchObject({ did_oc: owner.did, signing_method: 'passkey', amr: ['hwk', 'user'] });
      expect((await fresh.get('/api/auth/sessions')).body.sessions[0]).toMatchObject({ signing_method: 'passkey' });
      expect(claims.step_up_at).toBeUndefined();
      expect(claims.sudo_at).toBeUndefined();
      // The passkey sign-in is a proof made in this browser: it lets this browser link for 5 minutes.
      const link = await fresh.post('/api/auth/link/btc', await fresh.prove(newWallet(), 'link'));
      expect(link.status, JSON.stringify(link.body)).toBe(200);

      // A counter-less passkey signs in again (0 stays 0).
      const someoneElse = await signedIn();
      const added = await passkeySignIn(someoneElse.client, passkey, true);
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      expect(added.body.account.did_oc).toBe(owner.did);
      expect(rosterDidsOf(await someoneElse.client.me())).toEqual([someoneElse.did]);
      const replaced = await passkeySignIn(auth.harness.browser(auth.app), passkey, false);
      expect(replaced.status).toBe(200);
    });

    it('refuses a step-up-only key, a key without user verification, a wrong user handle and an unknown key', async () => {
      const stepUpOnly = key();
      await withKey(stepUpOnly);
      expectError(await passkeySignIn(auth.harness.browser(auth.app), stepUpOnly), 401, 'credential_outside_allowlist');

      const passkey = key();
      const owner = await withKey(passkey, { sign_in: true });
      expectError(await passkeySignIn(auth.harness.browser(auth.app), passkey, false, { userVerified: false }), 401, 'verify_failed');
      expectError(
        await passkeySignIn(auth.harness.browser(auth.app), passkey, false, { userHandle: Buffer.alloc(16).toString('base64url') }),
        401,
        'verify_failed',
      );
      const unknown = key();
      unknown.create({
        challenge: 'AAAA',
        rp: { id: 'localhost', name: 'localhost' },
        user: { id: 'AAAA', name: 'nobody' },
        pubKeyCredParams: [{ alg: -7 }],
      });
      expectError(await passkeySignIn(auth.harness.browser(auth.app), unknown), 401, 'credential_outside_allowlist');
      // `sign_in: false` keeps the passkey for step-up only.
      const off = await owner.client.request('PATCH', `/api/auth/webauthn/credentials/${owner.id}`, { sign_in: false });
      expect(off.body.credential.sign_in).toBe(false);
      expectError(await passkeySignIn(auth.harness.browser(auth.app), passkey), 401, 'credential_outside_allowlist');
      // A step-up challenge token is not a sign-in one.
      const assert = await assertionOptions(owner.client);
      expectError(
        await auth.harness
          .browser(auth.app)
          .post('/api/auth/passkey/signin', { challenge_token: assert.challenge_token, response: passkey.get(assert.options) }),
        401,
        'invalid_challenge',
      );
    });
  });

  describe('several instances', () => {
    it("a challenge is used once across instances on one database, and any instance verifies another's token", async () => {
      const authenticator = key();
      const { client } = await withKey(authenticator);
      const second = await auth.harness.app();
      const elsewhere = auth.harness.browser(second);
      elsewhere.cookie = client.cookie;
      const started = await assertionOptions(client);
      const response = authenticator.get(started.options);
      const replies = await Promise.all([
        verifyAssertion(client, started.challenge_token, response),
        verifyAssertion(elsewhere, started.challenge_token, response),
      ]);
      expect(replies.map((reply) => reply.status).sort()).toEqual([200, 401]);
      // The loser finds the challenge spent, or (when the winner re-minted first) its cookie replaced.
      expect(['nonce_reused', 'not_authenticated']).toContain(replies.find((reply) => reply.status === 401)?.body.reason);
      const winner = replies.find((reply) => reply.status === 200);
      client.cookie = winner?.body.token;
      elsewhere.cookie = winner?.body.token;
      expectError(await verifyAssertion(elsewhere, started.challenge_token, response), 401, 'nonce_reused');
      // A token issued by one instance verifies on the other.
      const fresh = await assertionOptions(client);
      expect((await verifyAssertion(elsewhere, fresh.challenge_token, authenticator.get(fresh.options))).status).toBe(200);
    });
  });

  describe('bad input', () => {
    it('answers malformed bodies with 400 or 401 and a code, never a 500', async () => {
      const authenticator = key();
      const { client } = await withKey(authenticator);
      const started = await assertionOptions(client);
      const good = authenticator.get(started.options) as any;
      const bodies: unknown[] = [
        {},
        { challenge_token: started.challenge_token },
        { challenge_token: started.challenge_token, response: {} },
        { challenge_token: started.challenge_token, response: { ...good, type: 'password' } },
        { challenge_token: started.challenge_token, response: { ...good, response: { ...good.response, clientDataJSON: 'bm90IGpzb24' } } },
        {
          challenge_token: started.challenge_token,
          response: { ...good, response: { ...good.response, clientDataJSON: Buffer.from('{"type":1}').toString('base64url') } },
        },
        { challenge_token: started.challenge_token, response: { ...good, response: { ...good.response, authenticatorData: 'AA' } } },
        { challenge_token: started.challenge_token, response: { ...good, response: { ...good.response, signature: '!!' } } },
        { challenge_token: 'x', response: good },
        { challenge_token: `${Buffer.from('[]').toString('base64url')}.x`, response: good },
        { challenge_token: started.challenge_token, response: { ...good, id: 'A'.repeat(2000) } },
      ];
      for (const body of bodies) {
        const reply = await client.post('/api/auth/webauthn/assertion/verify', body);
        expect([400, 401], JSON.stringify({ body, reply: reply.body })).toContain(reply.status);
        expect(typeof reply.body.reason).toBe('string');
      }
      const registration = await registerOptions(client);
      for (const attestationObject of ['AA', 'oA', Buffer.from([0xa1, 0x63, 0x66, 0x6d, 0x74, 0x60]).toString('base64url')]) {
        const response = key().create(registration.options) as any;
        response.response.attestationObject = attestationObject;
        const reply = await verifyRegistration(client, registration.challenge_token, response);
        expect(reply.status, JSON.stringify(reply.body)).toBe(401);
        expect(reply.body.reason).toBe('verify_failed');
      }
      expectError(await client.post('/api/auth/webauthn/register/options', { label: 'x'.repeat(65) }), 400, 'bad_request');
      expectError(await client.post('/api/auth/webauthn/register/options', { sign_in: 'yes' }), 400, 'bad_request');
    });
  });
}

await forEachEngine('security keys and passkeys', webauthnSuite);

describe('the relying party', () => {
  it('is the family domain when PUBLIC_URL lies within COOKIE_DOMAIN, and family sites under it may run ceremonies', async () => {
    const harness = await AuthHarness.open('sqlite');
    try {
      const app = await harness.app({ PUBLIC_URL: 'https://auth.example.test', COOKIE_DOMAIN: '.example.test' });
      const client = harness.browser(app, 'https://shop.example.test');
      const wallet = newWallet();
      expect((await client.signIn(wallet)).status).toBe(200);
      expect((await client.post('/api/auth/sudo', await client.prove(wallet, 'sudo'))).status).toBe(200);
      const started = await client.post('/api/auth/webauthn/register/options', {});
      expect(started.body.options.rp.id).toBe('example.test');
      const onShop = new SoftwareAuthenticator({ origin: 'https://shop.example.test' });
      const reply = await client.post('/api/auth/webauthn/register/verify', {
        challenge_token: started.body.challenge_token,
        response: onShop.create(started.body.options),
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      // The same key steps up on the host's own pages.
      const host = harness.browser(app, 'https://auth.example.test');
      host.cookie = client.cookie;
      expect((await stepUpWithKey(host, onShop, { origin: 'https://auth.example.test' })).status).toBe(200);
      // A look-alike outside the family domain is refused, even over https.
      expectError(await stepUpWithKey(host, onShop, { origin: 'https://example.test.evil.example' }), 400, 'webauthn_origin_mismatch');
    } finally {
      await harness.close();
    }
  });

  it('is unavailable, with 503 webauthn_unavailable, when PUBLIC_URL is an IP address', async () => {
    const harness = await AuthHarness.open('sqlite');
    try {
      const app = await harness.app({ PUBLIC_URL: 'http://127.0.0.1:8787' });
      const reply = await harness.browser(app, 'http://127.0.0.1:8787').post('/api/auth/passkey/options');
      expectError(reply, 503, 'webauthn_unavailable');
      expect(reply.body.detail).toMatch(/IP address/);
    } finally {
      await harness.close();
    }
  });
});
