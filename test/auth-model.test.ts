/**
 * A model-based test of the roster (docs/api.md "States and transitions",
 * docs/protocol.md §3): random sequences of sign-ins (fresh and add=1, of new and
 * of rostered accounts), switches (to members and to non-members), logouts
 * (current and all) and clock jumps past the 30-day expiry, run through HTTP
 * against one browser and compared after every step with a small model of
 * what that browser can reach.
 *
 * After each step: the cookie's JWT names the model's active account, /me's
 * roster is the model's (no account twice, never the active one), and no
 * response body, cookie or JWT carries the roster id or any UUID.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { newWallet, type Reply, type Wallet } from './support/auth-client.js';
import {
  type AuthHarness,
  UUID_ANYWHERE,
  decodeJwt,
  expectError,
  expectSessionCookie,
  forEachEngine,
  rosterDidsOf,
  sorted,
  unknownDid,
  type TimedBrowser,
  useAuthSuite,
} from './support/auth-harness.js';
import { DAY, HOUR, SECOND } from './support/clock.js';

const SESSION_LIFETIME_MS = 30 * DAY;
const WALLETS_PER_RUN = 4;
const MAX_COMMANDS = 30;

/** What the browser can reach: the active account and every live member (active included), by wallet index. */
interface Model {
  now: number;
  active: number | null;
  /** wallet index → the row's expiry. */
  members: Map<number, number>;
}

interface Real {
  readonly harness: AuthHarness;
  readonly browser: TimedBrowser;
  readonly wallets: readonly Wallet[];
  /** Learned from sign-in replies: wallet index → did and account id. */
  readonly accounts: Map<number, { did: string; id: string }>;
  /** A well-formed did per wallet, used for switches before that wallet has an account. */
  readonly unknownDids: readonly string[];
  /** Everything the service sent back during the current step. */
  replies: Reply[];
}

/** Rows expire 30 days after creation; when the active row is gone, the browser reaches nothing. */
function expire(model: Model): void {
  for (const [wallet, expiresAt] of model.members) {
    if (expiresAt > model.now) continue;
    model.members.delete(wallet);
    saw(wallet === model.active ? 'expired:active' : 'expired:member');
  }
  if (model.active !== null && !model.members.has(model.active)) {
    model.active = null;
    model.members.clear();
  }
}

/** How often each outcome was seen, so the test can show it explored the interesting transitions. */
const outcomes = new Map<string, number>();

function saw(outcome: string): void {
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
}

function record(real: Real, reply: Reply): Reply {
  real.replies.push(reply);
  return reply;
}

function didOf(real: Real, wallet: number): string {
  return real.accounts.get(wallet)?.did ?? real.unknownDids[wallet]!;
}

class SignIn implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly wallet: number,
    readonly add: boolean,
  ) {}

  check(): boolean {
    return true;
  }

  async run(model: Model, real: Real): Promise<void> {
    expire(model);
    // TimedBrowser moves the clock a second before each challenge.
    model.now += SECOND;
    const reply = record(real, await real.browser.signIn(real.wallets[this.wallet]!, { add: this.add }));
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    const token = expectSessionCookie(reply);
    const known = real.accounts.get(this.wallet);
    if (known) expect(reply.body.account.did_oc).toBe(known.did);
    else real.accounts.set(this.wallet, { did: reply.body.account.did_oc, id: reply.body.account.id });
    expect(decodeJwt(token).payload.exp).toBe(Math.floor((model.now + SESSION_LIFETIME_MS) / 1000));

    saw(
      model.active === null
        ? 'signIn:anonymous'
        : !this.add
          ? 'signIn:new roster'
          : model.members.has(this.wallet)
            ? 'signIn:re-authentication'
            : 'signIn:add',
    );
    if (!this.add || model.active === null) model.members = new Map();
    model.members.set(this.wallet, model.now + SESSION_LIFETIME_MS);
    model.active = this.wallet;
  }

  toString(): string {
    return `signIn(w${this.wallet}${this.add ? ', add' : ''})`;
  }
}

/** add=1 of an account the model already holds: a re-authentication. */
class ReSignIn implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}

  check(model: Model): boolean {
    return [...model.members.keys()].length > 0;
  }

  async run(model: Model, real: Real): Promise<void> {
    expire(model);
    const members = [...model.members.keys()].sort();
    if (members.length === 0) return; // everything expired since check(): nothing to re-sign
    await new SignIn(members[this.pick % members.length]!, true).run(model, real);
  }

  toString(): string {
    return `reSignIn(#${this.pick})`;
  }
}

class Switch implements fc.AsyncCommand<Model, Real> {
  constructor(readonly wallet: number) {}

  check(): boolean {
    return true;
  }

  async run(model: Model, real: Real): Promise<void> {
    expire(model);
    const reply = record(real, await real.browser.switchTo(didOf(real, this.wallet)));
    saw(`switch:${reply.status}`);
    if (model.active === null) return expectError(reply, 401, 'not_authenticated');
    if (!real.accounts.has(this.wallet)) return expectError(reply, 404, 'unknown_did_oc');
    if (this.wallet === model.active) return expectError(reply, 400, 'already_active');
    if (!model.members.has(this.wallet)) return expectError(reply, 403, 'not_in_roster');
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    expect(reply.body.account.did_oc).toBe(didOf(real, this.wallet));
    const token = expectSessionCookie(reply, { maxAge: Math.floor((model.members.get(this.wallet)! - model.now) / 1000) });
    expect(decodeJwt(token).payload.exp, 'a switch never extends the row').toBe(Math.floor(model.members.get(this.wallet)! / 1000));
    model.active = this.wallet;
  }

  toString(): string {
    return `switch(w${this.wallet})`;
  }
}

/** A switch to a member the model holds (mostly 200; 400 when it is the active one). */
class SwitchToMember implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}

  check(model: Model): boolean {
    return model.members.size > 0;
  }

  async run(model: Model, real: Real): Promise<void> {
    expire(model);
    const members = [...model.members.keys()].sort();
    if (members.length === 0) return;
    await new Switch(members[this.pick % members.length]!).run(model, real);
  }

  toString(): string {
    return `switchToMember(#${this.pick})`;
  }
}

class Logout implements fc.AsyncCommand<Model, Real> {
  constructor(readonly scope: 'current' | 'all') {}

  check(): boolean {
    return true;
  }

  async run(model: Model, real: Real): Promise<void> {
    expire(model);
    const reply = record(real, await real.browser.logout(this.scope));
    saw(`logout:${this.scope}:${reply.status}${reply.body?.switched_to ? ':switched' : ''}`);
    if (model.active === null) {
      expectError(reply, 401, 'not_authenticated');
      expect(real.browser.cookie).toBeUndefined();
      return;
    }
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    model.members.delete(model.active);
    if (this.scope === 'all' || model.members.size === 0) {
      expect(reply.body).toEqual(this.scope === 'all' ? { ok: true, scope: 'all' } : { ok: true, scope: 'current', switched_to: null });
      expect(real.browser.cookie).toBeUndefined();
      model.active = null;
      model.members.clear();
      return;
    }
    // The service picks the most recently seen member; the model accepts any live one.
    const switchedTo: string = reply.body.switched_to?.did_oc;
    const next = [...model.members.keys()].find((wallet) => didOf(real, wallet) === switchedTo);
    expect(next, `switched_to ${switchedTo} is a remaining member`).toBeDefined();
    expectSessionCookie(reply);
    model.active = next!;
  }

  toString(): string {
    return `logout(${this.scope})`;
  }
}

class ClockJump implements fc.AsyncCommand<Model, Real> {
  constructor(readonly ms: number) {}

  check(): boolean {
    return true;
  }

  async run(model: Model, real: Real): Promise<void> {
    real.harness.clock.advance(this.ms);
    model.now += this.ms;
    expire(model);
  }

  toString(): string {
    return `clock(+${this.ms / HOUR} h)`;
  }
}

/** The invariants of the issue, checked after every command. */
async function checkInvariants(model: Model, real: Real): Promise<void> {
  expire(model);
  expect(real.harness.clock.ms, 'model and service agree on the time').toBe(model.now);
  const me = record(real, await real.browser.me());
  if (model.active === null) {
    expectError(me, 401, 'not_authenticated');
  } else {
    const cookie = real.browser.cookie;
    expect(cookie, 'the browser holds a cookie').toBeDefined();
    const active = real.accounts.get(model.active)!;
    const jwt = decodeJwt(cookie!);
    expect(jwt.payload.sub, "the cookie's account is the active one").toBe(active.id);
    expect(jwt.payload.did_oc).toBe(active.did);
    expect(me.body.account.did_oc).toBe(active.did);
    expect(me.body.account.id).toBe(active.id);
    const expected = sorted([...model.members.keys()].filter((wallet) => wallet !== model.active).map((wallet) => didOf(real, wallet)));
    expect(rosterDidsOf(me)).toEqual(expected);

    const row = await real.harness.rowOf(cookie!);
    expect(row?.roster_id).toBeTruthy();
    const exposed = [JSON.stringify(jwt), cookie!, ...real.replies.flatMap((reply) => [JSON.stringify(reply.body), ...reply.setCookies])];
    for (const text of exposed) {
      expect(text).not.toContain(row!.roster_id!);
      expect(text).not.toMatch(UUID_ANYWHERE);
    }
  }
  for (const reply of real.replies) expect(reply.status, JSON.stringify(reply.body)).toBeLessThan(500);
  real.replies = [];
}

/** Wraps every command so the invariants run after each step. */
class Checked implements fc.AsyncCommand<Model, Real> {
  constructor(readonly inner: fc.AsyncCommand<Model, Real>) {}

  check(model: Readonly<Model>): boolean {
    return this.inner.check(model);
  }

  async run(model: Model, real: Real): Promise<void> {
    await this.inner.run(model, real);
    await checkInvariants(model, real);
  }

  toString(): string {
    return this.inner.toString();
  }
}

const wallet = fc.integer({ min: 0, max: WALLETS_PER_RUN - 1 });
const commands = fc.commands(
  [
    fc.tuple(wallet, fc.boolean()).map(([index, add]) => new Checked(new SignIn(index, add))),
    wallet.map((index) => new Checked(new SignIn(index, true))),
    fc.nat({ max: WALLETS_PER_RUN }).map((pick) => new Checked(new ReSignIn(pick))),
    wallet.map((index) => new Checked(new Switch(index))),
    fc.nat({ max: WALLETS_PER_RUN }).map((pick) => new Checked(new SwitchToMember(pick))),
    fc.constantFrom<'current' | 'all'>('current', 'current', 'all').map((scope) => new Checked(new Logout(scope))),
    fc.constantFrom(SECOND, HOUR, 10 * DAY, 30 * DAY + SECOND).map((ms) => new Checked(new ClockJump(ms))),
  ],
  { maxCommands: MAX_COMMANDS, size: 'max' },
);

function rosterModel(engine: 'sqlite' | 'postgres'): void {
  const auth = useAuthSuite(engine);

  const setup = (): { model: Model; real: Real } => ({
    model: { now: auth.harness.clock.ms, active: null, members: new Map() },
    real: {
      harness: auth.harness,
      browser: auth.harness.browser(auth.app),
      wallets: Array.from({ length: WALLETS_PER_RUN }, () => newWallet()),
      accounts: new Map(),
      unknownDids: Array.from({ length: WALLETS_PER_RUN }, () => unknownDid()),
      replies: [],
    },
  });

  it('the model and the service agree on a scripted walk through every transition', async () => {
    outcomes.clear();
    const script = [
      new SignIn(0, false), // anonymous → signed in
      new Switch(3), // 404: w3 has no account yet
      new SignIn(1, true), // add
      new SignIn(0, true), // re-authentication
      new Switch(0), // 400 already active
      new Switch(1), // 200
      new SignIn(2, false), // a new roster {w2}
      new SignIn(0, true), // {w2, w0}
      new Switch(1), // 403: w1 is in the old roster only
      new ClockJump(10 * DAY),
      new SignIn(1, true), // {w2, w0, w1}
      new ClockJump(20 * DAY), // w2 and w0 expire; w1 (active) lives
      new Switch(2), // 403: expired
      new SignIn(2, true), // restored
      new SignIn(3, true),
      new Logout('current'), // → another member
      new Logout('all'),
      new Logout('current'), // 401
      new SignIn(0, false),
      new ClockJump(30 * DAY + SECOND), // the active row expires
      new Switch(1), // 401
      new Logout('current'), // 401
      new SignIn(0, false),
      new Logout('current'), // last member
    ].map((command) => new Checked(command));
    await fc.asyncModelRun(setup, script);
    for (const outcome of [
      'signIn:anonymous',
      'signIn:add',
      'signIn:re-authentication',
      'signIn:new roster',
      'switch:200',
      'switch:400',
      'switch:401',
      'switch:403',
      'switch:404',
      'logout:current:200:switched',
      'logout:current:200',
      'logout:current:401',
      'logout:all:200',
      'expired:member',
      'expired:active',
    ]) {
      expect(outcomes.get(outcome), outcome).toBeGreaterThan(0);
    }
  });

  it('matches the model after every step of random sign-in, switch, logout and expiry sequences', async () => {
    await fc.assert(
      fc.asyncProperty(commands, async (sequence) => {
        await fc.asyncModelRun(setup, sequence);
      }),
      { numRuns: engine === 'sqlite' ? 25 : 10 },
    );
    expect(await auth.harness.duplicateLiveRosterRows()).toEqual([]);
  }, 60_000);
}

await forEachEngine('roster model', rosterModel);
