/**
 * Result caches and single flights: the /api/check result cache
 * (docs/protocol.md §7 "Relay envelopes": the verified result is cached per
 * subject for 60 s, thresholds applied after the cache; docs/api.md Limits)
 * and the chain answers cached by block (src/chain/block-cache.ts,
 * docs/performance.md "The chain").
 *
 * Both sit behind small interfaces because they are shared through Redis when
 * `REDIS_URL` is set (docs/protocol.md §1), so that several instances behave
 * as one. The in-memory versions here are what a single instance uses. They
 * sit on the lowest layer so that the chain client and the verifier share
 * one implementation.
 *
 * Values must be plain JSON data: a shared implementation stores them
 * serialised.
 */

/** A cached value and the instant (ms since the epoch) it stops being served. */
export interface CacheEntry<T> {
  readonly value: T;
  readonly expiresAtMs: number;
}

/**
 * A bounded cache with a time-to-live per entry. Methods may answer at once
 * or through a promise: the in-memory cache answers synchronously, so that a
 * cache hit costs one map look-up and no I/O (docs/performance.md "HTTP").
 */
export interface ResultCache<T> {
  get(key: string): CacheEntry<T> | undefined | Promise<CacheEntry<T> | undefined>;
  set(key: string, value: T, ttlMs: number): void | Promise<void>;
  /** Drops the entries of `keys`; a shared cache drops them on every instance. */
  delete(keys: readonly string[]): void | Promise<void>;
}

/**
 * Runs at most one task per key at a time: callers that arrive while a task
 * for their key is running share its result instead of starting their own.
 * This is what makes 100 concurrent checks of one cold subject cost one relay
 * query and one chain query.
 */
export interface SingleFlight {
  run<T>(key: string, task: () => Promise<T>): Promise<T>;
}

export interface LruCacheOptions<T> {
  /** Most entries held; the least recently used one goes first. Default 10,000. */
  readonly maxEntries?: number;
  /**
   * Most bytes held, as `sizeOf` estimates them; the least recently used
   * entries go first, and a value larger than the whole bound is not kept.
   * Default: no bound but `maxEntries`.
   */
  readonly maxBytes?: number;
  /** The estimated size of a value in bytes; required with `maxBytes`. */
  readonly sizeOf?: (value: T) => number;
  /** Clock in ms since the epoch; the service passes its injectable clock. */
  readonly now: () => number;
}

const DEFAULT_MAX_CACHE_ENTRIES = 10_000;

/** The in-memory cache: synchronous, with its size for tests and metrics. */
export interface MemoryCache<T> extends ResultCache<T> {
  get(key: string): CacheEntry<T> | undefined;
  set(key: string, value: T, ttlMs: number): void;
  delete(keys: readonly string[]): void;
  readonly size: number;
  /** The estimated bytes held (0 without `sizeOf`). */
  readonly bytes: number;
  clear(): void;
}

/**
 * An in-memory LRU cache with a TTL per entry. A `Map` keeps insertion
 * order, so re-inserting on every hit makes its first key the least recently
 * used one: eviction is O(1) without a linked list of our own.
 *
 * Expired entries are dropped when they are read or when they reach the
 * front; the size bounds hold either way, so memory stays bounded
 * (10,000 check results are a few MB). With `sizeOf`, each entry's size is
 * kept beside it, as counted when it was stored, so that removing it gives
 * back exactly that.
 */
export function createLruCache<T>(options: LruCacheOptions<T>): MemoryCache<T> {
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_CACHE_ENTRIES;
  if (!Number.isSafeInteger(maxEntries) || maxEntries <= 0) throw new TypeError('cache: maxEntries must be a positive integer');
  const maxBytes = options.maxBytes ?? Number.POSITIVE_INFINITY;
  if (!(maxBytes > 0)) throw new TypeError('cache: maxBytes must be a positive number');
  const sizeOf = options.sizeOf;
  if (options.maxBytes !== undefined && sizeOf === undefined) throw new TypeError('cache: maxBytes needs sizeOf');
  const now = options.now;
  const entries = new Map<string, CacheEntry<T>>();
  const sizes = new Map<string, number>();
  // The last key in `entries` (the most recently used), or undefined when unknown.
  let newest: string | undefined;
  let bytes = 0;

  function remove(key: string): void {
    const entry = entries.get(key);
    if (entry === undefined) return;
    entries.delete(key);
    if (sizeOf !== undefined) {
      bytes -= sizes.get(key) ?? 0;
      sizes.delete(key);
    }
    if (key === newest) newest = undefined;
  }

  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      if (now() >= entry.expiresAtMs) {
        remove(key);
        return undefined;
      }
      // Move to the back: most recently used. A hot key that is already
      // there (the common case under load) skips the delete and re-insert.
      if (key !== newest) {
        entries.delete(key);
        entries.set(key, entry);
        newest = key;
      }
      return entry;
    },
    set(key, value, ttlMs) {
      remove(key);
      if (!(ttlMs > 0)) return;
      if (sizeOf !== undefined) {
        const size = sizeOf(value);
        if (size > maxBytes) return;
        sizes.set(key, size);
        bytes += size;
      }
      entries.set(key, { value, expiresAtMs: now() + ttlMs });
      newest = key;
      while (entries.size > maxEntries || bytes > maxBytes) {
        const oldest = entries.keys().next();
        if (oldest.done === true) break;
        remove(oldest.value);
      }
    },
    delete(keys) {
      for (const key of keys) remove(key);
    },
    get size() {
      return entries.size;
    },
    get bytes() {
      return bytes;
    },
    clear() {
      entries.clear();
      sizes.clear();
      newest = undefined;
      bytes = 0;
    },
  };
}

/**
 * In-process single flight. The entry is removed when the task settles,
 * before its callers resume, so a failure is shared by the callers that were
 * waiting and never remembered: the next caller starts afresh.
 */
export function createSingleFlight(): SingleFlight & { readonly inFlight: number } {
  const running = new Map<string, Promise<unknown>>();
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const existing = running.get(key);
      if (existing !== undefined) return existing as Promise<T>;
      let promise: Promise<T>;
      try {
        promise = task();
      } catch (error) {
        return Promise.reject(error);
      }
      const shared = promise.finally(() => {
        running.delete(key);
      });
      running.set(key, shared);
      return shared;
    },
    get inFlight() {
      return running.size;
    },
  };
}
