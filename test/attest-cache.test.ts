/**
 * The /api/check result cache (LRU with a TTL per entry) and the single
 * flight in front of it (src/platform/cache.ts; docs/protocol.md §7: the verified
 * result is cached per subject).
 */
import { describe, expect, it } from 'vitest';
import { createLruCache, createSingleFlight } from '../src/features/attestations/index.js';

function clock(start = 1_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('createLruCache', () => {
  it('serves an entry until its TTL runs out, and says when that is', () => {
    const time = clock();
    const cache = createLruCache<string>({ now: time.now });
    cache.set('a', 'value', 60_000);
    expect(cache.get('a')).toEqual({ value: 'value', expiresAtMs: 1_060_000 });
    time.advance(59_999);
    expect(cache.get('a')?.value).toBe('value');
    time.advance(1);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('answers synchronously (a hit is one map look-up, no promise)', () => {
    const cache = createLruCache<number>({ now: () => 0 });
    cache.set('k', 1, 1000);
    const got = cache.get('k');
    expect(got instanceof Promise).toBe(false);
  });

  it('evicts the least recently used entry when full; a read counts as a use', () => {
    const cache = createLruCache<number>({ now: () => 0, maxEntries: 3 });
    cache.set('a', 1, 1000);
    cache.set('b', 2, 1000);
    cache.set('c', 3, 1000);
    expect(cache.get('a')?.value).toBe(1); // a is now the most recently used
    cache.set('d', 4, 1000);
    expect(cache.size).toBe(3);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.value).toBe(1);
    expect(cache.get('c')?.value).toBe(3);
    expect(cache.get('d')?.value).toBe(4);
  });

  it('stays bounded under many distinct keys', () => {
    const cache = createLruCache<number>({ now: () => 0, maxEntries: 100 });
    for (let index = 0; index < 10_000; index++) cache.set(`k${index}`, index, 1000);
    expect(cache.size).toBe(100);
    expect(cache.get('k9999')?.value).toBe(9999);
    expect(cache.get('k9899')).toBeUndefined();
  });

  it('replaces an entry and its lifetime on set; a TTL of 0 removes it', () => {
    const time = clock();
    const cache = createLruCache<string>({ now: time.now });
    cache.set('a', 'old', 5_000);
    time.advance(4_000);
    cache.set('a', 'new', 5_000);
    time.advance(4_000);
    expect(cache.get('a')?.value).toBe('new');
    cache.set('a', 'gone', 0);
    expect(cache.get('a')).toBeUndefined();
  });

  it('agrees with a reference LRU under random reads, writes, removals and expiries', () => {
    let now = 0;
    const cache = createLruCache<number>({ now: () => now, maxEntries: 4 });
    // Reference: keys from least to most recently used, with their expiry.
    let model: Array<{ key: string; value: number; expiresAtMs: number }> = [];
    let seed = 12345;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (let step = 0; step < 5_000; step++) {
      const key = `k${random(7)}`;
      const operation = random(10);
      if (operation < 5) {
        const found = model.find((entry) => entry.key === key);
        const live = found !== undefined && now < found.expiresAtMs;
        model = model.filter((entry) => entry.key !== key);
        if (live) model.push(found);
        expect(cache.get(key)?.value).toBe(live ? found.value : undefined);
      } else if (operation < 9) {
        const ttl = operation === 8 ? 0 : 1 + random(50);
        model = model.filter((entry) => entry.key !== key);
        if (ttl > 0) model.push({ key, value: step, expiresAtMs: now + ttl });
        while (model.length > 4) model.shift();
        cache.set(key, step, ttl);
      } else {
        now += random(20);
      }
      expect(cache.size).toBe(model.length);
    }
  });

  it('holds at most maxBytes as sizeOf counts them, the least recently used going first', () => {
    const cache = createLruCache<string>({ now: () => 0, maxBytes: 100, sizeOf: (value) => value.length });
    cache.set('a', 'x'.repeat(40), 1000);
    cache.set('b', 'y'.repeat(40), 1000);
    cache.get('a');
    cache.set('c', 'z'.repeat(40), 1000);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.value).toHaveLength(40);
    expect(cache.get('c')?.value).toHaveLength(40);
    expect(cache.bytes).toBe(80);
    // Replacing an entry counts its new size only.
    cache.set('a', 'x'.repeat(10), 1000);
    expect(cache.bytes).toBe(50);
    // A value larger than the whole bound is not kept, and does not evict the others.
    cache.set('huge', 'h'.repeat(101), 1000);
    expect(cache.get('huge')).toBeUndefined();
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBe(50);
  });

  it('gives back the bytes of expired, deleted and cleared entries', () => {
    let now = 0;
    const cache = createLruCache<string>({ now: () => now, maxBytes: 1000, sizeOf: (value) => value.length });
    cache.set('a', 'aaaa', 10);
    cache.set('b', 'bb', 1000);
    cache.set('c', 'c', 1000);
    now = 10;
    expect(cache.get('a')).toBeUndefined();
    expect(cache.bytes).toBe(3);
    cache.delete(['b', 'unknown']);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.bytes).toBe(1);
    cache.clear();
    expect([cache.size, cache.bytes]).toEqual([0, 0]);
  });

  it('refuses a nonsensical bound at construction', () => {
    expect(() => createLruCache({ now: () => 0, maxEntries: 0 })).toThrow(/cache: maxEntries/);
    expect(() => createLruCache<string>({ now: () => 0, maxBytes: 0, sizeOf: () => 1 })).toThrow(/cache: maxBytes/);
    expect(() => createLruCache<string>({ now: () => 0, maxBytes: 10 })).toThrow(/cache: maxBytes needs sizeOf/);
  });
});

describe('createSingleFlight', () => {
  it('runs one task per key for concurrent callers and shares its result', async () => {
    const flight = createSingleFlight();
    let runs = 0;
    let release!: (value: string) => void;
    const task = () => {
      runs += 1;
      return new Promise<string>((resolve) => {
        release = resolve;
      });
    };
    const callers = Array.from({ length: 100 }, () => flight.run('subject', task));
    expect(flight.inFlight).toBe(1);
    release('answer');
    expect(await Promise.all(callers)).toEqual(Array(100).fill('answer'));
    expect(runs).toBe(1);
    expect(flight.inFlight).toBe(0);
  });

  it('keeps different keys apart', async () => {
    const flight = createSingleFlight();
    const [a, b] = await Promise.all([flight.run('a', async () => 'A'), flight.run('b', async () => 'B')]);
    expect([a, b]).toEqual(['A', 'B']);
  });

  it('shares a failure with the waiting callers but does not remember it', async () => {
    const flight = createSingleFlight();
    let runs = 0;
    const failing = async () => {
      runs += 1;
      throw new Error('boom');
    };
    const results = await Promise.allSettled([flight.run('k', failing), flight.run('k', failing)]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
    expect(runs).toBe(1);
    expect(await flight.run('k', async () => 'recovered')).toBe('recovered');
    // A task that throws before returning a promise is a rejection too.
    await expect(
      flight.run('sync', () => {
        throw new Error('sync boom');
      }),
    ).rejects.toThrow('sync boom');
    expect(flight.inFlight).toBe(0);
  });

  it('starts afresh once a task has settled', async () => {
    const flight = createSingleFlight();
    let runs = 0;
    const task = async () => ++runs;
    expect(await flight.run('k', task)).toBe(1);
    expect(await flight.run('k', task)).toBe(2);
  });
});
