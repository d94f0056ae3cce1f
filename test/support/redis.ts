/**
 * Redis for tests (docs/architecture.md: real Redis on loopback). Every test file works
 * under its own random key prefix (ioredis `keyPrefix`, carried in
 * REDIS_URL as `?keyPrefix=`), so parallel files never see each other's
 * keys and cleanup deletes only this file's keys.
 *
 * Availability: with `CI=true` the Redis suites must run, so an unreachable
 * server fails the test file; elsewhere they are skipped with a message.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { freePort } from './instances.js';

const DEFAULT_TEST_REDIS_URL = 'redis://127.0.0.1:6379/0';

export function redisTestBaseUrl(): string {
  return process.env.TEST_REDIS_URL || DEFAULT_TEST_REDIS_URL;
}

let availability: Promise<string | undefined> | undefined;

/** Undefined when Redis is reachable, else why the suite is skipped. Throws under CI=true. */
export function redisSkipReason(): Promise<string | undefined> {
  availability ??= (async () => {
    const client = new Redis(redisTestBaseUrl(), {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      return undefined;
    } catch (error) {
      const message = `Redis at ${redisTestBaseUrl()} is unreachable (${error instanceof Error ? error.message : String(error)})`;
      if (process.env.CI === 'true') throw new Error(`test: ${message}; CI=true requires the Redis suites. Set TEST_REDIS_URL.`);
      console.warn(`\n[redis tests] SKIPPING the Redis suites: ${message}. Start redis-server to run them (mandatory when CI=true).\n`);
      return message;
    } finally {
      client.disconnect();
    }
  })();
  return availability;
}

export interface TestRedis {
  /** This file's key prefix, e.g. `t-1a2b3c4d:`. */
  readonly prefix: string;
  /** REDIS_URL for the service: the test server with this prefix. */
  readonly url: string;
  /** A client under the prefix, for tests to inspect keys. */
  client(): Redis;
  /** Deletes every key under the prefix. */
  flush(): Promise<void>;
  /** Deletes the keys and disconnects the clients made here. */
  cleanup(): Promise<void>;
}

export function testRedis(): TestRedis {
  const prefix = `t-${randomBytes(6).toString('hex')}:`;
  const base = redisTestBaseUrl();
  const url = `${base}${base.includes('?') ? '&' : '?'}keyPrefix=${prefix}`;
  const clients: Redis[] = [];
  let adminClient: Redis | undefined;
  const flush = async () => {
    // Without a prefix of its own: SCAN patterns and DEL then name the full keys.
    adminClient ??= new Redis(base, { maxRetriesPerRequest: 1 });
    const admin = adminClient;
    let cursor = '0';
    do {
      const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await admin.del(...keys);
    } while (cursor !== '0');
  };
  return {
    prefix,
    url,
    client() {
      const client = new Redis(url, { maxRetriesPerRequest: 1 });
      clients.push(client);
      return client;
    },
    flush,
    async cleanup() {
      await flush();
      for (const client of clients.splice(0)) client.disconnect();
      adminClient?.disconnect();
      adminClient = undefined;
    },
  };
}

/** A redis:// URL at a loopback port where nothing listens. */
export async function closedRedisUrl(): Promise<string> {
  return `redis://127.0.0.1:${await freePort()}`;
}
