/**
 * Shared state through Redis when `REDIS_URL` is set (docs/protocol.md §1): the
 * client, the /api/check cache, used nonces and the cross-instance single
 * flight. The shared rate limiter lives with the other limiters
 * (src/platform/limits/redis.ts). PostgreSQL (or SQLite) stays the system of record:
 * nothing here must survive a Redis restart.
 */
export { connectRedis, createRedisClient, pingRedis } from './client.js';
export {
  CHAIN_CACHE_KEY_PREFIX,
  createRedisResultCache,
  deletionsChannel,
  listenForDeletions,
} from './cache.js';
export { createRedisNonceGuard } from './nonces.js';
export { createRedisSingleFlight } from './single-flight.js';
