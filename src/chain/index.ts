/** Chain data for the attestation metrics (docs/protocol.md §7 "Chain metrics"). */
export {
  atLeastTheirBlocks,
  ChainUnavailableError,
  createEsploraClient,
  DEFAULT_ESPLORA_MAX_CONNECTIONS,
  DEFAULT_ESPLORA_TIMEOUT_MS,
  type AddressUtxos,
  type BaseFailure,
  type ChainReader,
  type ChainSource,
  type ChainTip,
  type EsploraClientOptions,
  type Utxo,
} from './esplora.js';
export {
  createBlockCache,
  DEFAULT_CHAIN_CACHE_BYTES,
  DEFAULT_CHAIN_CACHE_ENTRIES,
  DEFAULT_TIP_TTL_MS,
  estimatedBytes,
  FAILURE_TTL_MS,
  UTXO_MAX_AGE_MS,
  type BlockCache,
  type BlockCacheOptions,
  type ChainAnswer,
} from './block-cache.js';
