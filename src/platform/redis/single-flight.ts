/**
 * A single flight of cold /api/check look-ups across instances
 * (src/platform/cache.ts `SingleFlight`): 100 instances asked about one cold
 * subject at once should cost about one relay query and one chain query,
 * not 100.
 *
 * - Within an instance, callers share one promise (the in-process single
 *   flight), so an instance sends at most one lock attempt per key.
 * - Across instances, a short lock `SET oc:flight:<key> <token> NX PX`: the
 *   holder runs the task; the others wait, polling with backoff until the
 *   lock is gone, then run the task themselves. The look-up task reads the
 *   shared cache first (src/features/attestations/lookup.ts `lookUpAndStore`), so after the
 *   holder stored its result the waiters' "work" is a cache hit.
 * - Bounded: a waiter gives up after `waitMs` and does the work itself (the
 *   holder may have died: SIGKILL leaves the lock until its `PX` runs out),
 *   and the lock expires after `lockTtlMs` whatever happens.
 * - Redis unreachable: the task runs without the lock. Duplicate work is
 *   only cost; the answer is the same.
 * - Release is compare-and-delete (a Lua script), so a holder that overran
 *   its lock never deletes another holder's.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createSingleFlight, type SingleFlight } from '../cache.js';

const FLIGHT_KEY_PREFIX = 'oc:flight:';
/** Longer than a cold check normally takes (relays 4 s, Esplora 5 s per base). */
const DEFAULT_LOCK_TTL_MS = 15_000;
/** How long a waiter waits for another instance before doing the work itself. */
const DEFAULT_WAIT_MS = 10_000;
const FIRST_POLL_MS = 20;
const MAX_POLL_MS = 200;

const RELEASE_SCRIPT = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

export interface RedisSingleFlightOptions {
  readonly redis: Redis;
  readonly lockTtlMs?: number;
  readonly waitMs?: number;
  readonly prefix?: string;
  readonly onError?: (error: unknown) => void;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function createRedisSingleFlight(options: RedisSingleFlightOptions): SingleFlight {
  const { redis } = options;
  const lockTtlMs = options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS;
  const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
  const prefix = options.prefix ?? FLIGHT_KEY_PREFIX;
  const onError = options.onError ?? (() => {});
  const local = createSingleFlight();

  async function waitForRelease(lockKey: string): Promise<void> {
    const deadline = Date.now() + waitMs;
    let pause = FIRST_POLL_MS;
    while (Date.now() < deadline) {
      await sleep(Math.min(pause, Math.max(0, deadline - Date.now())));
      pause = Math.min(pause * 2, MAX_POLL_MS);
      try {
        if ((await redis.exists(lockKey)) === 0) return;
      } catch (error) {
        onError(error);
        return;
      }
    }
  }

  async function acrossInstances<T>(key: string, task: () => Promise<T>): Promise<T> {
    const lockKey = prefix + key;
    const token = randomBytes(12).toString('hex');
    let acquired: boolean;
    try {
      acquired = (await redis.set(lockKey, token, 'PX', lockTtlMs, 'NX')) === 'OK';
    } catch (error) {
      onError(error);
      return task();
    }
    if (!acquired) {
      await waitForRelease(lockKey);
      return task();
    }
    try {
      return await task();
    } finally {
      redis.eval(RELEASE_SCRIPT, 1, lockKey, token).catch(onError);
    }
  }

  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      return local.run(key, () => acrossInstances(key, task));
    },
  };
}
