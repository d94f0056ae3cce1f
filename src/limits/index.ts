/** Rate limits (docs/protocol.md §4): the limiter interface, in-memory and Redis stores, failure policy. */
export { checkLimitArguments, gcraStep, type GcraStep, type RateDecision, type RateLimiter } from './limiter.js';
export { createMemoryRateLimiter, DEFAULT_MAX_KEYS, type MemoryRateLimiter, type MemoryRateLimiterOptions } from './memory.js';
export { createRedisRateLimiter, RATE_LIMIT_KEY_PREFIX } from './redis.js';
export {
  createResilientLimiter,
  createThrottle,
  type FailureMode,
  type GuardedDecision,
  type ResilientLimiter,
  type ResilientLimiterOptions,
} from './resilient.js';
