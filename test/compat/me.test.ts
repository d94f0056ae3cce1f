/**
 * GET /api/auth/me as the OrangeCheck session provider reads it (oc-packages
 * `auth-client/src/provider.tsx` at 153dda6, `normalizeAccount`): `id`,
 * `did_oc`, `primary_btc`, `has_email`, `display_name`, `nostr_npub`,
 * `home_federation_slug`, `signing_method`, `is_owner`.
 */
import { expect, it } from 'vitest';
import { newWallet } from '../support/auth-client.js';
import { forEachEngine, useMailingAuthSuite } from '../support/auth-harness.js';

function meSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useMailingAuthSuite(engine);

  it('answers the account fields the provider reads, for the active account and every roster member', async () => {
    const browser = auth.harness.browser(auth.app);
    const wallet = newWallet();
    await browser.signIn(wallet);
    const email = `me-${engine}@example.org`;
    const started = await browser.post('/api/auth/email-otp/start', { email });
    const code = await auth.mailbox.nextCode(email);
    const added = await browser.post('/api/auth/email-otp/verify?add=1', { email, code, token: started.body.token });
    expect(added.status).toBe(200);

    const me = await browser.get('/api/auth/me');
    expect(me.body.account).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      did_oc: added.body.account.did_oc,
      primary_btc: null,
      has_email: true,
      signing_method: null,
      nostr_npub: null,
      home_federation_slug: null,
      is_owner: false,
    });
    expect(me.body.roster).toEqual([
      expect.objectContaining({
        primary_btc: wallet.address,
        has_email: false,
        signing_method: 'bip322',
        nostr_npub: null,
        home_federation_slug: null,
        is_owner: false,
      }),
    ]);
  });
}

await forEachEngine('GET /api/auth/me as the session provider reads it', meSuite);
