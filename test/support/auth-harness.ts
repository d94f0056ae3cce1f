/**
 * The pieces the HTTP auth suites share: one suite per available
 * engine, a real app on a real store with a movable clock, a browser whose
 * every proof comes from a fresh challenge, and readers for what a user can
 * see (status, error body, cookie, JWT) and for the database rows behind it.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { tokenHash } from '../../src/identity/session/jwt.js';
import { openDatabase, type OpenDatabase } from '../../src/platform/storage/database.js';
import type { SessionRecord } from '../../src/platform/storage/index.js';
import type { Store } from '../../src/store.js';
import { testApp } from './app.js';
import type { AppDeps } from '../../src/app.js';
import { Browser, type Reply, type Wallet } from './auth-client.js';
import { SECOND, TestClock } from './clock.js';
import { openTestStore, testEngines, type TestEngine, type TestStore } from './databases.js';
import { extractCode, type ReceivedMail, type SmtpServerOptions, startSmtpServer, type TestSmtpServer } from './smtp-server.js';
import { type Bend, SoftwareAuthenticator } from './webauthn-authenticator.js';

/**
 * Rate limits off: these suites make hundreds of auth calls from one
 * loopback IP on purpose (the limits have their own tests).
 */
const AUTH_TEST_ENV: Readonly<Record<string, string>> = Object.freeze({
  RATE_LIMIT_READ_PER_MIN: '0',
  RATE_LIMIT_AUTH_PER_MIN: '0',
});

/** The family origin the default test app accepts: the origin of its default PUBLIC_URL. */
export const LOCAL_ORIGIN = 'http://localhost:8787';

/**
 * Declares `suite` once per engine: SQLite always, PostgreSQL when reachable
 * (mandatory with CI=true, see databases.ts). Call with top-level await.
 */
export async function forEachEngine(title: string, suite: (engine: TestEngine) => void): Promise<void> {
  for (const { engine, skipReason } of await testEngines()) {
    describe.skipIf(skipReason !== undefined)(`${title} on ${engine}`, () => suite(engine));
  }
}

/** A browser whose proofs each come from a new challenge: the clock moves a second first, so no two share a nonce. */
export class TimedBrowser extends Browser {
  readonly #clock: TestClock;

  constructor(app: FastifyInstance, clock: TestClock, origin = LOCAL_ORIGIN) {
    super(app, origin);
    this.#clock = clock;
  }

  override async prove(
    wallet: Wallet,
    purpose: string,
    audience?: string,
  ): Promise<{ address: string; message: string; signature: string; nonce: string }> {
    this.#clock.advance(SECOND);
    return super.prove(wallet, purpose, audience);
  }
}

/** A store of one engine, apps built on it with one clock, and a second raw connection for row counts. */
export class AuthHarness {
  readonly engine: TestEngine;
  readonly clock: TestClock;
  readonly #testStore: TestStore;
  readonly #apps: FastifyInstance[] = [];
  #raw: OpenDatabase | undefined;

  private constructor(engine: TestEngine, testStore: TestStore, clock: TestClock) {
    this.engine = engine;
    this.#testStore = testStore;
    this.clock = clock;
  }

  static async open(engine: TestEngine, clock = new TestClock()): Promise<AuthHarness> {
    return new AuthHarness(engine, await openTestStore(engine), clock);
  }

  get store(): Store {
    return this.#testStore.store;
  }

  /** A new app on this store and clock; closed by {@link closeApps} or {@link close}. */
  async app(env: Record<string, string> = {}, deps: AppDeps = {}): Promise<FastifyInstance> {
    const app = await testApp({ ...AUTH_TEST_ENV, ...env }, { ...deps, store: this.store, now: this.clock.now });
    this.#apps.push(app);
    return app;
  }

  browser(app: FastifyInstance, origin = LOCAL_ORIGIN): TimedBrowser {
    return new TimedBrowser(app, this.clock, origin);
  }

  /** A second connection to the same database, for checks the Store interface has no method for. */
  async raw(): Promise<OpenDatabase> {
    this.#raw ??= await openDatabase(this.#testStore.database.url);
    return this.#raw;
  }

  /** Every session row of an account, revoked and expired ones too. */
  async sessionRows(accountId: string): Promise<SessionRecord[]> {
    const raw = await this.raw();
    const rows = await raw.db.selectFrom('sessions').selectAll().where('account_id', '=', accountId).execute();
    return rows.map((row) => ({
      ...row,
      created_at: Number(row.created_at),
      expires_at: Number(row.expires_at),
      last_seen_at: Number(row.last_seen_at),
      revoked_at: row.revoked_at === null ? null : Number(row.revoked_at),
      step_up_at: row.step_up_at === null ? null : Number(row.step_up_at),
      sudo_at: row.sudo_at === null ? null : Number(row.sudo_at),
    }));
  }

  /** Unrevoked, unexpired rows of an account. */
  async liveRows(accountId: string): Promise<SessionRecord[]> {
    const now = this.clock.ms;
    return (await this.sessionRows(accountId)).filter((row) => row.revoked_at === null && row.expires_at > now);
  }

  /** Every (roster, account) pair that holds more than one live row: must always be empty (docs/protocol.md §3). */
  async duplicateLiveRosterRows(): Promise<Array<{ roster_id: string; account_id: string; count: number }>> {
    const raw = await this.raw();
    const rows = await raw.db
      .selectFrom('sessions')
      .select(['roster_id', 'account_id'])
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', this.clock.ms)
      .where('roster_id', 'is not', null)
      .execute();
    const counts = new Map<string, number>();
    for (const row of rows) {
      const key = `${row.roster_id} ${row.account_id}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts]
      .filter(([, count]) => count > 1)
      .map(([key, count]) => {
        const [roster_id = '', account_id = ''] = key.split(' ');
        return { roster_id, account_id, count };
      });
  }

  /** The live row a token belongs to, as the host finds it. */
  async rowOf(token: string): Promise<SessionRecord | null> {
    return this.store.findLiveSessionByTokenHash(tokenHash(token), this.clock.ms);
  }

  async closeApps(): Promise<void> {
    const apps = this.#apps.splice(0);
    await Promise.all(apps.map((app) => app.close()));
  }

  async close(): Promise<void> {
    try {
      await this.closeApps();
      await this.#raw?.close();
    } finally {
      await this.#testStore.dispose();
    }
  }
}

// ---- what a user can see ----

export interface DecodedJwt {
  readonly header: Record<string, unknown>;
  readonly payload: Record<string, unknown> & { sub: string; did_oc: string; jti: string; iat: number; exp: number };
}

/** The JWT's header and payload, decoded without any check (what `jose.decodeJwt` would show). */
export function decodeJwt(token: string): DecodedJwt {
  const [header, payload] = token.split('.');
  if (header === undefined || payload === undefined) throw new Error(`test: not a JWT: ${token}`);
  return {
    header: JSON.parse(Buffer.from(header, 'base64url').toString('utf8')),
    payload: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')),
  };
}

/** `did:oc:` + 32 lowercase hex (docs/protocol.md §2). */
export const DID_FORMAT = /^did:oc:[0-9a-f]{32}$/;

/** Any UUID, dashed: the roster id's form (docs/protocol.md §3). Account ids and jtis are undashed hex, so they never match. */
export const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** The error body of docs/protocol.md §4 with the given status and code. */
export function expectError(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, error: reply.body?.error }, JSON.stringify(reply.body)).toEqual({ status, error: code });
  expect(reply.body).toMatchObject({ ok: false, error: code, reason: code });
}

/** The `Set-Cookie` that carries a session, exactly as docs/protocol.md §3 writes it; returns the token. */
export function expectSessionCookie(reply: Reply, options: { domain?: string; maxAge?: number } = {}): string {
  const lines = reply.setCookies.filter((line) => line.startsWith('oc_session='));
  expect(lines, 'one oc_session cookie is set').toHaveLength(1);
  const line = lines[0]!;
  const match =
    /^oc_session=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+); Path=\/; HttpOnly; Secure; SameSite=Lax; Max-Age=(\d+)(; Domain=(.+))?$/.exec(
      line,
    );
  expect(match, line).not.toBeNull();
  expect(match![4]).toBe(options.domain);
  if (options.maxAge !== undefined) expect(Number(match![2])).toBe(options.maxAge);
  expect(reply.headers['cache-control']).toBe('no-store, private');
  return match![1]!;
}

/**
 * The clearing `Set-Cookie`s: same attributes, `Max-Age=0`; with a domain, the
 * host-only cookie too (cookie.ts); and the roster binding (roster-binding.ts).
 */
export function expectClearedCookies(reply: Reply, domain?: string): void {
  const base = 'oc_session=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0';
  const roster = '__Host-oc_roster=; Path=/; HttpOnly; Secure; SameSite=Lax; Max-Age=0';
  expect(reply.setCookies).toEqual(domain === undefined ? [base, roster] : [`${base}; Domain=${domain}`, base, roster]);
  expect(reply.headers['cache-control']).toBe('no-store, private');
}

/** The dids of `/me`'s roster, sorted; fails on a duplicate or on the active account in it. */
export function rosterDidsOf(me: Reply): string[] {
  expect(me.status, JSON.stringify(me.body)).toBe(200);
  const roster: Array<{ did_oc: string }> = me.body.roster ?? [];
  const dids = roster.map((entry) => entry.did_oc);
  expect(new Set(dids).size, `no account twice: ${dids.join(', ')}`).toBe(dids.length);
  expect(dids, 'roster never lists the active account').not.toContain(me.body.account.did_oc);
  return [...dids].sort();
}

export function sorted(values: readonly string[]): string[] {
  return [...values].sort();
}

/** A well-formed did that no account has (128 random bits never collide in a test). */
export function unknownDid(): string {
  const hex = [...crypto.getRandomValues(new Uint8Array(16))].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `did:oc:${hex}`;
}

/**
 * The per-engine fixture of an HTTP auth suite: opens a harness on `engine`
 * and builds one app before the suite's tests, hands both to `assign`, and
 * closes them after. `env` may be a function, read when the app is built
 * (after the suite's own earlier `beforeAll`, e.g. one that starts SMTP).
 */
export function useAuthHarness(
  engine: TestEngine,
  assign: (harness: AuthHarness, app: FastifyInstance) => void,
  env: Record<string, string> | (() => Record<string, string>) = {},
): void {
  let harness: AuthHarness | undefined;
  beforeAll(async () => {
    harness = await AuthHarness.open(engine);
    assign(harness, await harness.app(typeof env === 'function' ? env() : env));
  });
  afterAll(async () => {
    await harness?.close();
  });
}

/**
 * A real SMTP server for a block of tests: started before them, closed after them. What
 * comes back stands for it; read it in the tests (or in what they run), not
 * while the block is being collected.
 */
export function useSmtpServer(options: SmtpServerOptions = {}): TestSmtpServer {
  let server: TestSmtpServer | undefined;
  beforeAll(async () => {
    server = await startSmtpServer(options);
  });
  afterAll(async () => {
    await server?.close();
  });
  const started = (): TestSmtpServer => {
    if (server === undefined) throw new Error('test SMTP server: not started yet');
    return server;
  };
  return {
    get url() {
      return started().url;
    },
    get port() {
      return started().port;
    },
    messages: () => started().messages(),
    waitForMessage: (predicate, timeoutMs) => started().waitForMessage(predicate, timeoutMs),
    setMode: (mode) => started().setMode(mode),
    stop: () => started().stop(),
    close: () => started().close(),
  };
}

/** A suite's mailbox: a real SMTP server, and the codes of the mails it received. */
export interface Mailbox {
  /** `SMTP_URL` of the server (started before the suite's tests). */
  url(): string;
  /** The code of the next mail to `email` that no earlier call returned. */
  nextCode(email: string): Promise<string>;
}

/**
 * Starts an SMTP server for the suite and closes it after. Call it before
 * {@link useAuthHarness}, whose `env` then reads `mailbox.url()`.
 */
export function useMailbox(): Mailbox {
  const smtp = useSmtpServer();
  const read = new Set<ReceivedMail>();
  return {
    url: () => smtp.url,
    async nextCode(email) {
      // Only code mails: a new sign-in notice to the same address is not a code.
      const mail = await smtp.waitForMessage(
        (received) => received.envelope.to.includes(email) && !read.has(received) && (received.subject ?? '').includes('sign-in code'),
      );
      read.add(mail);
      return extractCode(mail);
    },
  };
}

/** A suite's harness and its app, to be read from the suite's tests (after its `beforeAll`). */
export interface AuthSuite {
  readonly harness: AuthHarness;
  readonly app: FastifyInstance;
}

/** {@link useAuthHarness} without the assigning callback: the harness and the app come back as getters. */
export function useAuthSuite(engine: TestEngine, env: Record<string, string> | (() => Record<string, string>) = {}): AuthSuite {
  let harness: AuthHarness | undefined;
  let app: FastifyInstance | undefined;
  useAuthHarness(
    engine,
    (opened, built) => {
      harness = opened;
      app = built;
    },
    env,
  );
  return {
    get harness(): AuthHarness {
      if (harness === undefined) throw new Error('auth suite: the harness is not open yet');
      return harness;
    },
    get app(): FastifyInstance {
      if (app === undefined) throw new Error('auth suite: the app is not built yet');
      return app;
    },
  };
}

/** {@link useAuthSuite} with a {@link useMailbox}: e-mail codes on, their hourly limit off. */
export function useMailingAuthSuite(engine: TestEngine): AuthSuite & { readonly mailbox: Mailbox } {
  const mailbox = useMailbox();
  return Object.assign(
    useAuthSuite(engine, () => ({ SMTP_URL: mailbox.url(), RATE_LIMIT_OTP_PER_HOUR: '0' })),
    { mailbox },
  );
}

/** Registers a new software key labelled "Desk key" for the local origin on `client` (in sudo already); the key and the 200 reply. */
export async function addDeskKey(client: Browser): Promise<{ key: SoftwareAuthenticator; added: Reply }> {
  const key = new SoftwareAuthenticator({ origin: 'http://localhost:8787' });
  const options = await client.post('/api/auth/webauthn/register/options', { label: 'Desk key' });
  const added = await client.post('/api/auth/webauthn/register/verify', {
    challenge_token: options.body.challenge_token,
    response: key.create(options.body.options),
  });
  expect(added.status).toBe(200);
  return { key, added };
}

/** Asks for a key challenge on `client` and answers it with `key`, bent by `bend` (another origin, say): the verify reply. */
export async function stepUpWithKey(client: Browser, key: SoftwareAuthenticator, bend: Bend = {}): Promise<Reply> {
  const options = await client.post('/api/auth/webauthn/assertion/options', {});
  return client.post('/api/auth/webauthn/assertion/verify', {
    challenge_token: options.body.challenge_token,
    response: key.get(options.body.options, bend),
  });
}
