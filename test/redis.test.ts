/**
 * Shared state through a real Redis (docs/protocol.md §1 `REDIS_URL`): the
 * /api/check cache, used nonces (docs/protocol.md §5 (`SET NX` in Redis)) and
 * the cross-instance single flight. Two clients stand for two instances.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Redis } from 'ioredis';
import { createLruCache } from '../src/features/attestations/index.js';
import { OcError } from '../src/platform/errors.js';
import {
  connectRedis,
  createRedisClient,
  createRedisNonceGuard,
  createRedisResultCache,
  createRedisSingleFlight,
  deletionsChannel,
  listenForDeletions,
  pingRedis,
} from '../src/platform/redis/index.js';
import { closedRedisUrl, redisSkipReason, testRedis, type TestRedis } from './support/redis.js';

const skip = await redisSkipReason();
let redis: TestRedis;
let down: Redis;

beforeAll(async () => {
  redis = testRedis();
  down = createRedisClient(await closedRedisUrl());
  down.on('error', () => {});
  expect(await connectRedis(down, 500)).toBe(false);
});
afterEach(async () => {
  if (skip === undefined) await redis.flush();
});
afterAll(async () => {
  down.disconnect();
  await redis.cleanup();
});

/** A client built like the service builds its own (no offline queue). */
async function serviceClient(): Promise<Redis> {
  const client = createRedisClient(redis.url);
  client.on('error', () => {});
  expect(await connectRedis(client)).toBe(true);
  afterAllClients.push(client);
  return client;
}
const afterAllClients: Redis[] = [];
afterAll(() => {
  for (const client of afterAllClients) client.disconnect();
});

describe.skipIf(skip !== undefined)('the /api/check cache in Redis', () => {
  it('a value stored by one instance is read by another, with its expiry, under oc:check:', async () => {
    const now = Date.now();
    const a = createRedisResultCache<{ status: string }>({ redis: await serviceClient(), now: () => now });
    const b = createRedisResultCache<{ status: string }>({ redis: await serviceClient(), now: () => now });
    await a.set('addr:bc1qexample', { status: 'verified' }, 60_000);
    expect(await b.get('addr:bc1qexample')).toEqual({ value: { status: 'verified' }, expiresAtMs: now + 60_000 });
    const raw = redis.client();
    expect(JSON.parse((await raw.get('oc:check:addr:bc1qexample'))!)).toEqual({ e: now + 60_000, v: { status: 'verified' } });
    const ttl = await raw.pttl('oc:check:addr:bc1qexample');
    expect(ttl).toBeGreaterThan(55_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await b.get('addr:unknown')).toBeUndefined();
  });

  it('Redis expires the entry with PX', async () => {
    const cache = createRedisResultCache<number>({ redis: await serviceClient(), now: Date.now });
    await cache.set('short', 1, 50);
    expect(await cache.get('short')).toMatchObject({ value: 1 });
    await expect.poll(() => cache.get('short'), { timeout: 5_000, interval: 20 }).toBeUndefined();
  });

  it('the local tier answers a repeated hit synchronously, keeping the shared expiry', async () => {
    let now = 1_000_000;
    const client = await serviceClient();
    const writer = createRedisResultCache<string>({ redis: client, now: () => now });
    await writer.set('k', 'v', 10_000);
    const local = createLruCache<string>({ now: () => now });
    const reader = createRedisResultCache<string>({ redis: client, now: () => now, local });
    const first = reader.get('k');
    expect(first).toBeInstanceOf(Promise);
    expect(await first).toEqual({ value: 'v', expiresAtMs: 1_010_000 });
    now += 4_000;
    const second = reader.get('k');
    expect(second).toEqual({ value: 'v', expiresAtMs: 1_010_000 });
    now += 6_000;
    expect(local.get('k')).toBeUndefined();
  });

  it('a deletion on one instance reaches the local tier of another through the announcement', async () => {
    const now = Date.now();
    const clientA = await serviceClient();
    const clientB = await serviceClient();
    const channel = deletionsChannel(clientA);
    expect(channel).toBe(`${redis.prefix}oc:check:deleted`);
    const localB = createLruCache<string>({ now: () => now });
    const subscriber = clientB.duplicate();
    subscriber.on('error', () => {});
    afterAllClients.push(subscriber);
    listenForDeletions({ subscriber, channel, local: localB });
    await subscriber.connect();
    // Subscribed once Redis counts the subscriber on the channel.
    await expect.poll(async () => (await clientA.pubsub('NUMSUB', channel))[1], { timeout: 5_000, interval: 10 }).toBe(1);
    const a = createRedisResultCache<string>({ redis: clientA, now: () => now, channel });
    const b = createRedisResultCache<string>({ redis: clientB, now: () => now, local: localB, channel });
    await a.set('addr:bc1qexample', 'older', 60_000);
    expect(await b.get('addr:bc1qexample')).toMatchObject({ value: 'older' });
    expect(localB.get('addr:bc1qexample')?.value).toBe('older');

    await a.delete(['addr:bc1qexample', 'id:unknown']);
    await vi.waitFor(() => expect(localB.get('addr:bc1qexample')).toBeUndefined(), { timeout: 2_000, interval: 10 });
    expect(await redis.client().exists('oc:check:addr:bc1qexample')).toBe(0);
    expect(await b.get('addr:bc1qexample')).toBeUndefined();
  });

  it('an unreadable stored value is a miss, and a down Redis is a miss and a skipped write, never an error', async () => {
    await redis.client().set('oc:check:garbage', 'not json');
    const cache = createRedisResultCache<string>({ redis: await serviceClient(), now: Date.now });
    expect(await cache.get('garbage')).toBeUndefined();
    const errors: unknown[] = [];
    const broken = createRedisResultCache<string>({ redis: down, now: Date.now, onError: (error) => errors.push(error) });
    expect(await broken.get('k')).toBeUndefined();
    await broken.set('k', 'v', 1000);
    expect(errors).toHaveLength(2);
  });
});

describe.skipIf(skip !== undefined)('used nonces in Redis (SET NX PXAT)', () => {
  it('a nonce is consumed once across instances, and kept until the challenge expires', async () => {
    const expiresAt = Date.now() + 300_000;
    const a = createRedisNonceGuard({ redis: await serviceClient(), now: Date.now });
    const b = createRedisNonceGuard({ redis: await serviceClient(), now: Date.now });
    expect(await a.consume('00112233445566778899aabbccddeeff', expiresAt)).toBe(true);
    expect(await b.consume('00112233445566778899aabbccddeeff', expiresAt)).toBe(false);
    expect(await a.consume('00112233445566778899aabbccddeeff', expiresAt)).toBe(false);
    expect(await b.consume('ffeeddccbbaa99887766554433221100', expiresAt)).toBe(true);
    const expiry = await redis.client().pexpiretime('oc:nonce:00112233445566778899aabbccddeeff');
    expect(Math.abs(expiry - expiresAt)).toBeLessThanOrEqual(1);
  });

  it('concurrent consumers of one nonce: exactly one wins', async () => {
    const guards = await Promise.all(
      Array.from({ length: 4 }, async () => createRedisNonceGuard({ redis: await serviceClient(), now: Date.now })),
    );
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => guards[i % 4]!.consume('race', Date.now() + 60_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('a nonce at the edge of its lifetime is still kept for a second', async () => {
    const guard = createRedisNonceGuard({ redis: await serviceClient(), now: Date.now });
    expect(await guard.consume('edge', Date.now() - 10)).toBe(true);
    expect(await guard.consume('edge', Date.now() - 10)).toBe(false);
  });

  it('Redis down fails closed: 503 not_ready, never a silent accept', async () => {
    const errors: unknown[] = [];
    const guard = createRedisNonceGuard({ redis: down, now: Date.now, onError: (error) => errors.push(error) });
    const failure = await guard.consume('n', Date.now() + 1000).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OcError);
    expect((failure as OcError).code).toBe('not_ready');
    expect((failure as OcError).status).toBe(503);
    expect(errors).toHaveLength(1);
  });
});

describe.skipIf(skip !== undefined)('the cross-instance single flight', () => {
  it('two instances asked about one cold subject: the work runs once, the other reads the result it stored', async () => {
    const store = new Map<string, string>();
    let runs = 0;
    // What lookUpAndStore does: read the shared cache first, else work and store.
    const task = async () => {
      const cached = store.get('subject');
      if (cached !== undefined) return `hit:${cached}`;
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 150));
      store.set('subject', 'result');
      return 'miss:result';
    };
    const a = createRedisSingleFlight({ redis: await serviceClient() });
    const b = createRedisSingleFlight({ redis: await serviceClient() });
    const answers = await Promise.all([a.run('subject', task), b.run('subject', task), a.run('subject', task), b.run('subject', task)]);
    expect(runs).toBe(1);
    expect(answers.filter((answer) => answer === 'miss:result').length).toBeGreaterThanOrEqual(1);
    expect(answers.every((answer) => answer.endsWith('result'))).toBe(true);
    expect(await redis.client().exists('oc:flight:subject')).toBe(0); // released
  });

  it('a waiter gives up after the bound and does the work itself (the holder died)', async () => {
    const client = await serviceClient();
    // A lock left by a killed instance.
    await redis.client().set('oc:flight:orphan', 'someone-else', 'PX', 10_000);
    const flight = createRedisSingleFlight({ redis: client, waitMs: 300 });
    const started = Date.now();
    expect(await flight.run('orphan', async () => 'done')).toBe('done');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    // Not its lock: left alone.
    expect(await redis.client().get('oc:flight:orphan')).toBe('someone-else');
  });

  it('a failed task releases the lock and its error reaches the caller', async () => {
    const flight = createRedisSingleFlight({ redis: await serviceClient() });
    await expect(flight.run('failing', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect.poll(() => redis.client().exists('oc:flight:failing'), { timeout: 5_000, interval: 10 }).toBe(0);
  });

  it('Redis down: the task runs without a lock', async () => {
    const errors: unknown[] = [];
    const flight = createRedisSingleFlight({ redis: down, onError: (error) => errors.push(error) });
    expect(await flight.run('k', async () => 42)).toBe(42);
    expect(errors.length).toBeGreaterThanOrEqual(1);
  });
});

describe('the client', () => {
  it('a down Redis fails fast: no queued command, ping false', async () => {
    const started = Date.now();
    await expect(down.get('x')).rejects.toThrow();
    expect(await pingRedis(down)).toBe(false);
    expect(Date.now() - started).toBeLessThan(200);
  });
});
