/** Rate limits (docs/protocol.md §4): the limiter interface, in-memory and Redis stores, failure policy. */
export { gcraStep, type RateDecision } from './limiter.js';
export { createMemoryRateLimiter } from './memory.js';
export { createRedisRateLimiter } from './redis.js';
export {
  createResilientLimiter,
  createThrottle,
  type FailureMode,
  type ResilientLimiter,
} from './resilient.js';
