/**
 * Revocation that reaches consumer sites (docs/protocol.md §3 "Revocations"):
 * the host's feed through HTTP (entries, cursor, ETag and 304, bounds, bad
 * input), and end to end with a running host and a consumer Fastify app
 * using @oc-host/verify's poller: a session signed out on the host is refused
 * by the consumer within its polling interval; fail open and fail closed
 * when the feed goes away.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionVerifier, stopRevocationPolling } from '../packages/verify/src/index.js';
import * as fastifyVerify from '../packages/verify/src/fastify.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newWallet } from './support/auth-client.js';
import { ISSUER, signInWithWallet, startHost, type RunningHost } from './support/consumer-host.js';
import { freePort, signInOnInstance, startInstance, type Instance } from './support/instances.js';
import { openTestStore, testEngines, type TestStore } from './support/databases.js';
import { testApp } from './support/app.js';

let host: RunningHost;
let feedUrl: string;

beforeAll(async () => {
  host = await startHost({ RATE_LIMIT_READ_PER_MIN: '0', RATE_LIMIT_AUTH_PER_MIN: '0' });
  feedUrl = `${host.url}/api/auth/revocations`;
});

afterAll(async () => {
  stopRevocationPolling();
  await host?.close();
});

async function feed(
  query = '',
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; etag: string | null; cache: string | null }> {
  const response = await fetch(`${feedUrl}${query}`, { headers });
  const text = await response.text();
  return {
    status: response.status,
    body: text === '' ? null : JSON.parse(text),
    etag: response.headers.get('etag'),
    cache: response.headers.get('cache-control'),
  };
}

async function jtiOf(token: string): Promise<string> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).jti;
}

describe('GET /api/auth/revocations', () => {
  it('lists a signed-out session with its exp until it expires, pages by cursor and answers 304 to its ETag', async () => {
    const issued = await signInWithWallet(host);
    const jti = await jtiOf(issued.token);
    const before = await feed();
    expect(before.status).toBe(200);
    expect(before.body.revocations.map((entry: { jti: string }) => entry.jti)).not.toContain(jti);
    expect(before.cache).toBe('public, max-age=1');

    expect((await issued.browser.post('/api/auth/logout?scope=all')).status).toBe(200);
    // A second later the cached answer for this cursor has lapsed.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const after = await feed(`?since=${before.body.cursor}`);
    expect(after.body.revocations).toContainEqual({
      jti,
      exp: JSON.parse(Buffer.from(issued.token.split('.')[1]!, 'base64url').toString()).exp,
    });
    expect(after.body.more).toBe(false);
    // Everything in force, without a cursor, holds it too.
    expect((await feed()).body.revocations.map((entry: { jti: string }) => entry.jti)).toContain(jti);

    const again = await feed(`?since=${after.body.cursor}`);
    const unchanged = await feed(`?since=${after.body.cursor}`, { 'if-none-match': again.etag as string });
    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBeNull();
    expect((await feed(`?since=${after.body.cursor}`, { 'if-none-match': '"other"' })).status).toBe(200);
  });

  it('refuses a cursor it did not answer', async () => {
    for (const since of ['x', Buffer.from('12.ZZ').toString('base64url'), 'a'.repeat(200)]) {
      const reply = await feed(`?since=${since}`);
      expect(reply.status, since).toBe(400);
      expect(reply.body.reason).toBe('bad_request');
    }
  });
});

describe('the feed over a store', () => {
  it('pages 1000 at a time, then steps the cursor back over the clock-skew window so a late stamp is not skipped', async () => {
    const { openTestStore } = await import('./support/databases.js');
    const { RevocationFeed, MAX_REVOCATIONS_PER_PAGE, CLOCK_SKEW_MS } = await import('../src/identity/session/revocations.js');
    const testStore = await openTestStore('sqlite');
    try {
      const store = testStore.store;
      const t0 = Date.UTC(2026, 0, 1);
      const account = await store.createAccountWithIdentity({
        account: { kind: 'btc', created_at: t0 },
        identity: { kind: 'btc', value: 'bc1qfeedtest0000000000000000000000000000', verified: true, created_at: t0 },
      });
      let clock = t0 + 1000;
      const feedOf = new RevocationFeed(store, () => new Date(clock));
      for (let index = 0; index < MAX_REVOCATIONS_PER_PAGE + 1; index += 1) {
        const row = await store.insertSession({
          jti: index.toString(16).padStart(32, '0'),
          token_hash: index.toString(16).padStart(64, '0'),
          account_id: account.account.id,
          roster_id: null,
          signing_method: 'bip322',
          created_at: t0,
          expires_at: t0 + 30 * 86_400_000,
        });
        await store.revokeSession(row.jti, t0 + 500 + Math.floor(index / 100));
      }
      const first = await feedOf.page(undefined);
      expect(first.revocations).toHaveLength(MAX_REVOCATIONS_PER_PAGE);
      expect(first.more).toBe(true);
      const second = await feedOf.page(first.cursor);
      expect(second.revocations.map((entry) => entry.jti)).toEqual([MAX_REVOCATIONS_PER_PAGE.toString(16).padStart(32, '0')]);
      expect(second.more).toBe(false);
      // Another instance, its clock a little behind, stamps a revocation "before" the last one seen.
      const late = await store.insertSession({
        jti: 'f'.repeat(32),
        token_hash: 'f'.repeat(64),
        account_id: account.account.id,
        roster_id: null,
        signing_method: 'bip322',
        created_at: t0,
        expires_at: t0 + 30 * 86_400_000,
      });
      await store.revokeSession(late.jti, t0 + 500 + 10 - Math.floor(CLOCK_SKEW_MS / 2));
      clock += 2000;
      const third = await feedOf.page(second.cursor);
      expect(third.revocations.map((entry) => entry.jti)).toContain(late.jti);
      // The same cursor within a second: the cached answer, with the same ETag.
      expect((await feedOf.page(second.cursor)).etag).toBe(third.etag);
    } finally {
      await testStore.dispose();
    }
  });
});

for (const { engine, skipReason } of await testEngines()) {
  describe.skipIf(skipReason !== undefined)(`the end of the feed over HTTP (${engine})`, () => {
    const t0 = Date.UTC(2026, 0, 1);
    let testStore: TestStore;
    let app: FastifyInstance;
    let clock = t0;
    let accountId: string;
    let serial = 0;

    beforeAll(async () => {
      testStore = await openTestStore(engine);
      app = await testApp({ RATE_LIMIT_READ_PER_MIN: '0' }, { store: testStore.store, now: () => new Date(clock) });
      const created = await testStore.store.createAccountWithIdentity({
        account: { kind: 'btc', created_at: t0 },
        identity: { kind: 'btc', value: 'bc1qfeedquiet000000000000000000000000000', verified: true, created_at: t0 },
      });
      accountId = created.account.id;
    });
    afterAll(async () => {
      await app?.close();
      await testStore?.dispose();
    });

    /** A session revoked with the stamp `revokedAt`, as an instance whose clock reads that would write it. */
    async function revokedSession(revokedAt: number): Promise<string> {
      serial += 1;
      const row = await testStore.store.insertSession({
        jti: serial.toString(16).padStart(32, 'a'),
        token_hash: serial.toString(16).padStart(64, 'b'),
        account_id: accountId,
        roster_id: null,
        signing_method: 'bip322',
        created_at: t0,
        expires_at: t0 + 30 * 86_400_000,
      });
      await testStore.store.revokeSession(row.jti, revokedAt);
      return row.jti;
    }

    async function poll(since?: string, etag?: string): Promise<{ status: number; jtis: string[]; cursor: string; etag: string }> {
      const reply = await app.inject({
        method: 'GET',
        url: `/api/auth/revocations${since === undefined ? '' : `?since=${since}`}`,
        headers: etag === undefined ? {} : { 'if-none-match': etag },
      });
      const body = reply.statusCode === 200 ? reply.json() : null;
      return {
        status: reply.statusCode,
        jtis: body === null ? [] : body.revocations.map((entry: { jti: string }) => entry.jti),
        cursor: body?.cursor,
        etag: String(reply.headers.etag),
      };
    }

    it('answers an empty list once the feed has been quiet past the skew window, and 304 to the same cursor after', async () => {
      clock = t0 + 60_000;
      const first = await revokedSession(clock);
      clock += 6000;
      const reached = await poll();
      expect(reached.jtis).toEqual([first]);
      // More than 5 s later, nothing new: the last revocation is not answered again.
      clock += 5500;
      const quiet = await poll(reached.cursor);
      expect(quiet.status).toBe(200);
      expect(quiet.jtis).toEqual([]);
      // A quiet feed keeps its cursor, so the next poll (past the 1-s cache) can be a bodiless 304.
      expect(quiet.cursor).toBe(reached.cursor);
      clock += 5000;
      expect((await poll(quiet.cursor, quiet.etag)).status).toBe(304);
    });

    it('still delivers a revocation stamped 4 s before the time it shows up, after the previous poll, even one stamped before a revocation already answered', async () => {
      clock = t0 + 120_000;
      const start = await poll();
      clock += 10_000;
      // After the previous poll, another instance whose clock is 4 s behind writes a revocation.
      const late = await revokedSession(clock - 4000);
      clock += 1000;
      const next = await poll(start.cursor);
      expect(next.jtis).toEqual([late]);
      // A fresh revocation is answered; one written after that poll but stamped before it still arrives.
      const fresh = await revokedSession(clock);
      clock += 1500;
      const withFresh = await poll(next.cursor);
      expect(withFresh.jtis).toContain(fresh);
      const earlier = await revokedSession(clock - 3000);
      clock += 1500;
      expect((await poll(withFresh.cursor)).jtis).toContain(earlier);
    });
  });
}

describe('a consumer site with the revocation poller', () => {
  let consumer: FastifyInstance;

  beforeAll(async () => {
    const jwk = ((await (await fetch(host.jwksUrl)).json()) as { keys: unknown[] }).keys[0];
    consumer = Fastify();
    await consumer.register(fastifyVerify.ocSession, {
      publicJwk: jwk as never,
      issuer: ISSUER,
      revocations: { url: feedUrl, intervalSeconds: 1 },
    });
    consumer.get('/whoami', { preHandler: fastifyVerify.requireSession() }, async (request) => ({ did: request.ocSession?.did_oc }));
    await consumer.ready();
  });

  afterAll(async () => {
    await consumer?.close();
  });

  async function whoami(token: string): Promise<number> {
    return (await consumer.inject({ method: 'GET', url: '/whoami', headers: { cookie: `oc_session=${token}` } })).statusCode;
  }

  it('refuses a cookie signed out on the host within the polling interval, and keeps accepting the others', async () => {
    const leaving = await signInWithWallet(host);
    const staying = await signInWithWallet(host);
    expect(await whoami(leaving.token)).toBe(200);
    expect((await leaving.browser.post('/api/auth/logout?scope=all')).status).toBe(200);
    // Within an interval (1 s) plus the feed's one-second cache; the bound here is only a deadline for a broken poller.
    await expect.poll(() => whoami(leaving.token), { timeout: 8000, interval: 100 }).toBe(401);
    expect(await whoami(staying.token)).toBe(200);
  });

  it('refuses a browser that another browser of the account signed out', async () => {
    const wallet = (await import('./support/auth-client.js')).newWallet();
    const phone = await signInWithWallet(host, wallet);
    const laptop = await signInWithWallet(host, wallet);
    expect(await whoami(phone.token)).toBe(200);
    expect((await laptop.browser.post('/api/auth/sudo', await laptop.browser.prove(wallet, 'sudo'))).status).toBe(200);
    expect((await laptop.browser.post('/api/auth/sessions/revoke-others')).status).toBe(200);
    await expect.poll(() => whoami(phone.token), { timeout: 8000, interval: 100 }).toBe(401);
  });

  it('fails open by default and closed on request when the feed cannot be read', async () => {
    const issued = await signInWithWallet(host);
    const jwk = ((await (await fetch(host.jwksUrl)).json()) as { keys: unknown[] }).keys[0] as never;
    const unreachable = 'http://127.0.0.1:9/api/auth/revocations';
    const open = createSessionVerifier({ publicJwk: jwk, issuer: ISSUER, revocations: { url: unreachable, intervalSeconds: 1 } });
    const closed = createSessionVerifier({
      publicJwk: jwk,
      issuer: ISSUER,
      revocations: { url: `${unreachable}?closed`, intervalSeconds: 1, failClosed: true },
    });
    expect(await open.verify(issued.token)).not.toBeNull();
    expect(await closed.verify(issued.token)).toBeNull();
    expect(() =>
      createSessionVerifier({ publicJwk: jwk, issuer: ISSUER, revocations: { url: 'http://auth.example.com/api/auth/revocations' } }),
    ).toThrow(/revocations\.url must be https/);
    expect(() => createSessionVerifier({ publicJwk: jwk, issuer: ISSUER, revocations: { url: feedUrl, intervalSeconds: 0 } })).toThrow(
      /intervalSeconds/,
    );
  });
});

describe('through kill -9 of the host', () => {
  it('a revocation answered before the host was killed reaches the consumer once the host is back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'oc-revocations-'));
    const port = await freePort();
    const origin = `http://localhost:${port}`;
    const env = {
      PORT: String(port),
      PUBLIC_URL: origin,
      DATABASE_URL: `sqlite:${join(dir, 'oc.sqlite')}`,
      NOSTR_RELAYS: 'ws://127.0.0.1:9',
      ESPLORA_URLS: 'http://127.0.0.1:9',
      RATE_LIMIT_READ_PER_MIN: '0',
      RATE_LIMIT_AUTH_PER_MIN: '0',
    };
    let instance: Instance | undefined = await startInstance(env);
    try {
      const wallet = newWallet();
      const token = await signInOnInstance(instance, origin, wallet);
      const jwk = ((await (await fetch(`${instance.url}/api/auth/jwks`)).json()) as { keys: unknown[] }).keys[0] as never;
      const verifier = createSessionVerifier({
        publicJwk: jwk,
        issuer: origin,
        revocations: { url: `${instance.url}/api/auth/revocations`, intervalSeconds: 1 },
      });
      expect(await verifier.verify(token)).not.toBeNull();

      const loggedOut = await fetch(`${instance.url}/api/auth/logout?scope=all`, {
        method: 'POST',
        headers: { origin, cookie: `oc_session=${token}` },
      });
      expect(loggedOut.status).toBe(200);
      // Killed at once, before the consumer's next poll could see it.
      instance.child.kill('SIGKILL');
      await instance.exited;

      instance = await startInstance(env);
      await expect.poll(() => verifier.verify(token), { timeout: 10_000, interval: 200 }).toBeNull();
    } finally {
      await instance?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
