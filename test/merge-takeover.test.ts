/**
 * A merge carries nothing the person merging did not see and accept
 * (docs/protocol.md §2 "Merging"), and an account the operator holds takes
 * part in no merge. Through HTTP on every engine, with e-mail codes from a
 * real SMTP server and a software authenticator for the passkey.
 *
 * The attack: someone who once controlled account B (a shared mailbox)
 * linked their own wallet to B, registered a sign-in passkey and made a
 * Connect app on it. The rightful owner V later links B's e-mail with
 * `confirm_transfer`. None of the planted credentials may reach V.
 */
import { describe, expect, it } from 'vitest';
import { newWallet, type Reply, type Wallet } from './support/auth-client.js';
import { expectError, forEachEngine, LOCAL_ORIGIN, rosterDidsOf, type TimedBrowser, useMailingAuthSuite } from './support/auth-harness.js';
import { SECOND } from './support/clock.js';
import { SoftwareAuthenticator } from './support/webauthn-authenticator.js';

function mergeTakeoverSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useMailingAuthSuite(engine);

  const browser = (): TimedBrowser => auth.harness.browser(auth.app);

  function ok(reply: Reply): Reply {
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply;
  }

  async function emailProof(client: TimedBrowser, email: string): Promise<{ email: string; code: string; token: string }> {
    const started = ok(await client.post('/api/auth/email-otp/start', { email }));
    return { email, code: await auth.mailbox.nextCode(email), token: started.body.token };
  }

  async function signInByEmail(client: TimedBrowser, email: string): Promise<{ did: string; id: string }> {
    const reply = ok(await client.post('/api/auth/email-otp/verify', await emailProof(client, email)));
    return { did: reply.body.account.did_oc, id: reply.body.account.id };
  }

  async function signInByWallet(client: TimedBrowser, wallet: Wallet): Promise<{ did: string; id: string }> {
    auth.harness.clock.advance(SECOND);
    const reply = ok(await client.signIn(wallet));
    return { did: reply.body.account.did_oc, id: reply.body.account.id };
  }

  async function passkeySignIn(client: TimedBrowser, authenticator: SoftwareAuthenticator): Promise<Reply> {
    const options = ok(await client.post('/api/auth/passkey/options'));
    return client.post('/api/auth/passkey/signin', {
      challenge_token: options.body.challenge_token,
      response: authenticator.get(options.body.options),
    });
  }

  /** B as the planter leaves it: the shared e-mail, the planter's wallet, a sign-in passkey and a Connect app. */
  async function plantedAccount(
    email: string,
  ): Promise<{ b: { did: string; id: string }; planterWallet: Wallet; passkey: SoftwareAuthenticator; planter: TimedBrowser }> {
    const planter = browser();
    const b = await signInByEmail(planter, email);
    ok(await planter.post('/api/auth/sudo', await emailProof(planter, email)));
    const planterWallet = newWallet();
    ok(await planter.post('/api/auth/link/btc', await planter.prove(planterWallet, 'link')));
    const passkey = new SoftwareAuthenticator({ origin: LOCAL_ORIGIN });
    const options = ok(await planter.post('/api/auth/webauthn/register/options', { sign_in: true }));
    ok(
      await planter.post('/api/auth/webauthn/register/verify', {
        challenge_token: options.body.challenge_token,
        response: passkey.create(options.body.options),
        label: 'Planted key',
      }),
    );
    ok(await planter.post('/api/connect/apps', { name: 'Planted app' }));
    // The planter's passkey and wallet work on B before the merge.
    expect((await passkeySignIn(browser(), passkey)).body.account.did_oc).toBe(b.did);
    expect((await signInByWallet(browser(), planterWallet)).did).toBe(b.did);
    return { b, planterWallet, passkey, planter };
  }

  async function victimAccount(): Promise<{ v: { did: string; id: string }; client: TimedBrowser; wallet: Wallet }> {
    const client = browser();
    const wallet = newWallet();
    const v = await signInByWallet(client, wallet);
    ok(await client.post('/api/auth/sudo', await client.prove(wallet, 'sudo')));
    return { v, client, wallet };
  }

  it('confirm_transfer: true moves only the proven e-mail; the planted wallet, passkey and app reach nothing of V', async () => {
    const email = `shared-${engine}@example.org`;
    const { b, planterWallet, passkey, planter } = await plantedAccount(email);
    const { v, client, wallet } = await victimAccount();

    // The 409 lists what B holds, so the person can see what a transfer would bring.
    const refused = await client.post('/api/auth/link/email', await emailProof(client, email));
    expectError(refused, 409, 'email_linked_elsewhere');
    expect(refused.body.holder.did_oc).toBe(b.did);
    expect(refused.body.holder.identities.map((held: { kind: string; value: string }) => `${held.kind}:${held.value}`).sort()).toEqual(
      [`btc:${planterWallet.address}`, `email:${email}`].sort(),
    );
    expect(refused.body.holder.security_keys.map((key: { name: string }) => key.name)).toEqual(['Planted key']);
    expect(refused.body.holder.apps.map((held: { name: string }) => held.name)).toEqual(['Planted app']);

    const merged = ok(await client.post('/api/auth/link/email', { ...(await emailProof(client, email)), confirm_transfer: true }));
    expect(merged.body.merged.did_oc).toBe(b.did);
    expect(merged.body.merged.moved.identities.map((identity: { value: string }) => identity.value)).toEqual([email]);
    expect(merged.body.merged.moved.apps).toEqual([]);
    expect(merged.body.merged.removed.identities.map((identity: { value: string }) => identity.value)).toEqual([planterWallet.address]);
    expect(merged.body.merged.removed.security_keys.map((key: { name: string }) => key.name)).toEqual(['Planted key']);
    expect(merged.body.merged.removed.apps.map((held: { name: string }) => held.name)).toEqual(['Planted app']);
    expect((merged.body.identities as Array<{ value: string }>).map((identity) => identity.value).sort()).toEqual(
      [wallet.address, email].sort(),
    );

    // The planter's passkey is gone; its wallet makes an account of its own, with no way to V.
    expect((await passkeySignIn(browser(), passkey)).status).not.toBe(200);
    const planterAgain = browser();
    const fresh = await signInByWallet(planterAgain, planterWallet);
    expect(fresh.did).not.toBe(v.did);
    expect(fresh.did).not.toBe(b.did);
    expectError(await planterAgain.switchTo(v.did), 403, 'not_in_roster');
    expect(rosterDidsOf(await planterAgain.me())).toEqual([]);
    // The planter's old session of B ends; V's browser is untouched.
    expectError(await planter.me(), 401, 'not_authenticated');
    expect((await client.me()).body.account.did_oc).toBe(v.did);
    expect(await auth.harness.store.listWebAuthnCredentials(v.id)).toEqual([]);
    expect(await auth.harness.store.listConnectApps(v.id)).toEqual([]);

    // V's activity records exactly what arrived and what was removed.
    const activity = ok(await client.get('/api/auth/activity'));
    const event = (activity.body.events as Array<{ kind: string; detail: Record<string, unknown> }>).find(
      (entry) => entry.kind === 'account_merged',
    );
    expect(event?.detail).toMatchObject({
      merged_from: b.did,
      identities: [`email:${email}`],
      apps: [],
      removed_identities: [`btc:${planterWallet.address}`],
      removed_keys: ['Planted key'],
      removed_apps: ['Planted app'],
    });
  });

  it('an object confirm_transfer moves what it names by id, and refuses ids the other account does not hold', async () => {
    const email = `named-${engine}@example.org`;
    const { b, planterWallet } = await plantedAccount(email);
    const { v, client } = await victimAccount();
    const refused = await client.post('/api/auth/link/email', await emailProof(client, email));
    const walletId = (refused.body.holder.identities as Array<{ id: string; kind: string }>).find((held) => held.kind === 'btc')!.id;
    const appId = (refused.body.holder.apps as Array<{ id: string }>)[0]!.id;

    const stranger = (await auth.harness.store.transferHoldings(v.id))!.identities[0]!.id;
    expectError(
      await client.post('/api/auth/link/email', { ...(await emailProof(client, email)), confirm_transfer: { identities: [stranger] } }),
      409,
      'transfer_changed',
    );
    expect((await auth.harness.store.findAccount(b.id))?.merged_into).toBeNull();

    const merged = ok(
      await client.post('/api/auth/link/email', {
        ...(await emailProof(client, email)),
        confirm_transfer: { identities: [walletId], apps: [appId] },
      }),
    );
    expect(merged.body.merged.moved.identities.map((identity: { value: string }) => identity.value).sort()).toEqual(
      [email, planterWallet.address].sort(),
    );
    expect(merged.body.merged.moved.apps.map((held: { name: string }) => held.name)).toEqual(['Planted app']);
    expect(merged.body.merged.removed.security_keys.map((key: { name: string }) => key.name)).toEqual(['Planted key']);
    expect((await auth.harness.store.listConnectApps(v.id)).map((held) => held.name)).toEqual(['Planted app']);
    expect((await signInByWallet(browser(), planterWallet)).did).toBe(v.did);
  });

  describe("the operator's hold (docs/protocol.md §2 'Disabling and deleting')", () => {
    it('a disabled account is not merged: its address cannot be transferred, with or without confirm_transfer', async () => {
      const held = newWallet();
      const b = await signInByWallet(browser(), held);
      expect((await auth.harness.store.setAccountDisabled(b.id, true, auth.harness.clock.ms))?.changed).toBe(true);
      const { client, v } = await victimAccount();

      expectError(await client.post('/api/auth/link/btc', await client.prove(held, 'link')), 403, 'account_disabled');
      expectError(
        await client.post('/api/auth/link/btc', { ...(await client.prove(held, 'link')), confirm_transfer: true }),
        403,
        'account_disabled',
      );
      expect((await auth.harness.store.findAccount(b.id))?.merged_into).toBeNull();
      expect((await auth.harness.store.findAccountByIdentity('btc', held.address))?.id).toBe(b.id);
      expect((await auth.harness.store.transferHoldings(v.id))!.identities.map((identity) => identity.value)).not.toContain(held.address);
      // And the disabled account's wallet still signs in nowhere.
      auth.harness.clock.advance(SECOND);
      expectError(await browser().signIn(held), 403, 'account_disabled');
    });

    it('a disabled account is not merged by its e-mail either', async () => {
      const email = `held-${engine}@example.org`;
      const b = await signInByEmail(browser(), email);
      await auth.harness.store.setAccountDisabled(b.id, true, auth.harness.clock.ms);
      const { client } = await victimAccount();
      expectError(
        await client.post('/api/auth/link/email', { ...(await emailProof(client, email)), confirm_transfer: true }),
        403,
        'account_disabled',
      );
      expect((await auth.harness.store.findAccount(b.id))?.merged_into).toBeNull();
    });
  });
}

await forEachEngine('merges carry only what was accepted', mergeTakeoverSuite);
