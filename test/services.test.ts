/**
 * The composition root's first half (src/services.ts, docs/architecture.md
 * "Composition root"): what it opens it closes, on close and when the build
 * fails half-way, and what a caller injects stays the caller's.
 */
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/platform/config.js';
import { buildServices, type ServiceLog } from '../src/services.js';
import { redisSkipReason, redisTestBaseUrl } from './support/redis.js';
import { openTestStore } from './support/databases.js';
import { freePort } from './support/instances.js';

const quiet: ServiceLog = { info: () => {}, warn: () => {}, error: () => {} };
const skip = await redisSkipReason();

function env(extra: Record<string, string>): Record<string, string> {
  return {
    PUBLIC_URL: 'http://localhost:8787',
    LOG_LEVEL: 'silent',
    NOSTR_RELAYS: 'ws://127.0.0.1:9',
    ESPLORA_URLS: 'http://127.0.0.1:9',
    ...extra,
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe.skipIf(skip !== undefined)('buildServices', () => {
  it('closes the Redis client it made when the build fails after it (the database cannot be reached)', async () => {
    const disconnect = vi.spyOn(Redis.prototype, 'disconnect');
    const port = await freePort();
    const config = loadConfig(env({ REDIS_URL: redisTestBaseUrl(), DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/nothing` }));
    await expect(buildServices(config, {}, quiet)).rejects.toThrow();
    expect(disconnect).toHaveBeenCalledTimes(1);
  });

  it('closes what it opened on close, and leaves an injected store and Redis client open', async () => {
    const opened = await openTestStore('sqlite');
    const redis = new Redis(redisTestBaseUrl());
    try {
      // Only the injected client: the services open (and close) a listening connection of their own.
      const disconnect = vi.spyOn(redis, 'disconnect');
      const services = await buildServices(loadConfig(env({ REDIS_URL: redisTestBaseUrl() })), { store: opened.store, redis }, quiet);
      expect(await services.context.readiness()).toMatchObject({ storage: 'ok', redis: 'ok' });
      await services.close();
      expect(disconnect).not.toHaveBeenCalled();
      expect(await opened.store.ping()).toBeUndefined();
      expect(await redis.ping()).toBe('PONG');
    } finally {
      redis.disconnect();
      await opened.dispose();
    }
  });
});
