/**
 * What a limit does when its shared store (Redis) is unreachable. The specs
 * are silent; the decision (also in docs/operations.md):
 *
 * - `open` routes (the read class and the auth-class routes that neither
 *   check a credential nor send mail, e.g. logout and switch) are decided by
 *   a per-instance in-memory limiter instead. So they keep working, each
 *   instance still refuses a flood on its own, and the shared limit returns
 *   when Redis does. Every such decision is reported (`onFailOpen`: a metric
 *   and a throttled warning).
 * - `closed` routes (BIP-322 sign-in, e-mail code start and verify, step-up,
 *   linking, Connect provisioning, the contact form) are refused while the
 *   shared count is unknown: their limits are what stands between a
 *   password-like secret, or a mailbox, and a brute-force or spam run across
 *   instances, and a per-instance count would multiply the allowance by the
 *   number of instances.
 */
import type { RateDecision, RateLimiter } from './limiter.js';
import { createMemoryRateLimiter } from './memory.js';

export type FailureMode = 'open' | 'closed';

/** A decision, or `unavailable` when the store failed on a `closed` limit. */
type GuardedDecision = RateDecision | 'unavailable';

export interface ResilientLimiter {
  hit(key: string, limit: number, windowMs: number, mode: FailureMode): GuardedDecision | Promise<GuardedDecision>;
}

export interface ResilientLimiterOptions {
  readonly primary: RateLimiter;
  /** Decides `open` limits while the primary fails; default a fresh in-memory limiter. */
  readonly fallback?: RateLimiter;
  /** Called on every failed primary hit with the mode that applied. */
  readonly onFailure?: (error: unknown, mode: FailureMode) => void;
}

export function createResilientLimiter(options: ResilientLimiterOptions): ResilientLimiter {
  const primary = options.primary;
  const fallback = options.fallback ?? createMemoryRateLimiter();
  const onFailure = options.onFailure ?? (() => {});

  async function settle(
    pending: Promise<RateDecision>,
    key: string,
    limit: number,
    windowMs: number,
    mode: FailureMode,
  ): Promise<GuardedDecision> {
    try {
      return await pending;
    } catch (error) {
      onFailure(error, mode);
      return mode === 'open' ? fallback.hit(key, limit, windowMs) : 'unavailable';
    }
  }

  return {
    hit(key, limit, windowMs, mode) {
      let answer: RateDecision | Promise<RateDecision>;
      try {
        answer = primary.hit(key, limit, windowMs);
      } catch (error) {
        answer = Promise.reject(error);
      }
      // An in-process primary answers synchronously: no promise, no microtask.
      return answer instanceof Promise ? settle(answer, key, limit, windowMs, mode) : answer;
    },
  };
}

/**
 * True at most once per `intervalMs`: for warnings that would otherwise be
 * written on every request during an outage.
 */
export function createThrottle(intervalMs: number, now: () => number = Date.now): () => boolean {
  let last = -Infinity;
  return () => {
    const at = now();
    if (at - last < intervalMs) return false;
    last = at;
    return true;
  };
}
