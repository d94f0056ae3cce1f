/**
 * Chain answers cached by block (src/chain/block-cache.ts, docs/performance.md
 * "The chain") over the loopback Esplora fake: the tip read once per
 * lifetime and shared, UTXO answers kept until the tip moves, one query per
 * address however many ask (across instances with Redis), the bounds, and a
 * failure kept no longer than the short error lifetime. The clock is moved
 * by hand; nothing here measures time.
 */
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ChainUnavailableError,
  createBlockCache,
  createEsploraClient,
  estimatedBytes,
  FAILURE_TTL_MS,
  UTXO_MAX_AGE_MS,
  type BlockCacheOptions,
} from '../src/chain/index.js';
import {
  CHAIN_CACHE_KEY_PREFIX,
  connectRedis,
  createRedisClient,
  createRedisResultCache,
  createRedisSingleFlight,
} from '../src/platform/redis/index.js';
import { fakeBlockHash, loadEsploraFixture, startEsploraFake, type EsploraFake } from './support/esplora-fake.js';
import { redisSkipReason, testRedis, type TestRedis } from './support/redis.js';

const fixture = loadEsploraFixture();
const ADDRESS = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const mixed = fixture.utxoSets.mixed!;
const TIP_TTL_MS = 5_000;

let esplora: EsploraFake;
let clock = 1_000_000;

beforeAll(async () => {
  esplora = await startEsploraFake({ tipHeight: fixture.tipHeight, utxosByAddress: { [ADDRESS]: mixed } });
});
afterEach(() => {
  clock = 1_000_000;
  esplora.setMode('ok');
  esplora.setDelay(0);
  esplora.setTip(fixture.tipHeight);
  esplora.setTipHash(undefined);
  esplora.setUtxos(ADDRESS, mixed);
  esplora.resetRequests();
});
afterAll(async () => {
  await esplora.close();
});

function blockCache(options: Partial<BlockCacheOptions> = {}) {
  return createBlockCache({
    reader: createEsploraClient({ bases: [esplora.url], timeoutMs: 2_000 }),
    now: () => clock,
    tipTtlMs: TIP_TTL_MS,
    ...options,
  });
}

/** Lets a background tip read finish. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 20; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe('the tip', () => {
  it('is read once per lifetime and shared by every request, for all addresses', async () => {
    const cache = blockCache();
    const addresses = Array.from({ length: 100 }, (_, index) => `addr-${index}`);
    await Promise.all(addresses.map((address) => cache.addressUtxos(address)));
    expect(esplora.requests).toMatchObject({ utxo: 100, tipHeight: 1, tipHash: 1 });
    clock += TIP_TTL_MS - 1_500;
    await cache.addressUtxos('addr-0');
    expect(esplora.requests).toMatchObject({ utxo: 100, tipHeight: 1, tipHash: 1 });
  });

  it('is read again ahead of its expiry while requests come, without making them wait', async () => {
    const cache = blockCache();
    await cache.addressUtxos(ADDRESS);
    esplora.setTip(fixture.tipHeight + 1);
    clock += TIP_TTL_MS * 0.9;
    // Still the held tip and the held answer: the new read runs in the background.
    expect((await cache.addressUtxos(ADDRESS)).tipHeight).toBe(fixture.tipHeight);
    await settle();
    expect(esplora.requests.tipHeight).toBe(2);
    // The next request sees the new block and reads the UTXOs again.
    const after = await cache.addressUtxos(ADDRESS);
    expect(after.tipHeight).toBe(fixture.tipHeight + 1);
    expect(esplora.requests.utxo).toBe(2);
  });
});

describe('UTXO answers kept until the tip changes', () => {
  it('serves an address from memory while the tip stays, and reads it again when a block comes', async () => {
    const cache = blockCache();
    const first = await cache.addressUtxos(ADDRESS);
    expect(first.utxos).toHaveLength(5);
    expect(first.tipHeight).toBe(fixture.tipHeight);
    expect(first.source).toBe(esplora.url);

    // The coins move without a block (the mempool): the answer stands until the tip moves.
    esplora.setUtxos(ADDRESS, mixed.slice(0, 1));
    clock += 60_000;
    expect((await cache.addressUtxos(ADDRESS)).utxos).toHaveLength(5);
    expect(esplora.requests).toMatchObject({ utxo: 1, tipHeight: 2, tipHash: 2 });

    esplora.setTip(fixture.tipHeight + 1);
    clock += TIP_TTL_MS;
    const moved = await cache.addressUtxos(ADDRESS);
    expect(moved.utxos).toHaveLength(1);
    // Confirmations come from the tip at the time of the request.
    expect(moved.tipHeight).toBe(fixture.tipHeight + 1);
    expect(esplora.requests.utxo).toBe(2);
  });

  it('reads the address again after a reorganisation at the same height (a new tip hash)', async () => {
    const cache = blockCache();
    await cache.addressUtxos(ADDRESS);
    esplora.setTipHash('ee'.repeat(32));
    esplora.setUtxos(ADDRESS, []);
    clock += TIP_TTL_MS;
    const answer = await cache.addressUtxos(ADDRESS);
    expect(answer.utxos).toEqual([]);
    expect(answer.tipHeight).toBe(fixture.tipHeight);
    expect(esplora.requests.utxo).toBe(2);
  });

  it('reads an answer again after its longest lifetime even when no block comes', async () => {
    const cache = blockCache();
    await cache.addressUtxos(ADDRESS);
    clock += UTXO_MAX_AGE_MS;
    await cache.addressUtxos(ADDRESS);
    expect(esplora.requests.utxo).toBe(2);
  });
});

describe('one chain query per address however many ask', () => {
  it('100 concurrent requests for one address share one UTXO query and one tip read', async () => {
    esplora.setDelay(50);
    const cache = blockCache();
    const answers = await Promise.all(Array.from({ length: 100 }, () => cache.addressUtxos(ADDRESS)));
    expect(new Set(answers.map((answer) => answer.utxos.length))).toEqual(new Set([5]));
    expect(esplora.requests).toMatchObject({ utxo: 1, tipHeight: 1, tipHash: 1 });
  });

  it('100 concurrent requests for 100 addresses make 100 UTXO queries and one tip read', async () => {
    esplora.setDelay(20);
    const cache = blockCache();
    await Promise.all(Array.from({ length: 100 }, (_, index) => cache.addressUtxos(`addr-${index % 100}`)));
    await Promise.all(Array.from({ length: 100 }, (_, index) => cache.addressUtxos(`addr-${index % 100}`)));
    expect(esplora.requests).toMatchObject({ utxo: 100, tipHeight: 1, tipHash: 1 });
    expect(new Set(esplora.queriedAddresses).size).toBe(100);
  });
});

describe('bounds', () => {
  it('holds at most CHAIN_CACHE_ENTRIES addresses; an evicted one is asked again', async () => {
    const cache = blockCache({ maxEntries: 3 });
    for (let index = 0; index < 5; index++) await cache.addressUtxos(`addr-${index}`);
    expect(cache.size).toBe(3);
    await cache.addressUtxos('addr-0');
    expect(esplora.requests.utxo).toBe(6);
    await cache.addressUtxos('addr-0');
    expect(esplora.requests.utxo).toBe(6);
  });

  it('holds at most CHAIN_CACHE_MB of estimated bytes, and never an answer larger than the bound', async () => {
    const oneUtxo = estimatedBytes({ ok: true, tip: { height: 1, hash: fakeBlockHash(1) }, utxos: mixed.slice(0, 1) as never, source: '' });
    const cache = blockCache({ maxBytes: oneUtxo * 2 });
    esplora.setUtxos('small-a', mixed.slice(0, 1));
    esplora.setUtxos('small-b', mixed.slice(0, 1));
    esplora.setUtxos('small-c', mixed.slice(0, 1));
    for (const address of ['small-a', 'small-b', 'small-c']) await cache.addressUtxos(address);
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBeLessThanOrEqual(oneUtxo * 2);
    // Five UTXOs are more than the whole bound: answered, not kept.
    expect((await cache.addressUtxos(ADDRESS)).utxos).toHaveLength(5);
    expect((await cache.addressUtxos(ADDRESS)).utxos).toHaveLength(5);
    expect(esplora.queriedAddresses.filter((address) => address === ADDRESS)).toHaveLength(2);
    expect(cache.size).toBe(2);
  });
});

describe('failures', () => {
  it('a failed UTXO query is kept for the short error lifetime only, then asked again', async () => {
    const cache = blockCache();
    await cache.addressUtxos('warm-the-tip');
    esplora.setMode('http500');
    await expect(cache.addressUtxos(ADDRESS)).rejects.toBeInstanceOf(ChainUnavailableError);
    expect(esplora.requests.utxo).toBe(2);
    esplora.setMode('ok');
    // Within the error lifetime the failure is answered without a query.
    clock += FAILURE_TTL_MS - 1;
    const remembered = await cache.addressUtxos(ADDRESS).catch((error: unknown) => error);
    expect(remembered).toBeInstanceOf(ChainUnavailableError);
    expect((remembered as ChainUnavailableError).failures[0]!.reason).toBe('utxo answered HTTP 500');
    expect(esplora.requests.utxo).toBe(2);
    // Past it, the chain is asked again and the recovery shows.
    clock += 1;
    expect((await cache.addressUtxos(ADDRESS)).utxos).toHaveLength(5);
    expect(esplora.requests.utxo).toBe(3);
  });

  it('a failed tip read fails the requests for the error lifetime, then the tip is read again', async () => {
    esplora.setMode('broken');
    const cache = blockCache();
    await expect(cache.addressUtxos(ADDRESS)).rejects.toBeInstanceOf(ChainUnavailableError);
    const asked = esplora.requests.tipHeight + esplora.requests.tipHash;
    esplora.setMode('ok');
    await expect(cache.addressUtxos(ADDRESS)).rejects.toBeInstanceOf(ChainUnavailableError);
    expect(esplora.requests.tipHeight + esplora.requests.tipHash).toBe(asked);
    expect(esplora.requests.utxo).toBe(0);
    clock += Math.min(FAILURE_TTL_MS, TIP_TTL_MS);
    expect((await cache.addressUtxos(ADDRESS)).utxos).toHaveLength(5);
  });

  it('never keeps a failure longer than the tip lifetime when that is shorter', async () => {
    const cache = blockCache({ tipTtlMs: 1_000 });
    await cache.addressUtxos('warm-the-tip');
    esplora.setMode('http500');
    await expect(cache.addressUtxos(ADDRESS)).rejects.toBeInstanceOf(ChainUnavailableError);
    esplora.setMode('ok');
    clock += 1_000;
    expect((await cache.addressUtxos(ADDRESS)).utxos).toHaveLength(5);
  });

  it('refuses a nonsensical tip lifetime at construction', () => {
    expect(() => blockCache({ tipTtlMs: 0 })).toThrow(/^chain: tipTtlMs/);
  });
});

const redisSkip = await redisSkipReason();

describe.skipIf(redisSkip !== undefined)('across instances through Redis', () => {
  let redis: TestRedis;
  const clients: Redis[] = [];

  beforeAll(() => {
    redis = testRedis();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await redis.cleanup();
  });

  async function instance() {
    const client = createRedisClient(redis.url);
    client.on('error', () => {});
    clients.push(client);
    expect(await connectRedis(client)).toBe(true);
    return blockCache({
      shared: createRedisResultCache({ redis: client, now: () => clock, prefix: CHAIN_CACHE_KEY_PREFIX }),
      singleFlight: createRedisSingleFlight({ redis: client }),
    });
  }

  it('concurrent requests for one address on two instances make one UTXO query; the answer is shared', async () => {
    esplora.setDelay(100);
    const [a, b] = [await instance(), await instance()];
    const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? a : b).addressUtxos(ADDRESS)));
    expect(answers.every((answer) => answer.utxos.length === 5)).toBe(true);
    expect(esplora.requests.utxo).toBe(1);
    // One tip read per instance.
    expect(esplora.requests.tipHeight).toBe(2);
    const stored = JSON.parse((await redis.client().get(`${CHAIN_CACHE_KEY_PREFIX}${ADDRESS}`))!) as { v: { tip: { height: number } } };
    expect(stored.v.tip.height).toBe(fixture.tipHeight);

    // A third instance finds the answer in Redis without asking the chain.
    const c = await instance();
    expect((await c.addressUtxos(ADDRESS)).utxos).toHaveLength(5);
    expect(esplora.requests.utxo).toBe(1);

    // After a block, the shared answer is stale for everyone: one new query in all.
    esplora.setTip(fixture.tipHeight + 1);
    clock += TIP_TTL_MS;
    await Promise.all([a.addressUtxos(ADDRESS), b.addressUtxos(ADDRESS)]);
    expect(esplora.requests.utxo).toBe(2);
  });
});
