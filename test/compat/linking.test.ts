/**
 * Linking as the OrangeCheck account component does it (oc-packages
 * `auth-client/src/linked-identities.tsx` at 3d21946):
 *
 * - `BtcLinkForm.getChallenge`: `GET /api/challenge?addr&purpose=link&audience=<did_oc>`;
 *   `postLink`: `POST /api/auth/link/btc` with `{message, signature}` only;
 * - on 409 `address_linked_elsewhere` it shows `TransferConfirm` and sends the
 *   SAME message and signature again with `confirm_transfer: true`; the same
 *   for `EmailLinkForm.verify` with the same code;
 * - `OcLinkedIdentities` reads `{linked: [{id, kind, value, verified_at,
 *   verification_method, is_primary}], account_id, did_oc, merged_from}`
 *   from `GET /api/auth/identities`;
 * - `signin.tsx`'s "also link my other identity" (`linkPrompt`) runs the same
 *   link forms right after the sign-in, with no step-up in between.
 */
import { expect, it } from 'vitest';
import { signBip322 } from '../support/bitcoin-signer.js';
import { newWallet, type Wallet } from '../support/auth-client.js';
import { forEachEngine, useMailingAuthSuite, type TimedBrowser } from '../support/auth-harness.js';

function linkingSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useMailingAuthSuite(engine);

  async function mailedCode(client: TimedBrowser, email: string): Promise<{ code: string; token: string }> {
    const started = await client.post('/api/auth/email-otp/start', { email });
    const code = await auth.mailbox.nextCode(email);
    return { code, token: started.body.token };
  }

  /** Signed in with a fresh step-up, as the component's sudo round trip leaves it. */
  async function steppedUp(wallet: Wallet) {
    const client = auth.harness.browser(auth.app);
    const signedIn = await client.signIn(wallet);
    expect((await client.post('/api/auth/sudo', await client.prove(wallet, 'sudo'))).status).toBe(200);
    return { client, did: signedIn.body.account.did_oc as string };
  }

  /** linked-identities.tsx getChallenge: audience is the active account's did. */
  async function linkChallenge(client: TimedBrowser, wallet: Wallet, did: string): Promise<{ message: string; signature: string }> {
    auth.harness.clock.advance(1000);
    const challenge = await client.get(
      `/api/challenge?addr=${encodeURIComponent(wallet.address)}&purpose=link&audience=${encodeURIComponent(did)}`,
    );
    expect(challenge.status).toBe(200);
    return {
      message: challenge.body.message,
      signature: signBip322({ privateKey: wallet.privateKey, address: wallet.address, message: challenge.body.message }),
    };
  }

  it('links an address with {message, signature} and a did audience', async () => {
    const owner = newWallet();
    const { client, did } = await steppedUp(owner);
    const second = newWallet();
    const linked = await client.post('/api/auth/link/btc', await linkChallenge(client, second, did));
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);
    expect(linked.body.ok).toBe(true);

    // A proof made for another account's did is refused.
    const other = await steppedUp(newWallet());
    const stolen = await other.client.post('/api/auth/link/btc', await linkChallenge(client, newWallet(), did));
    expect(stolen.status).toBe(401);
    expect(stolen.body).toMatchObject({ reason: 'invalid_challenge', codes: ['aud_mismatch'] });
  });

  it('answers 409 without using the proof, and merges on the same proof with confirm_transfer', async () => {
    const elsewhere = newWallet();
    const victim = auth.harness.browser(auth.app);
    const mergedDid = (await victim.signIn(elsewhere)).body.account.did_oc;
    const { client, did } = await steppedUp(newWallet());
    const proof = await linkChallenge(client, elsewhere, did);

    const refused = await client.post('/api/auth/link/btc', proof);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ ok: false, reason: 'address_linked_elsewhere' });
    const merged = await client.post('/api/auth/link/btc', { ...proof, confirm_transfer: true });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    expect(merged.body.merged).toMatchObject({ did_oc: mergedDid });
    // Used now: a third send is a replay.
    expect((await client.post('/api/auth/link/btc', { ...proof, confirm_transfer: true })).body.reason).toBe('nonce_reused');

    const identities = await client.get('/api/auth/identities');
    expect(identities.body).toMatchObject({ ok: true, did_oc: did, account_id: did.slice('did:oc:'.length) });
    expect(identities.body.merged_from).toEqual([
      { did_oc: mergedDid, created_at: expect.any(String), last_signed_in_at: expect.any(String) },
    ]);
    expect(identities.body.linked).toContainEqual({
      id: expect.any(String),
      kind: 'btc',
      value: elsewhere.address,
      verified_at: expect.any(String),
      verification_method: 'bip322',
      is_primary: false,
    });
    expect(identities.body.linked.filter((row: { is_primary: boolean }) => row.is_primary)).toHaveLength(1);
  });

  it('does the same for an e-mail: 409, then the same code with confirm_transfer merges', async () => {
    const email = `taken-${engine}@example.org`;
    const holder = auth.harness.browser(auth.app);
    const { code: holderCode, token: holderToken } = await mailedCode(holder, email);
    const held = await holder.post('/api/auth/email-otp/verify', { email, code: holderCode, token: holderToken });
    expect(held.status).toBe(200);

    const { client } = await steppedUp(newWallet());
    const { code, token } = await mailedCode(client, email);
    const refused = await client.post('/api/auth/link/email', { email, code, token });
    expect(refused.status).toBe(409);
    expect(refused.body.reason).toBe('email_linked_elsewhere');
    const merged = await client.post('/api/auth/link/email', { email, code, token, confirm_transfer: true });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    expect(merged.body.merged).toMatchObject({ did_oc: held.body.account.did_oc });

    const identities = await client.get('/api/auth/identities');
    expect(identities.body.linked).toContainEqual(
      expect.objectContaining({ kind: 'email', value: email, verification_method: 'email-otp', is_primary: true }),
    );
  });

  it('links right after a sign-in, as the sign-in form\'s "also link" step does, with no step-up in between', async () => {
    const email = `also-link-${engine}@example.org`;
    const client = auth.harness.browser(auth.app);
    const { code: signInCode, token: signInToken } = await mailedCode(client, email);
    expect((await client.post('/api/auth/email-otp/verify', { email, code: signInCode, token: signInToken })).status).toBe(200);
    // The form asks /api/auth/me for the did the link challenge is bound to.
    const me = await client.get('/api/auth/me');
    const did = me.body.account.did_oc as string;
    const linked = await client.post('/api/auth/link/btc', await linkChallenge(client, newWallet(), did));
    expect(linked.status, JSON.stringify(linked.body)).toBe(200);

    const byWallet = auth.harness.browser(auth.app);
    const wallet = newWallet();
    await byWallet.signIn(wallet);
    const linkEmail = `also-link-wallet-${engine}@example.org`;
    const { code, token } = await mailedCode(byWallet, linkEmail);
    const linkedEmail = await byWallet.post('/api/auth/link/email', { email: linkEmail, code, token });
    expect(linkedEmail.status, JSON.stringify(linkedEmail.body)).toBe(200);
  });
}

await forEachEngine('linking as the OrangeCheck account component does it', linkingSuite);
