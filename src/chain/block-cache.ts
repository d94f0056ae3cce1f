/**
 * Chain answers cached by block (docs/performance.md "The chain"): what
 * /api/verify and /api/check ask the chain, answered from memory while the
 * chain has not moved.
 *
 * - The tip (height and hash) is read at most once per `tipTtlMs` and shared
 *   by every request of the instance. While requests come it is read again
 *   ahead of its expiry, in the background, so that no request waits for it.
 * - An address's UTXO answer is kept with the tip it was read under and
 *   served while that is still the tip: a new block (or another block at the
 *   same height) makes the next request read it again. The confirmations
 *   then come from the current tip and the days from the clock at each
 *   request, so both stay exact (docs/protocol.md §7 "Chain metrics"). An
 *   answer is never kept longer than {@link UTXO_MAX_AGE_MS}, so a spend seen
 *   by the mempool shows within that time even when no block comes.
 * - One chain query per address however many ask: concurrent requests for
 *   one address share one query (the single flight). With a shared tier and
 *   a cross-instance single flight (Redis), instances share the answers too;
 *   the tip stays per instance.
 * - Bounded by entries and by estimated bytes (`CHAIN_CACHE_ENTRIES`,
 *   `CHAIN_CACHE_MB`); the least recently used address goes first.
 * - A failure (every base failed) is remembered for at most the short error
 *   lifetime ({@link FAILURE_TTL_MS}, never longer than the tip's), in this
 *   instance only, so an outage costs a few queries, not one per request,
 *   and a recovery shows within seconds.
 */
import { createLruCache, createSingleFlight, type ResultCache, type SingleFlight } from '../platform/cache.js';
import {
  atLeastTheirBlocks,
  ChainUnavailableError,
  type AddressUtxos,
  type BaseFailure,
  type ChainReader,
  type ChainSource,
  type ChainTip,
  type Utxo,
} from './esplora.js';

/** What is kept per address (plain JSON data, so that Redis can hold it). */
export type ChainAnswer =
  | { readonly ok: true; readonly tip: ChainTip; readonly utxos: readonly Utxo[]; readonly source: string }
  | { readonly ok: false; readonly failures: readonly BaseFailure[] };

export interface BlockCacheOptions {
  readonly reader: Pick<ChainReader, 'tip' | 'utxos'>;
  /** Clock in ms since the epoch; the service passes its injectable clock. */
  readonly now: () => number;
  /** `CHAIN_TIP_SECONDS` × 1000: how long a tip read is used. Default {@link DEFAULT_TIP_TTL_MS}. */
  readonly tipTtlMs?: number;
  /** `CHAIN_CACHE_ENTRIES`: addresses held at most. */
  readonly maxEntries?: number;
  /** `CHAIN_CACHE_MB` in bytes: estimated memory held at most (see {@link estimatedBytes}). */
  readonly maxBytes?: number;
  /** A tier shared by the instances (Redis with `REDIS_URL`); read on a miss, written after a query. */
  readonly shared?: ResultCache<ChainAnswer>;
  /** One query per address at a time; across instances with Redis. Default: in this process. */
  readonly singleFlight?: SingleFlight;
}

/** The chain source with its cache, and what it holds, for tests and metrics. */
export interface BlockCache extends ChainSource {
  /** Addresses held in memory. */
  readonly size: number;
  /** Their estimated bytes. */
  readonly bytes: number;
}

const DEFAULT_TIP_TTL_MS = 5_000;
/** The short error lifetime: the check results keep a failure as long (src/features/attestations/lookup.ts `SHORT_TTL_MS`). */
export const FAILURE_TTL_MS = 5_000;
/** An answer is read again after this even when no block came (a block is found every 10 minutes on average). */
export const UTXO_MAX_AGE_MS = 10 * 60_000;
const DEFAULT_CHAIN_CACHE_ENTRIES = 10_000;
const DEFAULT_CHAIN_CACHE_BYTES = 32 * 1024 * 1024;
/** A tip older than this share of its lifetime is read again in the background by the next request. */
const REFRESH_AHEAD_SHARE = 0.8;

/**
 * What an answer takes in memory, estimated: a fixed part for the entry and
 * the address, and a part per UTXO (its object, status object and 64-hex
 * txid string). Deliberately generous: the bound must hold, not be exact.
 */
export function estimatedBytes(answer: ChainAnswer): number {
  return answer.ok ? 320 + 240 * answer.utxos.length : 320 + 160 * answer.failures.length;
}

/** Same block, or a newer one (another instance may already have read past our tip). */
function readUnder(answer: Extract<ChainAnswer, { ok: true }>, tip: ChainTip): boolean {
  return answer.tip.hash === tip.hash || answer.tip.height > tip.height;
}

function unavailable(error: unknown): ChainUnavailableError {
  return error instanceof ChainUnavailableError ? error : new ChainUnavailableError([{ base: 'chain', reason: 'request failed' }]);
}

export function createBlockCache(options: BlockCacheOptions): BlockCache {
  const { reader, now, shared } = options;
  const tipTtlMs = options.tipTtlMs ?? DEFAULT_TIP_TTL_MS;
  if (!Number.isFinite(tipTtlMs) || tipTtlMs <= 0) throw new TypeError('chain: tipTtlMs must be a positive number');
  const failureTtlMs = Math.min(FAILURE_TTL_MS, tipTtlMs);
  const memory = createLruCache<ChainAnswer>({
    now,
    maxEntries: options.maxEntries ?? DEFAULT_CHAIN_CACHE_ENTRIES,
    maxBytes: options.maxBytes ?? DEFAULT_CHAIN_CACHE_BYTES,
    sizeOf: estimatedBytes,
  });
  const singleFlight = options.singleFlight ?? createSingleFlight();

  let tip: { readonly value: ChainTip; readonly readAtMs: number } | undefined;
  let tipFailure: { readonly error: ChainUnavailableError; readonly untilMs: number } | undefined;
  let refreshing: Promise<ChainTip> | undefined;

  function readTip(): Promise<ChainTip> {
    refreshing ??= reader.tip().then(
      (read) => {
        const value: ChainTip = { height: read.height, hash: read.hash };
        tip = { value, readAtMs: now() };
        tipFailure = undefined;
        refreshing = undefined;
        return value;
      },
      (error: unknown) => {
        const failure = unavailable(error);
        tipFailure = { error: failure, untilMs: now() + failureTtlMs };
        refreshing = undefined;
        throw failure;
      },
    );
    return refreshing;
  }

  /** The tip to judge answers by: the one held while it is fresh, else a new read shared by every caller. */
  function currentTip(): ChainTip | Promise<ChainTip> {
    const nowMs = now();
    const failing = tipFailure !== undefined && nowMs < tipFailure.untilMs;
    if (tip !== undefined) {
      const age = nowMs - tip.readAtMs;
      if (age < tipTtlMs) {
        if (age >= tipTtlMs * REFRESH_AHEAD_SHARE && refreshing === undefined && !failing) readTip().catch(() => {});
        return tip.value;
      }
    }
    if (failing) return Promise.reject(tipFailure!.error);
    return readTip();
  }

  /** The answer to give from `answer` under `current`, or undefined when it was read under an older block. */
  function served(answer: ChainAnswer, current: ChainTip): AddressUtxos | undefined {
    if (!answer.ok) throw new ChainUnavailableError(answer.failures);
    if (!readUnder(answer, current)) return undefined;
    return {
      utxos: answer.utxos,
      tipHeight: atLeastTheirBlocks(Math.max(current.height, answer.tip.height), answer.utxos),
      source: answer.source,
    };
  }

  async function query(address: string): Promise<AddressUtxos> {
    const current = await currentTip();
    // A caller that missed just before another stored the answer finds it here.
    const held = memory.get(address);
    const fromMemory = held === undefined ? undefined : served(held.value, current);
    if (fromMemory !== undefined) return fromMemory;
    if (shared !== undefined) {
      const stored = await shared.get(address);
      if (stored?.value.ok) {
        const fromShared = served(stored.value, current);
        if (fromShared !== undefined) {
          memory.set(address, stored.value, stored.expiresAtMs - now());
          return fromShared;
        }
      }
    }
    let read: Awaited<ReturnType<ChainReader['utxos']>>;
    try {
      read = await reader.utxos(address);
    } catch (error) {
      const failure = unavailable(error);
      memory.set(address, { ok: false, failures: failure.failures }, failureTtlMs);
      throw failure;
    }
    const answer: ChainAnswer = { ok: true, tip: current, utxos: read.utxos, source: read.source };
    memory.set(address, answer, UTXO_MAX_AGE_MS);
    await shared?.set(address, answer, UTXO_MAX_AGE_MS);
    return served(answer, current)!;
  }

  return {
    async addressUtxos(address) {
      const current = await currentTip();
      const held = memory.get(address);
      const hit = held === undefined ? undefined : served(held.value, current);
      return hit ?? singleFlight.run(`chain:${address}`, () => query(address));
    },
    get size() {
      return memory.size;
    },
    get bytes() {
      return memory.bytes;
    },
  };
}
