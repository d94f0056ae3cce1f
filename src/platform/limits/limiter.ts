/**
 * Rate limiting (docs/protocol.md §4 "Rate limits"; docs/api.md Limits): the
 * limiter interface every store implements, and the arithmetic they share.
 *
 * The algorithm is GCRA, the "generic cell rate algorithm": a token bucket
 * of `limit` tokens that refills one token every `windowMs / limit` ms,
 * stored as one number per key (the theoretical arrival time, `tat`). So a
 * client gets `limit` requests at once and then `limit` per window, memory
 * is one number per active key whatever the limit (a sliding log would keep
 * up to `limit` entries), and the same arithmetic runs in-process and as one
 * atomic Redis script (src/platform/limits/redis.ts).
 */

/** The answer to one request against one limit. */
export interface RateDecision {
  readonly allowed: boolean;
  /** Requests still allowed right now after this one (0 when refused). */
  readonly remaining: number;
  /** Milliseconds until the bucket is full again (`X-RateLimit-Reset`, in seconds, rounded up). */
  readonly resetMs: number;
  /** Whole seconds before a refused request may succeed (`Retry-After`); 0 when allowed. */
  readonly retryAfterSeconds: number;
}

/**
 * Counts one request for `key` against `limit` per `windowMs`. An in-process
 * limiter answers at once; a shared one answers through a promise and
 * rejects when its store is unreachable (the caller decides whether that
 * fails open or closed: src/platform/limits/resilient.ts).
 */
export interface RateLimiter {
  hit(key: string, limit: number, windowMs: number): RateDecision | Promise<RateDecision>;
}

/** GCRA state after one hit: the stored `tat` (unchanged when refused) and the decision. */
export interface GcraStep {
  readonly tat: number;
  readonly decision: RateDecision;
}

/**
 * One GCRA step at `nowMs` for a key whose stored arrival time is `storedTat`
 * (undefined for a key never seen or already full). Pure, so the in-memory
 * limiter and the tests share it; the Redis script is its line-for-line twin.
 */
export function gcraStep(storedTat: number | undefined, nowMs: number, limit: number, windowMs: number): GcraStep {
  const interval = windowMs / limit;
  const tat = storedTat === undefined || storedTat < nowMs ? nowMs : storedTat;
  const nextTat = tat + interval;
  const ahead = nextTat - nowMs;
  if (ahead > windowMs) {
    return {
      tat,
      decision: {
        allowed: false,
        remaining: 0,
        resetMs: tat - nowMs,
        retryAfterSeconds: Math.max(1, Math.ceil((ahead - windowMs) / 1000)),
      },
    };
  }
  return {
    tat: nextTat,
    decision: {
      allowed: true,
      // The epsilon absorbs float error when the interval is not a whole number.
      remaining: Math.max(0, Math.floor((windowMs - ahead) / interval + 1e-9)),
      resetMs: ahead,
      retryAfterSeconds: 0,
    },
  };
}

export function checkLimitArguments(limit: number, windowMs: number): void {
  if (!Number.isSafeInteger(limit) || limit <= 0) throw new TypeError('limits: limit must be a positive integer');
  if (!Number.isSafeInteger(windowMs) || windowMs <= 0) throw new TypeError('limits: windowMs must be a positive integer');
}
