/**
 * How the service and the command line make the check/discover service
 * (lookup.ts): its cache (in process, or shared through Redis with a local
 * tier in front), its single flight and where a person checks an
 * attestation, so a default lives in one place.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../../platform/config.js';
import { createLruCache, createSingleFlight, type ResultCache, type SingleFlight } from '../../platform/cache.js';
import { createRedisResultCache, deletionsChannel, listenForDeletions } from '../../platform/redis/index.js';
import type { ChainSource } from '../../chain/index.js';
import type { RelayPool } from '../../relay/index.js';
import { createAttestationLookup, type AttestationLookupService, type CheckOutcome } from './lookup.js';

/** Where a person can check an attestation: this service's own check route. */
export function verificationUrlOf(config: Pick<Config, 'publicUrl'>): (attestationId: string) => string {
  return (attestationId) => `${config.publicUrl}/api/check?id=${attestationId}`;
}

/** The check/discover service over `chain` and `relays`, with an in-process cache unless one is given. */
export function buildAttestationLookup(
  config: Pick<Config, 'bitcoinNetwork' | 'minConfirmations' | 'checkCacheSeconds' | 'publicUrl'>,
  parts: {
    readonly chain: ChainSource;
    readonly relays: RelayPool;
    readonly now: () => Date;
    readonly cache?: ResultCache<CheckOutcome> | undefined;
    readonly singleFlight?: SingleFlight | undefined;
  },
): AttestationLookupService {
  const nowMs = () => parts.now().getTime();
  return createAttestationLookup({
    relays: parts.relays,
    chain: parts.chain,
    network: config.bitcoinNetwork,
    minConfirmations: config.minConfirmations,
    now: parts.now,
    cache: parts.cache ?? createLruCache<CheckOutcome>({ now: nowMs }),
    singleFlight: parts.singleFlight ?? createSingleFlight(),
    cacheTtlMs: config.checkCacheSeconds * 1000,
    verificationUrlOf: verificationUrlOf(config),
  });
}

/**
 * The /api/check cache shared through Redis: a local tier in front, and a
 * connection of its own that listens for the keys other instances delete
 * (a publication: src/platform/redis/cache.ts), closed by `onClose`.
 */
export function sharedCheckCache(
  redis: Redis,
  nowMs: () => number,
  onError: (error: unknown) => void,
  onClose: (close: () => void) => void,
): ResultCache<CheckOutcome> {
  const local = createLruCache<CheckOutcome>({ now: nowMs });
  const channel = deletionsChannel(redis);
  const subscriber = redis.duplicate();
  subscriber.on('error', () => {});
  listenForDeletions({ subscriber, channel, local, onError });
  onClose(() => subscriber.disconnect());
  // Connects in the background and subscribes once ready; until then a deletion elsewhere reaches this instance's Redis reads only.
  subscriber.connect().catch(() => {});
  return createRedisResultCache<CheckOutcome>({ redis, now: nowMs, local, channel, onError });
}
