/**
 * Concurrency (docs/protocol.md §3 "Concurrent sign-ins, switches and logouts on
 * one roster must leave it consistent", §5 "consumes the nonce exactly once"),
 * through HTTP on every engine. Requests are fired together with
 * `Promise.all`; on PostgreSQL they run on separate pooled connections.
 */
import { expect, it } from 'vitest';
import { newWallet, type Reply, type Wallet } from './support/auth-client.js';
import { LOCAL_ORIGIN, forEachEngine, rosterDidsOf, sorted, type TimedBrowser, useAuthSuite } from './support/auth-harness.js';

interface Outcome {
  readonly status: number;
  readonly body: any;
  /** The oc_session value set by the reply, if any (undefined also for a clearing cookie). */
  readonly token: string | undefined;
}

function racesSuite(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  const browser = (): TimedBrowser => auth.harness.browser(auth.app);

  /** One browser request with an explicit cookie (and the browser's roster binding), so many can run at once. */
  async function post(url: string, payload: unknown, cookie?: string, binding?: string): Promise<Outcome> {
    const pairs = [...(cookie ? [`oc_session=${cookie}`] : []), ...(binding ? [`__Host-oc_roster=${binding}`] : [])];
    const reply = await auth.app.inject({
      method: 'POST',
      url,
      headers: { origin: LOCAL_ORIGIN, ...(pairs.length > 0 ? { cookie: pairs.join('; ') } : {}) },
      payload: payload as Record<string, unknown>,
    });
    const raw = reply.headers['set-cookie'];
    const lines = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    const token = lines.map((line) => /^oc_session=([^;]+);/.exec(line)?.[1]).find((value) => value !== undefined);
    return { status: reply.statusCode, body: reply.json(), token };
  }

  async function meWith(token: string): Promise<Reply> {
    const reply = await auth.app.inject({ method: 'GET', url: '/api/auth/me', headers: { cookie: `oc_session=${token}` } });
    return { status: reply.statusCode, body: reply.json(), setCookies: [], headers: reply.headers };
  }

  /** A browser holding a roster of the given wallets, the last one active. */
  async function roster(wallets: readonly Wallet[]): Promise<{ client: TimedBrowser; dids: string[]; ids: string[]; tokens: string[] }> {
    const client = browser();
    const dids: string[] = [];
    const ids: string[] = [];
    const tokens: string[] = [];
    for (const [index, wallet] of wallets.entries()) {
      const reply = await client.signIn(wallet, { add: index > 0 });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      dids.push(reply.body.account.did_oc);
      ids.push(reply.body.account.id);
      tokens.push(reply.body.token);
    }
    return { client, dids, ids, tokens };
  }

  function statuses(outcomes: readonly Outcome[]): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const outcome of outcomes) {
      const key = outcome.status === 200 ? '200' : `${outcome.status} ${outcome.body.error}`;
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  }

  /**
   * The roster is consistent: no (roster, account) twice, every live member
   * reachable by exactly one of the tokens ever issued for it, and every /me
   * that answers shows a roster without duplicates and without the active account.
   */
  async function expectConsistent(ids: readonly string[], tokens: readonly string[], expectedLive: readonly string[]): Promise<void> {
    expect(await auth.harness.duplicateLiveRosterRows()).toEqual([]);
    const working = new Map<string, number>();
    for (const token of new Set(tokens)) {
      const me = await meWith(token);
      expect([200, 401]).toContain(me.status);
      if (me.status !== 200) continue;
      rosterDidsOf(me);
      working.set(me.body.account.id, (working.get(me.body.account.id) ?? 0) + 1);
      const rosterIds = (me.body.roster as Array<{ id: string }>).map((entry) => entry.id);
      expect(sorted([me.body.account.id, ...rosterIds])).toEqual(sorted(expectedLive));
    }
    for (const id of ids) {
      const live = await auth.harness.liveRows(id);
      expect(live.length, `live rows of ${id}`).toBe(expectedLive.includes(id) ? 1 : 0);
      expect(working.get(id) ?? 0, `tokens that reach ${id}`).toBe(expectedLive.includes(id) ? 1 : 0);
    }
  }

  it('50 parallel sign-ins with one proof: exactly one 200, the rest 401 nonce_reused, one session row', async () => {
    const wallet = newWallet();
    const proof = await browser().prove(wallet, 'login');
    const outcomes = await Promise.all(Array.from({ length: 50 }, () => post('/api/auth/signin', proof)));
    expect(statuses(outcomes)).toEqual({ '200': 1, '401 nonce_reused': 49 });
    for (const outcome of outcomes.filter((each) => each.status === 401)) {
      expect(outcome.body).toMatchObject({ ok: false, error: 'nonce_reused', reason: 'nonce_reused' });
      expect(outcome.token).toBeUndefined();
    }
    const winner = outcomes.find((each) => each.status === 200)!;
    expect(winner.token).toBe(winner.body.token);
    const account = await auth.harness.store.findAccountByIdentity('btc', wallet.address);
    expect(account!.id).toBe(winner.body.account.id);
    expect(await auth.harness.sessionRows(account!.id)).toHaveLength(1);
  });

  it('parallel first sign-ins of one new address (fresh proofs) end in one account', async () => {
    const wallet = newWallet();
    const proofs = [];
    for (let index = 0; index < 8; index += 1) proofs.push(await browser().prove(wallet, 'login'));
    const outcomes = await Promise.all(proofs.map((proof) => post('/api/auth/signin', proof)));
    expect(statuses(outcomes)).toEqual({ '200': 8 });
    expect(new Set(outcomes.map((outcome) => outcome.body.account.id)).size).toBe(1);
    const rows = await auth.harness.sessionRows(outcomes[0]!.body.account.id);
    expect(rows).toHaveLength(8);
    expect(new Set(rows.map((row) => row.roster_id)).size, 'each sign-in without add starts its own roster').toBe(8);
  });

  it('parallel add=1 sign-ins of one account into one roster (fresh proofs each) leave one roster entry', async () => {
    const walletB = newWallet();
    const { client, dids, ids, tokens } = await roster([newWallet()]);
    const proofs = [];
    for (let index = 0; index < 10; index += 1) proofs.push(await browser().prove(walletB, 'login'));
    const outcomes = await Promise.all(proofs.map((proof) => post('/api/auth/signin?add=1', proof, tokens[0], client.binding)));
    expect(statuses(outcomes)).toEqual({ '200': 10 });
    const idB: string = outcomes[0]!.body.account.id;
    expect(new Set(outcomes.map((outcome) => outcome.body.account.id))).toEqual(new Set([idB]));

    const fromA = await meWith(tokens[0]!);
    expect(fromA.status).toBe(200);
    expect((fromA.body.roster as Array<{ id: string }>).map((entry) => entry.id)).toEqual([idB]);
    await expectConsistent([ids[0]!, idB], [...tokens, ...outcomes.map((outcome) => outcome.token!)], [ids[0]!, idB]);
    const winners = [];
    for (const outcome of outcomes) if ((await meWith(outcome.token!)).status === 200) winners.push(outcome);
    expect(winners).toHaveLength(1);
    const meB = await meWith(winners[0]!.token!);
    expect(meB.body.roster.map((entry: { did_oc: string }) => entry.did_oc)).toEqual([dids[0]]);
  });

  it('parallel switches and logout(current) on one roster leave it consistent', async () => {
    for (let round = 0; round < 3; round += 1) {
      const { dids, ids, tokens } = await roster([newWallet(), newWallet(), newWallet(), newWallet()]);
      const active = tokens[3]!;
      const requests = [
        post('/api/auth/switch', { did_oc: dids[0] }, active),
        post('/api/auth/switch', { did_oc: dids[1] }, active),
        post('/api/auth/logout?scope=current', {}, active),
        post('/api/auth/switch', { did_oc: dids[2] }, active),
        post('/api/auth/switch', { did_oc: dids[0] }, active),
        post('/api/auth/logout?scope=current', {}, active),
        post('/api/auth/switch', { did_oc: dids[1] }, active),
      ];
      const outcomes = await Promise.all(requests);
      for (const outcome of outcomes) {
        expect(outcome.status, JSON.stringify(outcome.body)).toBeLessThan(500);
        if (outcome.status !== 200) expect(outcome.body.error).toBe('not_authenticated');
      }
      // Whichever logout ran first succeeded (both may have, if both saw the live session).
      expect([outcomes[2]!.status, outcomes[5]!.status], 'a logout of a live session succeeds').toContain(200);
      const issued = outcomes.map((outcome) => outcome.token).filter((token): token is string => token !== undefined);
      // The active account is gone; the other three remain, each reachable by exactly one token.
      await expectConsistent(ids, [...tokens, ...issued], ids.slice(0, 3));
    }
  });

  it('parallel switches and logout(all) on one roster leave nothing alive', async () => {
    const { dids, ids, tokens } = await roster([newWallet(), newWallet(), newWallet()]);
    const active = tokens[2]!;
    const outcomes = await Promise.all([
      post('/api/auth/switch', { did_oc: dids[0] }, active),
      post('/api/auth/logout?scope=all', {}, active),
      post('/api/auth/switch', { did_oc: dids[1] }, active),
      post('/api/auth/logout?scope=current', {}, active),
    ]);
    for (const outcome of outcomes) expect(outcome.status, JSON.stringify(outcome.body)).toBeLessThan(500);
    const [, all, , current] = outcomes as [Outcome, Outcome, Outcome, Outcome];
    expect([all.status, current.status], 'the first logout to run succeeds').toContain(200);
    const issued = outcomes.map((outcome) => outcome.token).filter((token): token is string => token !== undefined);
    // When logout(all) ran on a live session, nothing survives it, not even a
    // member re-minted meanwhile. When logout(current) got there first,
    // logout(all) found no session (401) and the other two members live on.
    if (all.status === 200) await expectConsistent(ids, [...tokens, ...issued], []);
    else {
      expect(all.body.error).toBe('not_authenticated');
      await expectConsistent(ids, [...tokens, ...issued], ids.slice(0, 2));
    }
  });
}

await forEachEngine('auth races', racesSuite);
