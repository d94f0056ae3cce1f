/**
 * A sibling site of the family can plant an `oc_session` cookie for the
 * family domain: a live session of its own roster. The browser then sends
 * two, in either order, or it overwrites the browser's own and the browser
 * sends the planted one alone. The `__Host-oc_roster` binding decides
 * whenever it is present (identity/session/roster-binding.ts): the host takes only a
 * session of the roster it names, and a browser presenting nothing else is
 * signed out and loses its cookies. Without a binding, sessions of several
 * rosters are refused as `ambiguous_session`. A sign-in with `add` joins only
 * a roster the binding vouches for, else it starts a new one. Neither `me`
 * nor `add` ever acts on the planted roster. Through HTTP on every engine.
 */
import { describe, expect, it } from 'vitest';
import { Browser, newWallet, type Reply, type Wallet } from './support/auth-client.js';
import { expectError, forEachEngine, rosterDidsOf, useAuthSuite } from './support/auth-harness.js';
import { SECOND } from './support/clock.js';

interface Holder {
  readonly did: string;
  readonly token: string;
  /** The `__Host-oc_roster` value the sign-in set. */
  readonly binding: string;
}

/** The family of the attack: the host and a sibling site under one cookie domain. */
const FAMILY_ENV = { PUBLIC_URL: 'https://auth.example.com', COOKIE_DOMAIN: '.example.com' };
const LOCAL_ORIGIN = 'https://auth.example.com';

function bindingOf(reply: Reply): string {
  const line = reply.setCookies.find((cookie) => cookie.startsWith('__Host-oc_roster='));
  if (line === undefined) throw new Error('test: no roster binding was set');
  expect(line).toMatch(/; Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=\d+$/);
  expect(line).not.toMatch(/Domain=/i);
  return /^__Host-oc_roster=([^;]*);/.exec(line)![1]!;
}

function plantedCookiesSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine, FAMILY_ENV);

  async function signIn(wallet: Wallet): Promise<Holder> {
    auth.harness.clock.advance(SECOND);
    const browser = new Browser(auth.app, LOCAL_ORIGIN);
    const reply = await browser.signIn(wallet);
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return { did: reply.body.account.did_oc, token: reply.body.token, binding: bindingOf(reply) };
  }

  /** A browser that sends exactly `cookie`, whatever the answers set. */
  function sending(cookie: string) {
    const browser = new Browser(auth.app, LOCAL_ORIGIN);
    const headers = { cookie };
    return {
      me: () => browser.request('GET', '/api/auth/me', undefined, headers),
      switchTo: (did: string) => browser.request('POST', '/api/auth/switch', { did_oc: did }, headers),
      async signInAdd(wallet: Wallet): Promise<Reply> {
        auth.harness.clock.advance(SECOND);
        const proof = await new Browser(auth.app, LOCAL_ORIGIN).prove(wallet, 'login');
        return browser.request('POST', '/api/auth/signin?add=1', proof, headers);
      },
    };
  }

  function expectCleared(reply: Reply): void {
    // The family cookie (the planted one) and a host-only shadow.
    expect(reply.setCookies.some((line) => /^oc_session=; .*Max-Age=0; Domain=\.example\.com$/.test(line))).toBe(true);
    expect(reply.setCookies.some((line) => /^oc_session=; .*Max-Age=0$/.test(line))).toBe(true);
    expect(reply.setCookies.some((line) => /^__Host-oc_roster=; .*Max-Age=0/.test(line))).toBe(true);
  }

  for (const order of ['planted first', 'own first'] as const) {
    const cookiesOf = (planted: Holder, own: Holder, binding?: string): string => {
      const sessions = order === 'planted first' ? [planted.token, own.token] : [own.token, planted.token];
      return [...sessions.map((token) => `oc_session=${token}`), ...(binding === undefined ? [] : [`__Host-oc_roster=${binding}`])].join(
        '; ',
      );
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

      it('without a binding: me and add are refused as ambiguous_session, cookies cleared', async () => {
        const attacker = await signIn(newWallet());
        const victim = await signIn(newWallet());
        const browser = sending(cookiesOf(attacker, victim));
        const me = await browser.me();
        expectError(me, 401, 'ambiguous_session');
        expectCleared(me);

        const wallet = newWallet();
        const added = await browser.signInAdd(wallet);
        expectError(added, 401, 'ambiguous_session');
        expectCleared(added);
        // Nothing joined either roster.
        expect(await auth.harness.store.findAccountByIdentity('btc', wallet.address)).toBeNull();
        expect(rosterDidsOf(await sending(`oc_session=${attacker.token}`).me())).toEqual([]);
        expect(rosterDidsOf(await sending(`oc_session=${victim.token}`).me())).toEqual([]);
      });

      it('with a binding that names neither: signed out and cleared; add starts a roster of its own', async () => {
        const attacker = await signIn(newWallet());
        const victim = await signIn(newWallet());
        for (const binding of ['A'.repeat(22), attacker.binding.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))]) {
          const browser = sending(cookiesOf(attacker, victim, binding));
          const me = await browser.me();
          expectError(me, 401, 'not_authenticated');
          expectCleared(me);

          const added = await browser.signInAdd(newWallet());
          expect(added.status, JSON.stringify(added.body)).toBe(200);
          const newcomer = added.body.account.did_oc as string;
          expect(bindingOf(added)).not.toBe(binding);
          expect(rosterDidsOf(await sending(`oc_session=${added.body.token}; __Host-oc_roster=${bindingOf(added)}`).me())).toEqual([]);
          for (const holder of [attacker, victim]) {
            const view = sending(`oc_session=${holder.token}; __Host-oc_roster=${holder.binding}`);
            expect(rosterDidsOf(await view.me())).toEqual([]);
            expectError(await view.switchTo(newcomer), 403, 'not_in_roster');
          }
        }
      });
    });
  }

  /**
   * The attack of docs/protocol.md §3 "Planted cookies" with one cookie: a
   * sibling site overwrites the family `oc_session` with a session of its own
   * roster, so the browser sends that token alone beside its own binding.
   */
  for (const order of ['binding first', 'binding last'] as const) {
    const withBinding = (token: string, binding: string): string =>
      order === 'binding first' ? `__Host-oc_roster=${binding}; oc_session=${token}` : `oc_session=${token}; __Host-oc_roster=${binding}`;

    it(`one overwritten cookie beside the browser's binding (${order}): signed out, cleared, add never joins the planted roster`, async () => {
      const planter = await signIn(newWallet());
      const victim = await signIn(newWallet());
      const browser = sending(withBinding(planter.token, victim.binding));

      const me = await browser.me();
      expectError(me, 401, 'not_authenticated');
      expectCleared(me);
      expectError(await browser.switchTo(planter.did), 401, 'not_authenticated');

      const victimWallet = newWallet();
      const added = await browser.signInAdd(victimWallet);
      expect(added.status, JSON.stringify(added.body)).toBe(200);
      const victimNow = added.body.account.did_oc as string;
      // A roster of the victim's own, with a binding of its own.
      expect(bindingOf(added)).not.toBe(victim.binding);
      expect(rosterDidsOf(await sending(withBinding(added.body.token, bindingOf(added))).me())).toEqual([]);

      // The planter's own browser sees no one new and cannot switch to the victim.
      const planterView = sending(withBinding(planter.token, planter.binding));
      const planterMe = await planterView.me();
      expect(planterMe.status).toBe(200);
      expect(rosterDidsOf(planterMe)).toEqual([]);
      expectError(await planterView.switchTo(victimNow), 403, 'not_in_roster');
      expectError(await planterView.switchTo(victim.did), 403, 'not_in_roster');
    });
  }

  it('one overwritten cookie and no binding: me reads it, but add starts a new roster, never the planted one', async () => {
    const planter = await signIn(newWallet());
    const browser = sending(`oc_session=${planter.token}`);
    expect((await browser.me()).body.account.did_oc).toBe(planter.did);

    const added = await browser.signInAdd(newWallet());
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const victimNow = added.body.account.did_oc as string;
    expect(bindingOf(added)).not.toBe(planter.binding);
    const planterView = sending(`oc_session=${planter.token}; __Host-oc_roster=${planter.binding}`);
    expect(rosterDidsOf(await planterView.me())).toEqual([]);
    expectError(await planterView.switchTo(victimNow), 403, 'not_in_roster');
  });

  it('a tab pin of the planted roster cannot add to it either', async () => {
    const planter = await signIn(newWallet());
    const victim = await signIn(newWallet());
    const proof = await new Browser(auth.app, LOCAL_ORIGIN).prove(newWallet(), 'login');
    auth.harness.clock.advance(SECOND);
    const added = await new Browser(auth.app, LOCAL_ORIGIN).request('POST', '/api/auth/signin?add=1', proof, {
      cookie: `__Host-oc_roster=${victim.binding}`,
      'x-oc-tab-session': planter.token,
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    const planterView = sending(`oc_session=${planter.token}; __Host-oc_roster=${planter.binding}`);
    expect(rosterDidsOf(await planterView.me())).toEqual([]);
    expectError(await planterView.switchTo(added.body.account.did_oc), 403, 'not_in_roster');
  });

  it('two cookies of one roster (a host-only shadow beside the family cookie) still work without a binding', async () => {
    const wallet = newWallet();
    const first = await signIn(wallet);
    const browser = new Browser(auth.app, LOCAL_ORIGIN);
    browser.cookie = first.token;
    browser.binding = first.binding;
    auth.harness.clock.advance(SECOND);
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
