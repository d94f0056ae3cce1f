/**
 * Shared state through Redis when `REDIS_URL` is set (docs/protocol.md §1): the
 * client, the /api/check cache, used nonces and the cross-instance single
 * flight. The shared rate limiter lives with the other limiters
 * (src/limits/redis.ts). PostgreSQL (or SQLite) stays the system of record:
 * nothing here must survive a Redis restart.
 */
export { connectRedis, createRedisClient, pingRedis, REDIS_COMMAND_TIMEOUT_MS, REDIS_CONNECT_TIMEOUT_MS } from './client.js';
export {
  CHAIN_CACHE_KEY_PREFIX,
  CHECK_CACHE_KEY_PREFIX,
  CHECK_DELETIONS_CHANNEL,
  createRedisResultCache,
  deletionsChannel,
  listenForDeletions,
  type DeletionListenerOptions,
  type RedisResultCacheOptions,
} from './cache.js';
export { createRedisNonceGuard, NONCE_KEY_PREFIX, type RedisNonceGuardOptions } from './nonces.js';
export {
  createRedisSingleFlight,
  DEFAULT_LOCK_TTL_MS,
  DEFAULT_WAIT_MS,
  FLIGHT_KEY_PREFIX,
  type RedisSingleFlightOptions,
} from './single-flight.js';
