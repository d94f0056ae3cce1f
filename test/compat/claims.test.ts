/**
 * The session claims as @orangecheck/auth-core reads them (orangecheck/oc-packages
 * `auth-core/src/index.ts` at 153dda6, `SessionPayload` and `verifyStepUpClaim`):
 *
 * - `step_up_at` "only set by /api/auth/webauthn/assertion/verify": an ordinary
 *   sign-in and a re-proof leave it out, so `verifyStepUpClaim` never believes a
 *   hardware key was tapped when none was;
 * - `sudo_at` only by a re-proof (`verifySudoClaim`);
 * - `merged_from`: "historical did_ocs consolidated INTO this account via the
 *   /api/auth/link/btc transfer-under-dual-proof flow";
 * - an e-mail account shows a masked badge, never its address
 *   (docs/protocol.md §3);
 * - `signing_method` keeps the host's documented words (`bip322`,
 *   `email_otp`, `passkey`, `oauth:<provider>`; auth-core's type names only
 *   `bip322` of them, and reads the claim as a string), and the same travels
 *   as the standard `amr` (RFC 8176, docs/protocol.md §3).
 */
import { expect, it } from 'vitest';
import { newWallet } from '../support/auth-client.js';
import { decodeJwt, forEachEngine, LOCAL_ORIGIN, useMailingAuthSuite, type TimedBrowser } from '../support/auth-harness.js';
import { SoftwareAuthenticator } from '../support/webauthn-authenticator.js';

/** The two claims that say how the person signed in. */
function methodOf(token: string): { signing_method: unknown; amr: unknown } {
  const { signing_method, amr } = decodeJwt(token).payload as Record<string, unknown>;
  return { signing_method, amr };
}

function claimsSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useMailingAuthSuite(engine);

  async function emailSignIn(client: TimedBrowser, email: string) {
    const started = await client.post('/api/auth/email-otp/start', { email });
    const code = await auth.mailbox.nextCode(email);
    return client.post('/api/auth/email-otp/verify', { email, code, token: started.body.token });
  }

  it('sets neither step_up_at nor sudo_at on a sign-in, and only sudo_at on a re-proof', async () => {
    const client = auth.harness.browser(auth.app);
    const wallet = newWallet();
    const signedIn = await client.signIn(wallet);
    expect(signedIn.status).toBe(200);
    const claims = decodeJwt(signedIn.body.token).payload;
    expect(claims.step_up_at).toBeUndefined();
    expect(claims.sudo_at).toBeUndefined();

    const sudo = await client.post('/api/auth/sudo', await client.prove(wallet, 'sudo'));
    expect(sudo.status).toBe(200);
    const after = decodeJwt(sudo.body.token).payload;
    expect(after.sudo_at).toBe(auth.harness.clock.seconds);
    expect(after.step_up_at).toBeUndefined();
  });

  it('names the merged accounts in merged_from after a confirmed transfer, and keeps them on later tokens', async () => {
    const owner = auth.harness.browser(auth.app);
    const ownerWallet = newWallet();
    await owner.signIn(ownerWallet);
    const other = auth.harness.browser(auth.app);
    const otherWallet = newWallet();
    const merged = await other.signIn(otherWallet);
    expect(decodeJwt(merged.body.token).payload.merged_from).toBeUndefined();

    expect((await owner.post('/api/auth/sudo', await owner.prove(ownerWallet, 'sudo'))).status).toBe(200);
    const transfer = await owner.post('/api/auth/link/btc', { ...(await owner.prove(otherWallet, 'link')), confirm_transfer: true });
    expect(transfer.status, JSON.stringify(transfer.body)).toBe(200);
    expect(decodeJwt(transfer.body.token).payload.merged_from).toEqual([merged.body.account.did_oc]);

    // A new sign-in with the merged account's address lands in the survivor and says so.
    const again = await auth.harness.browser(auth.app).signIn(otherWallet);
    expect(again.body.account.did_oc).toBe(transfer.body.account.did_oc);
    expect(decodeJwt(again.body.token).payload.merged_from).toEqual([merged.body.account.did_oc]);
  });

  it('says how the person signed in as signing_method and as amr: a wallet swk, an e-mail code otp', async () => {
    const wallet = await auth.harness.browser(auth.app).signIn(newWallet());
    expect(wallet.status).toBe(200);
    expect(methodOf(wallet.body.token)).toEqual({ signing_method: 'bip322', amr: ['swk'] });

    const email = await emailSignIn(auth.harness.browser(auth.app), 'amr@example.org');
    expect(email.status, JSON.stringify(email.body)).toBe(200);
    expect(methodOf(email.body.token)).toEqual({ signing_method: 'email_otp', amr: ['otp'] });
    // The session row keeps its own method for the devices list.
    const client = auth.harness.browser(auth.app);
    await emailSignIn(client, 'rows@example.org');
    expect((await client.get('/api/auth/sessions')).body.sessions[0]).toMatchObject({ signing_method: 'email_otp' });
  });

  it('adds hwk and mfa to amr after a key step-up, on every later token of the row; a re-proof adds nothing', async () => {
    const client = auth.harness.browser(auth.app);
    const wallet = newWallet();
    await client.signIn(wallet);
    const sudo = await client.post('/api/auth/sudo', await client.prove(wallet, 'sudo'));
    expect(methodOf(sudo.body.token)).toEqual({ signing_method: 'bip322', amr: ['swk'] });

    const authenticator = new SoftwareAuthenticator({ origin: LOCAL_ORIGIN });
    const registering = await client.post('/api/auth/webauthn/register/options', {});
    const registered = await client.post('/api/auth/webauthn/register/verify', {
      challenge_token: registering.body.challenge_token,
      response: authenticator.create(registering.body.options),
    });
    expect(registered.status, JSON.stringify(registered.body)).toBe(200);
    const asserting = await client.post('/api/auth/webauthn/assertion/options', {});
    const stepUp = await client.post('/api/auth/webauthn/assertion/verify', {
      challenge_token: asserting.body.challenge_token,
      response: authenticator.get(asserting.body.options),
    });
    expect(stepUp.status, JSON.stringify(stepUp.body)).toBe(200);
    expect(methodOf(stepUp.body.token)).toEqual({ signing_method: 'bip322', amr: ['swk', 'hwk', 'mfa'] });

    // A later re-mint (an edit) and a tab token of the row say the same.
    const edited = await client.request('PATCH', '/api/auth/account', { display_name: 'Keyed' });
    expect(methodOf(edited.body.token).amr).toEqual(['swk', 'hwk', 'mfa']);
    expect(methodOf((await client.post('/api/auth/tab', {})).body.token).amr).toEqual(['swk', 'hwk', 'mfa']);
  });

  it('gives an e-mail account a masked badge as display_identity, never the address', async () => {
    const client = auth.harness.browser(auth.app);
    const reply = await emailSignIn(client, 'jane.doe@example.org');
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const claims = decodeJwt(reply.body.token).payload;
    expect(claims.display_identity).toEqual({ kind: 'email', value: 'j•••@•••.org' });
    expect(JSON.stringify(claims)).not.toContain('example');
    expect(JSON.stringify(claims)).not.toContain('jane');
    // The host's own answer (not a token) still shows the address to its owner.
    expect(reply.body.account.display_identity).toEqual({ kind: 'email', value: 'jane.doe@example.org' });
  });
}

await forEachEngine('session claims as auth-core reads them', claimsSuite);
