/** Chain data for the attestation metrics (docs/protocol.md §7 "Chain metrics"). */
export {
  ChainUnavailableError,
  createEsploraClient,
  type AddressUtxos,
  type ChainReader,
  type ChainSource,
  type Utxo,
} from './esplora.js';
export {
  createBlockCache,
  estimatedBytes,
  FAILURE_TTL_MS,
  UTXO_MAX_AGE_MS,
  type BlockCacheOptions,
  type ChainAnswer,
} from './block-cache.js';
