/**
 * The shared rate limiter: GCRA (src/platform/limits/limiter.ts) as one Lua script,
 * so that with `REDIS_URL` the limits hold across instances (docs/protocol.md §1,
 * §4: "with REDIS_URL they hold across instances").
 *
 * - Atomic: read, decide and write happen inside one script, so two
 *   instances counting the same client at once cannot both take the last
 *   token.
 * - One clock: the script reads Redis's own `TIME`, so instances whose
 *   clocks drift still agree on every bucket.
 * - Keys expire when their bucket is full again (`PX`), so Redis holds only
 *   clients active within the last window.
 * - Failure is a rejected promise (the client is built with no offline
 *   queue, so a down Redis fails at once); src/platform/limits/resilient.ts decides
 *   what that means per route.
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { checkLimitArguments, type RateDecision, type RateLimiter } from './limiter.js';

/** Key prefix of every bucket; ioredis's own `keyPrefix` (from REDIS_URL) comes before it. */
const RATE_LIMIT_KEY_PREFIX = 'oc:rl:';

// The twin of gcraStep(). Numbers leave the script as strings: Redis would
// truncate Lua floats to integers. `%.3f` keeps sub-millisecond intervals
// (a huge limit) from rounding to zero.
const GCRA_SCRIPT = `
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local interval = window / limit
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local nextTat = tat + interval
local ahead = nextTat - now
if ahead > window then
  return {0, 0, string.format('%.3f', tat - now), string.format('%.3f', ahead - window)}
end
redis.call('SET', KEYS[1], string.format('%.3f', nextTat), 'PX', math.ceil(ahead))
return {1, math.floor((window - ahead) / interval + 1e-9), string.format('%.3f', ahead), '0'}
`;
const GCRA_SHA = createHash('sha1').update(GCRA_SCRIPT).digest('hex');

/**
 * The kind of a Redis error reply: RESP defines its first word as the error
 * kind (`NOSCRIPT`, `WRONGTYPE`, …), a stable code, unlike the text after it.
 */
function redisErrorKind(error: unknown): string | undefined {
  if (!(error instanceof Error) || error.name !== 'ReplyError') return undefined;
  return /^[A-Z]+/.exec(error.message)?.[0];
}

/** EVALSHA, loading the script once with EVAL when the server does not know it yet. */
async function runScript(redis: Redis, key: string, args: readonly (string | number)[]): Promise<unknown> {
  try {
    return await redis.evalsha(GCRA_SHA, 1, key, ...args);
  } catch (error) {
    if (redisErrorKind(error) === 'NOSCRIPT') return redis.eval(GCRA_SCRIPT, 1, key, ...args);
    throw error;
  }
}

export function createRedisRateLimiter(redis: Redis): RateLimiter {
  return {
    async hit(key, limit, windowMs): Promise<RateDecision> {
      checkLimitArguments(limit, windowMs);
      const reply = await runScript(redis, RATE_LIMIT_KEY_PREFIX + key, [limit, windowMs]);
      if (!Array.isArray(reply) || reply.length !== 4) throw new Error('limits: unexpected reply from the Redis script');
      const [allowed, remaining, resetMs, retryAfterMs] = reply as [number, number, string, string];
      return {
        allowed: allowed === 1,
        remaining: Number(remaining),
        resetMs: Number(resetMs),
        retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil(Number(retryAfterMs) / 1000)),
      };
    },
  };
}
