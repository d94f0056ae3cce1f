/**
 * The /api/check result cache shared through Redis (docs/protocol.md §1
 * `REDIS_URL`, §7 "caches the verified result per subject for 60 s"), so a
 * subject checked on one instance is a hit on every other.
 *
 * Two tiers: an in-process LRU in front of Redis. Entries never change
 * within their lifetime (a newer attestation shows when the entry expires),
 * so an entry copied into the local tier with the same expiry instant is as
 * fresh as Redis's; a hot subject then costs one map look-up and no round
 * trip (docs/performance.md: check hit ≥ 0.6 of a bare route).
 *
 * A cache must never fail a check: when Redis errors, a read is a miss and a
 * write is skipped (`onError` reports it).
 *
 * Deletions (an attestation published through this host: src/features/attestations/publish.ts)
 * reach every instance: the entries are deleted in Redis, and the deleted keys
 * are announced on a channel that every instance listens to
 * ({@link listenForDeletions}), each dropping them from its local tier. An
 * instance whose listening connection is down at that moment misses the
 * announcement and serves its local copy until it expires
 * (docs/operations.md "What Redis holds").
 */
import type { Redis } from 'ioredis';
import type { CacheEntry, MemoryCache, ResultCache } from '../cache.js';
import { isJsonObject } from '../json.js';

const CHECK_CACHE_KEY_PREFIX = 'oc:check:';
/** Where deleted check results are announced; under the client's `keyPrefix`, which Redis does not apply to channels. */
const CHECK_DELETIONS_CHANNEL = 'oc:check:deleted';
/** The chain answers per address (src/chain/block-cache.ts), each with the tip it was read under. */
export const CHAIN_CACHE_KEY_PREFIX = 'oc:chain:';

export interface RedisResultCacheOptions<T> {
  readonly redis: Redis;
  /** Clock in ms since the epoch. */
  readonly now: () => number;
  /** The in-process tier; omit to ask Redis on every read. */
  readonly local?: MemoryCache<T>;
  readonly prefix?: string;
  /** The channel deleted keys are announced on (see {@link deletionsChannel}); omit to announce nothing. */
  readonly channel?: string;
  readonly onError?: (error: unknown) => void;
}

/** The deletions channel of a client: `name` under the client's `keyPrefix`, so deployments sharing one Redis stay apart. */
export function deletionsChannel(redis: Redis, name: string = CHECK_DELETIONS_CHANNEL): string {
  return `${redis.options.keyPrefix ?? ''}${name}`;
}

/** The stored form: the value and its expiry instant, as JSON (values are plain data: src/platform/cache.ts). */
interface Stored<T> {
  readonly e: number;
  readonly v: T;
}

function parse<T>(text: string): Stored<T> | undefined {
  try {
    const stored = JSON.parse(text) as Stored<T>;
    return typeof stored === 'object' && stored !== null && typeof stored.e === 'number' ? stored : undefined;
  } catch {
    return undefined;
  }
}

export function createRedisResultCache<T>(options: RedisResultCacheOptions<T>): ResultCache<T> {
  const { redis, now, local } = options;
  const prefix = options.prefix ?? CHECK_CACHE_KEY_PREFIX;
  const onError = options.onError ?? (() => {});

  async function fromRedis(key: string): Promise<CacheEntry<T> | undefined> {
    let text: string | null;
    try {
      text = await redis.get(prefix + key);
    } catch (error) {
      onError(error);
      return undefined;
    }
    if (text === null) return undefined;
    const stored = parse<T>(text);
    if (stored === undefined) return undefined;
    const remaining = stored.e - now();
    if (remaining <= 0) return undefined;
    local?.set(key, stored.v, remaining);
    return { value: stored.v, expiresAtMs: stored.e };
  }

  return {
    get(key) {
      const hit = local?.get(key);
      return hit !== undefined ? hit : fromRedis(key);
    },
    async set(key, value, ttlMs) {
      if (!(ttlMs > 0)) return;
      local?.set(key, value, ttlMs);
      const stored: Stored<T> = { e: now() + ttlMs, v: value };
      try {
        await redis.set(prefix + key, JSON.stringify(stored), 'PX', Math.ceil(ttlMs));
      } catch (error) {
        onError(error);
      }
    },
    async delete(keys) {
      if (keys.length === 0) return;
      local?.delete(keys);
      try {
        await redis.del(...keys.map((key) => prefix + key));
        if (options.channel !== undefined) await redis.publish(options.channel, JSON.stringify({ keys }));
      } catch (error) {
        onError(error);
      }
    },
  };
}

export interface DeletionListenerOptions {
  /** A connection of its own: a subscribed connection can send no other command. Closed by the caller. */
  readonly subscriber: Redis;
  readonly channel: string;
  /** The local tier to drop announced keys from. */
  readonly local: Pick<MemoryCache<unknown>, 'delete'>;
  readonly onError?: (error: unknown) => void;
}

/**
 * Drops the keys announced on `channel` from `local`. Subscribes on every
 * (re)connection, so a Redis that was down at start or restarted is listened
 * to again once it is back; malformed announcements are ignored.
 */
export function listenForDeletions(options: DeletionListenerOptions): void {
  const { subscriber, channel, local } = options;
  const onError = options.onError ?? (() => {});
  subscriber.on('ready', () => {
    subscriber.subscribe(channel).catch(onError);
  });
  subscriber.on('message', (from: string, text: string) => {
    if (from !== channel) return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (!isJsonObject(message) || !Array.isArray(message.keys)) return;
    const keys = message.keys.filter((key): key is string => typeof key === 'string');
    local.delete(keys);
  });
}
