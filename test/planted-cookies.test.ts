/**
 * A sibling site of the family can plant an `oc_session` cookie for the
 * family domain: a live session of its own roster. The browser then sends
 * two, in either order, and the names alone do not say which is its own.
 * The `__Host-oc_roster` binding does (session/roster-binding.ts): with it
 * the host takes the browser's own session; without it the host refuses the
 * request as `ambiguous_session` and clears its cookies. Neither `me` nor a
 * sign-in with `add` ever acts on the planted roster. Through HTTP on every
 * engine.
 */
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { Browser, newWallet, type Reply, type Wallet } from './support/auth-client.js';
import { AuthHarness, expectError, forEachEngine, LOCAL_ORIGIN, rosterDidsOf, useAuthHarness } from './support/auth-harness.js';
import { SECOND } from './support/clock.js';

interface Holder {
  readonly did: string;
  readonly token: string;
  /** The `__Host-oc_roster` value the sign-in set. */
  readonly binding: string;
}

function bindingOf(reply: Reply): string {
  const line = reply.setCookies.find((cookie) => cookie.startsWith('__Host-oc_roster='));
  if (line === undefined) throw new Error('test: no roster binding was set');
  expect(line).toMatch(/; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=\d+$/);
  expect(line).not.toMatch(/Domain=/i);
  return /^__Host-oc_roster=([^;]*);/.exec(line)![1]!;
}

function plantedCookiesSuite(engine: 'sqlite' | 'postgres'): void {
  let harness: AuthHarness;
  let app: FastifyInstance;

  useAuthHarness(
    engine,
    (opened, built) => {
      harness = opened;
      app = built;
    },
  );

  async function signIn(wallet: Wallet): Promise<Holder> {
    harness.clock.advance(SECOND);
    const browser = new Browser(app, LOCAL_ORIGIN);
    const reply = await browser.signIn(wallet);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { did: reply.body.account.did_oc, token: reply.body.token, binding: bindingOf(reply) };
  }

  /** A browser that sends exactly `cookie`, whatever the answers set. */
  function sending(cookie: string) {
    const browser = new Browser(app, LOCAL_ORIGIN);
    const headers = { cookie };
    return {
      me: () => browser.request('GET', '/api/auth/me', undefined, headers),
      switchTo: (did: string) => browser.request('POST', '/api/auth/switch', { did_oc: did }, headers),
      async signInAdd(wallet: Wallet): Promise<Reply> {
        harness.clock.advance(SECOND);
        const proof = await new Browser(app, LOCAL_ORIGIN).prove(wallet, 'login');
        return browser.request('POST', '/api/auth/signin?add=1', proof, headers);
      },
    };
  }

  function expectCleared(reply: Reply): void {
    expect(reply.setCookies.some((line) => /^oc_session=; .*Max-Age=0/.test(line))).toBe(true);
    expect(reply.setCookies.some((line) => /^__Host-oc_roster=; .*Max-Age=0/.test(line))).toBe(true);
  }

  for (const order of ['planted first', 'own first'] as const) {
    const cookiesOf = (planted: Holder, own: Holder, binding?: string): string => {
      const sessions = order === 'planted first' ? [planted.token, own.token] : [own.token, planted.token];
      return [...sessions.map((token) => `oc_session=${token}`), ...(binding === undefined ? [] : [`__Host-oc_roster=${binding}`])].join('; ');
    };

    describe(`two oc_session cookies, ${order}`, () => {
      it('with the roster binding: me answers as the browser own account, add joins its own roster', async () => {
        const attacker = await signIn(newWallet());
        const victim = await signIn(newWallet());
        const browser = sending(cookiesOf(attacker, victim, victim.binding));

        const me = await browser.me();
        expect(me.status, JSON.stringify(me.body)).toBe(200);
        expect(me.body.account.did_oc).toBe(victim.did);
        expect(rosterDidsOf(me)).toEqual([]);

        const added = await browser.signInAdd(newWallet());
        expect(added.status, JSON.stringify(added.body)).toBe(200);
        const newcomer = added.body.account.did_oc as string;
        // The new account joined the victim's roster, not the attacker's.
        const victimMe = await sending(`oc_session=${added.body.token}; __Host-oc_roster=${victim.binding}`).me();
        expect(rosterDidsOf(victimMe)).toEqual([victim.did]);
        expect(bindingOf(added)).toBe(victim.binding);
        const attackerView = sending(`oc_session=${attacker.token}`);
        expect(rosterDidsOf(await attackerView.me())).toEqual([]);
        expectError(await attackerView.switchTo(newcomer), 403, 'not_in_roster');
        expectError(await attackerView.switchTo(victim.did), 403, 'not_in_roster');
      });

      it('without a binding that vouches for one of them: me and add are refused as ambiguous_session, cookies cleared', async () => {
        const attacker = await signIn(newWallet());
        const victim = await signIn(newWallet());
        for (const binding of [undefined, 'A'.repeat(22), attacker.binding.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))]) {
          const browser = sending(cookiesOf(attacker, victim, binding));
          const me = await browser.me();
          expectError(me, 401, 'ambiguous_session');
          expectCleared(me);

          const wallet = newWallet();
          const added = await browser.signInAdd(wallet);
          expectError(added, 401, 'ambiguous_session');
          expectCleared(added);
          // Nothing joined either roster.
          expect(await harness.store.findAccountByIdentity('btc', wallet.address)).toBeNull();
        }
        expect(rosterDidsOf(await sending(`oc_session=${attacker.token}`).me())).toEqual([]);
        expect(rosterDidsOf(await sending(`oc_session=${victim.token}`).me())).toEqual([]);
      });
    });
  }

  it('two cookies of one roster (a host-only shadow beside the family cookie) still work without a binding', async () => {
    const wallet = newWallet();
    const first = await signIn(wallet);
    const browser = new Browser(app, LOCAL_ORIGIN);
    browser.cookie = first.token;
    harness.clock.advance(SECOND);
    const second = await browser.signIn(newWallet(), { add: true });
    expect(second.status).toBe(200);
    const me = await sending(`oc_session=${first.token}; oc_session=${second.body.token}`).me();
    expect(me.status, JSON.stringify(me.body)).toBe(200);
  });

  it('a binding cookie that vouches for a planted roster is not accepted from anyone but its owner', async () => {
    // The binding is a MAC of the roster under the server secret: another
    // roster's binding never matches, so copying one's own binding beside a
    // victim's cookie gains nothing (the attacker already owns that roster).
    const attacker = await signIn(newWallet());
    const victim = await signIn(newWallet());
    expect(attacker.binding).not.toBe(victim.binding);
    const me = await sending(`oc_session=${victim.token}; oc_session=${attacker.token}; __Host-oc_roster=${attacker.binding}`).me();
    expect(me.body.account.did_oc).toBe(attacker.did);
  });
}

await forEachEngine('planted session cookies', plantedCookiesSuite);
