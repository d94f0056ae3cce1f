/**
 * Two real oc-host processes on one PostgreSQL schema and one Redis
 * (docs/protocol.md §1 `REDIS_URL`: "several instances behave as one"), spoken to
 * over real HTTP with cookie jars, as a load balancer would spread a
 * browser's requests. Both run with TRUST_PROXY, and every browser sends its
 * own X-Forwarded-For, so each counts as its own client for the rate limits.
 *
 * Mandatory under CI=true (PostgreSQL and Redis must be up); elsewhere it is
 * skipped with a message when either is missing.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateSecretKey } from 'nostr-tools/pure';
import { addressFromPrivateKey } from './support/bitcoin-signer.js';
import { attestationEvent, signAttestation } from './support/attestations.js';
import { newWallet } from './support/auth-client.js';
import { createTestDatabase, postgresTestUrl, testEngines, type TestDatabase } from './support/databases.js';
import { startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { HttpBrowser, type HttpReply, type LoginProof } from './support/http-client.js';
import { startInstance, type Instance } from './support/instances.js';
import { startNostrRelay, type NostrRelay } from './support/nostr-relay.js';
import { redisSkipReason, testRedis, type TestRedis } from './support/redis.js';

const PUBLIC_URL = 'http://localhost:8787';
const postgresSkip = (await testEngines()).find((engine) => engine.engine === 'postgres')?.skipReason;
const redisSkip = await redisSkipReason();
const skip = postgresSkip ?? redisSkip;
if (skip !== undefined) console.warn(`\n[multi-instance] SKIPPING: ${skip}\n`);

let database: TestDatabase;
let redis: TestRedis;
let esplora: EsploraFake;
let relay: NostrRelay;
let env: Record<string, string>;
let a: Instance;
let b: Instance;
const instances: Instance[] = [];
let ipCounter = 0;

/** A browser with its own client address. */
function browser(): HttpBrowser {
  ipCounter += 1;
  return new HttpBrowser(PUBLIC_URL, `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`);
}

async function start(): Promise<Instance> {
  const instance = await startInstance(env, { readyTimeoutMs: 60_000 });
  instances.push(instance);
  return instance;
}

beforeAll(async () => {
  if (skip !== undefined) return;
  database = await createTestDatabase('postgres');
  redis = testRedis();
  esplora = await startEsploraFake({ tipHeight: 1000 });
  relay = await startNostrRelay();
  env = {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    PUBLIC_URL,
    TRUST_PROXY: 'true',
    NOSTR_RELAYS: relay.url,
    ESPLORA_URLS: esplora.url,
    RATE_LIMIT_READ_PER_MIN: '60',
    RATE_LIMIT_AUTH_PER_MIN: '20',
  };
  // Both at once on a fresh schema: migrations and generated secrets must not race.
  [a, b] = await Promise.all([start(), start()]);
}, 120_000);

afterAll(async () => {
  if (skip !== undefined) return;
  await Promise.all(instances.map((instance) => instance.stop()));
  await relay?.close();
  await esplora?.close();
  await redis?.cleanup();
  await database?.cleanup();
}, 60_000);

function expectOk(reply: HttpReply, what: string): void {
  expect(reply.status, `${what}: ${JSON.stringify(reply.body)}`).toBe(200);
}

describe.skipIf(skip !== undefined)('two instances behave as one', () => {
  it('sign in on A, /me on B; switch on B, /me on A shows it; logout on A, B refuses the old cookie', async () => {
    const user = browser();
    const first = newWallet();
    const second = newWallet();
    const signedIn = await user.signIn(a.url, first);
    expectOk(signedIn, 'sign-in on A');
    const firstDid = signedIn.body.account.did_oc;

    const meOnB = await user.me(b.url);
    expectOk(meOnB, '/me on B');
    expect(meOnB.body.account.did_oc).toBe(firstDid);
    expect(meOnB.body.roster).toEqual([]);

    const added = await user.signIn(b.url, second, { add: true });
    expectOk(added, 'add on B');
    const secondDid = added.body.account.did_oc;
    const switched = await user.switchTo(b.url, firstDid);
    expectOk(switched, 'switch on B');
    const meOnA = await user.me(a.url);
    expectOk(meOnA, '/me on A');
    expect(meOnA.body.account.did_oc).toBe(firstDid);
    expect(meOnA.body.roster.map((entry: { did_oc: string }) => entry.did_oc)).toEqual([secondDid]);

    const oldCookie = user.cookie;
    expectOk(await user.logout(a.url, 'all'), 'logout on A');
    expect(user.cookie).toBeUndefined();
    user.cookie = oldCookie;
    const afterLogout = await user.me(b.url);
    expect(afterLogout.status).toBe(401);
    expect(afterLogout.body.error).toBe('not_authenticated');
  });

  it('a nonce consumed on A is refused on B (and is held in Redis until the challenge expires)', async () => {
    const user = browser();
    const wallet = newWallet();
    const proof = await user.prove(b.url, wallet);
    expectOk(await user.submit(a.url, proof), 'first use on A');
    const replay = await browser().submit(b.url, proof);
    expect(replay.status).toBe(401);
    expect(replay.body.error).toBe('nonce_reused');
    const ttl = await redis.client().pttl(`oc:nonce:${proof.nonce}`);
    expect(ttl).toBeGreaterThan(200_000);
    expect(ttl).toBeLessThanOrEqual(300_000);
  });

  it('the rate limit counts requests to A and B together', async () => {
    const client = browser();
    const replies: HttpReply[] = [];
    const started = Date.now();
    for (let i = 0; i < 26; i++) replies.push(await client.logout(i % 2 === 0 ? a.url : b.url));
    const elapsed = Date.now() - started;
    const allowed = replies.filter((reply) => reply.status === 401).length;
    // 20 a minute refills one every 3 s: a slow run may see one more.
    expect(allowed).toBeGreaterThanOrEqual(20);
    expect(allowed).toBeLessThanOrEqual(20 + Math.floor(elapsed / 3000));
    expect(replies.slice(0, 20).every((reply) => reply.status === 401)).toBe(true);
    const refused = replies.at(-1)!;
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('rate_limited');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(replies[19]!.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(replies[10]!.headers.get('x-ratelimit-remaining')).toBe('9');
  });

  it('a check cached by A is a hit on B: one relay query and one chain query in all', async () => {
    const key = new Uint8Array(32).fill(77);
    const address = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
    const nowSeconds = Math.floor(Date.now() / 1000);
    esplora.setUtxos(address, [
      {
        txid: 'cd'.repeat(32),
        vout: 0,
        value: 500_000,
        status: { confirmed: true, block_height: 900, block_hash: '00'.repeat(32), block_time: nowSeconds - 60 * 86_400 },
      },
    ]);
    const issuedAt = new Date(Date.now() - 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    relay.publishRaw(
      attestationEvent(signAttestation(key, address, issuedAt), { publisherKey: generateSecretKey(), createdAt: new Date() }),
    );
    esplora.resetRequests();
    const relayRequestsBefore = relay.requestCount;

    const client = browser();
    const onA = await client.get(a.url, `/api/check?addr=${address}`);
    expectOk(onA, 'check on A');
    expect(onA.headers.get('x-cache')).toBe('miss');
    expect(onA.body).toMatchObject({ ok: true, sats: 500_000, days: 60, address });
    const onB = await client.get(b.url, `/api/check?addr=${address}&min_sats=1000`);
    expectOk(onB, 'check on B');
    expect(onB.headers.get('x-cache')).toBe('hit');
    expect(onB.body).toMatchObject({ ok: true, sats: 500_000, attestation_id: onA.body.attestation_id });
    expect(esplora.requests.utxo).toBe(1);
    expect(relay.requestCount - relayRequestsBefore).toBe(1);
  });

  it('cold checks of one subject on both instances at once cost one relay and one chain query', async () => {
    const key = new Uint8Array(32).fill(78);
    const address = addressFromPrivateKey(key, 'p2tr', 'mainnet');
    const issuedAt = new Date(Date.now() - 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    relay.publishRaw(
      attestationEvent(signAttestation(key, address, issuedAt), { publisherKey: generateSecretKey(), createdAt: new Date() }),
    );
    esplora.setUtxos(address, [
      {
        txid: 'ef'.repeat(32),
        vout: 0,
        value: 1000,
        status: { confirmed: true, block_height: 990, block_time: Math.floor(Date.now() / 1000) },
      },
    ]);
    // Slow chain, so every request arrives while the first look-up runs.
    esplora.setDelay(300);
    esplora.resetRequests();
    const relayRequestsBefore = relay.requestCount;
    try {
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => browser().get(i % 2 === 0 ? a.url : b.url, `/api/check?addr=${address}`)),
      );
      for (const answer of answers) expectOk(answer, 'concurrent check');
      expect(esplora.requests.utxo).toBe(1);
      expect(relay.requestCount - relayRequestsBefore).toBe(1);
    } finally {
      esplora.setDelay(0);
    }
  });

  it('an attestation published through A shows at once on B, though B had the older one cached', async () => {
    const key = new Uint8Array(32).fill(79);
    const address = addressFromPrivateKey(key, 'p2wpkh', 'mainnet');
    esplora.setUtxos(address, [
      {
        txid: '9a'.repeat(32),
        vout: 0,
        value: 300_000,
        status: { confirmed: true, block_height: 950, block_time: Math.floor(Date.now() / 1000) - 10 * 86_400 },
      },
    ]);
    const older = signAttestation(key, address, new Date(Date.now() - 2 * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z'), {
      identities: ['github:erin'],
    });
    relay.publishRaw(attestationEvent(older, { publisherKey: generateSecretKey(), createdAt: new Date() }));
    const client = browser();
    for (const path of [`/api/check?addr=${address}`, '/api/check?identity=github:erin']) {
      expectOk(await client.get(b.url, path), 'check on B');
      const cached = await client.get(b.url, path);
      expect(cached.headers.get('x-cache')).toBe('hit');
      expect(cached.body.attestation_id).toBe(older.id);
    }

    const newer = signAttestation(key, address, new Date(Date.now() - 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z'), {
      identities: ['github:erin'],
    });
    const published = await client.post(a.url, '/api/attestations', { addr: address, msg: newer.msg, sig: newer.sig });
    expectOk(published, 'publish on A');
    expect(published.body.ok).toBe(true);

    // B drops its local copies when A's announcement arrives (Redis pub/sub, moments later).
    for (const path of [`/api/check?addr=${address}`, '/api/check?identity=github:erin']) {
      await vi.waitFor(
        async () => {
          const reply = await client.get(b.url, path);
          expectOk(reply, 'check on B after the publication');
          expect(reply.body.attestation_id).toBe(newer.id);
        },
        { timeout: 5_000, interval: 50 },
      );
    }
  });

  it('SIGKILL of A in the middle of a batch of sign-ins: B serves every session A issued, rosters stay whole', async () => {
    // 30 browsers, each already signed in on B with one account; each then
    // adds a second account on A (twice at once: the same account must not
    // land twice in one roster), and A dies while the batch runs.
    const users = Array.from({ length: 30 }, () => ({ browser: browser(), first: newWallet(), second: newWallet() }));
    for (const user of users) expectOk(await user.browser.signIn(b.url, user.first), 'first sign-in on B');
    const proofs: { user: (typeof users)[number]; proof: LoginProof }[] = [];
    for (const user of users) {
      proofs.push({ user, proof: await user.browser.prove(b.url, user.second, { ttl: 300 }) });
      proofs.push({ user, proof: await user.browser.prove(b.url, user.second, { ttl: 301 }) });
    }
    const cookiesBefore = new Map(users.map((user) => [user, user.browser.cookie]));
    const bindings = new Map(users.map((user) => [user, user.browser.binding]));
    // One jar per request: two concurrent sign-ins of one browser each keep their own answer.
    const attempts = proofs.map(({ user, proof }) => {
      const jar = new HttpBrowser(PUBLIC_URL, user.browser.ip);
      jar.cookie = cookiesBefore.get(user);
      jar.binding = bindings.get(user);
      return {
        user,
        jar,
        reply: jar.submit(a.url, proof, { add: true }).then(
          (reply) => reply,
          (error: unknown) => error,
        ),
      };
    });
    // Kill A once a few sign-ins succeeded, with the rest in flight.
    let succeededSoFar = 0;
    await new Promise<void>((resolve) => {
      for (const attempt of attempts) {
        void attempt.reply.then((reply) => {
          if ((reply as HttpReply)?.status === 200 && ++succeededSoFar === 8) resolve();
        });
      }
      setTimeout(resolve, 10_000);
    });
    a.child.kill('SIGKILL');
    expect(await a.exited).toBe('SIGKILL');
    const outcomes = await Promise.all(attempts.map(async (attempt) => ({ ...attempt, result: await attempt.reply })));
    const succeeded = outcomes.filter((outcome) => (outcome.result as HttpReply).status === 200);
    const failed = outcomes.filter((outcome) => !((outcome.result as HttpReply)?.status === 200));
    expect(succeeded.length).toBeGreaterThanOrEqual(8);
    expect(failed.length).toBeGreaterThan(0); // A really died mid-batch

    // The sessions A issued work on B, as the account they were issued for,
    // with a whole roster. A second sign-in of one account into one roster
    // replaces the first one's row (a re-authentication, not a second entry:
    // docs/protocol.md §3), so of a browser's two concurrent sign-ins at most one
    // stays live, as a real browser keeps only the last cookie. The one that
    // replaced it may be a request whose answer A never sent: then the row
    // it wrote is live, and shows in the roster of the earlier session.
    const earlierMe = new Map<(typeof users)[number], HttpReply>();
    for (const user of users) {
      const holder = new HttpBrowser(PUBLIC_URL, user.browser.ip);
      holder.cookie = cookiesBefore.get(user);
      holder.binding = bindings.get(user);
      earlierMe.set(user, await holder.me(b.url));
    }
    for (const user of users) {
      const mine = succeeded.filter((outcome) => outcome.user === user);
      if (mine.length === 0) continue;
      const answers = await Promise.all(mine.map((outcome) => outcome.jar.me(b.url)));
      for (const answer of answers) expect([200, 401]).toContain(answer.status);
      const live = answers.filter((answer) => answer.status === 200);
      expect(live.length).toBeLessThanOrEqual(1);
      if (live.length === 0) {
        expect(mine.length).toBe(1);
        expect(earlierMe.get(user)!.body.roster.map((entry: { primary_btc: string }) => entry.primary_btc)).toEqual([user.second.address]);
        continue;
      }
      const me = live[0]!;
      expect(me.body.account.primary_btc).toBe(user.second.address);
      expect(me.body.account.did_oc).toBe((mine[answers.indexOf(me)]!.result as HttpReply).body.account.did_oc);
      const dids = [me.body.account.did_oc, ...me.body.roster.map((entry: { did_oc: string }) => entry.did_oc)];
      expect(new Set(dids).size).toBe(dids.length);
      expect(me.body.roster.map((entry: { primary_btc: string }) => entry.primary_btc)).toEqual([user.first.address]);
    }
    // Every browser's earlier cookie still works on B (never a 500), and its roster has no duplicate.
    for (const user of users) {
      const me = earlierMe.get(user)!;
      expectOk(me, 'earlier session on B');
      expect(me.body.account.primary_btc).toBe(user.first.address);
      const dids = [me.body.account.did_oc, ...me.body.roster.map((entry: { did_oc: string }) => entry.did_oc)];
      expect(new Set(dids).size).toBe(dids.length);
      expect(me.body.roster.length).toBeLessThanOrEqual(1);
    }
    // The database agrees: no roster holds one account twice among its live rows.
    const client = new pg.Client({ connectionString: postgresTestUrl() });
    await client.connect();
    try {
      const schema = new URL(database.url).searchParams.get('schema')!;
      const duplicates = await client.query(
        `SELECT roster_id, account_id, count(*) FROM ${pg.escapeIdentifier(schema)}.sessions
         WHERE revoked_at IS NULL GROUP BY roster_id, account_id HAVING count(*) > 1`,
      );
      expect(duplicates.rows).toEqual([]);
    } finally {
      await client.end();
    }

    // B keeps working on its own; a restarted A joins it with the same state.
    const late = browser();
    expectOk(await late.signIn(b.url, newWallet()), 'sign-in on B after the kill');
    expect((await late.get(b.url, '/readyz')).body).toMatchObject({ ok: true, checks: { storage: 'ok', redis: 'ok', keys: 'ok' } });
    a = await start();
    expectOk(await late.me(a.url), '/me on the restarted A');
    const live = await Promise.all(succeeded.map(async (outcome) => ({ outcome, status: (await outcome.jar.me(b.url)).status })));
    for (const { outcome } of live.filter((entry) => entry.status === 200)) {
      expectOk(await outcome.jar.me(a.url), 'restarted A serves sessions it issued before dying');
    }
  }, 120_000);
});
