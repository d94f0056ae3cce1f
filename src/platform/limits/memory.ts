/**
 * The in-process rate limiter: GCRA (src/platform/limits/limiter.ts) over a `Map`.
 * What one instance without `REDIS_URL` uses, and the per-instance fallback
 * when Redis is unreachable (src/platform/limits/resilient.ts).
 *
 * Memory stays bounded two ways:
 * - one map per window length, each kept in order of the last allowed hit
 *   (a hit re-inserts its key). A key's bucket is full again at most one
 *   window after that hit, so sweeping from the front until the first key
 *   still draining removes every key idle for a whole window; it runs a few
 *   keys per hit, amortised O(1), with no timer to clear;
 * - a hard cap on keys (default 100,000): past it the longest-idle key is
 *   dropped. Under a flood of distinct addresses that forgives the quietest
 *   client rather than growing without bound.
 */
import { checkLimitArguments, gcraStep, type RateDecision, type RateLimiter } from './limiter.js';

export interface MemoryRateLimiterOptions {
  /** Clock in ms since the epoch; injectable so tests can move time. */
  readonly now?: () => number;
  /** Most keys held per window length. Default {@link DEFAULT_MAX_KEYS}. */
  readonly maxKeys?: number;
}

const DEFAULT_MAX_KEYS = 100_000;
/** Expired keys removed per hit at most, so one request never pays for a long sweep. */
const SWEEP_PER_HIT = 8;

export interface MemoryRateLimiter extends RateLimiter {
  hit(key: string, limit: number, windowMs: number): RateDecision;
  /** Keys currently held, over every window; for tests and metrics. */
  readonly size: number;
}

export function createMemoryRateLimiter(options: MemoryRateLimiterOptions = {}): MemoryRateLimiter {
  const now = options.now ?? Date.now;
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  if (!Number.isSafeInteger(maxKeys) || maxKeys <= 0) throw new TypeError('limits: maxKeys must be a positive integer');
  // windowMs → (key → tat). Separate maps keep "oldest first" true per window.
  const byWindow = new Map<number, Map<string, number>>();

  function sweep(buckets: Map<string, number>, nowMs: number): void {
    let budget = SWEEP_PER_HIT;
    for (const [key, tat] of buckets) {
      if (budget-- === 0 || tat > nowMs) break;
      buckets.delete(key);
    }
  }

  return {
    hit(key, limit, windowMs) {
      checkLimitArguments(limit, windowMs);
      const nowMs = now();
      let buckets = byWindow.get(windowMs);
      if (buckets === undefined) {
        buckets = new Map();
        byWindow.set(windowMs, buckets);
      }
      sweep(buckets, nowMs);
      const step = gcraStep(buckets.get(key), nowMs, limit, windowMs);
      if (step.decision.allowed) {
        buckets.delete(key);
        buckets.set(key, step.tat);
        if (buckets.size > maxKeys) {
          const oldest = buckets.keys().next();
          if (oldest.done !== true) buckets.delete(oldest.value);
        }
      }
      return step.decision;
    },
    get size() {
      let total = 0;
      for (const buckets of byWindow.values()) total += buckets.size;
      return total;
    },
  };
}
