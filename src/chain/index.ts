/** Chain data for the attestation metrics (docs/protocol.md §7 "Chain metrics"). */
export {
  ChainUnavailableError,
  createEsploraClient,
  DEFAULT_ESPLORA_TIMEOUT_MS,
  type AddressUtxos,
  type BaseFailure,
  type ChainSource,
  type EsploraClientOptions,
  type Utxo,
} from './esplora.js';
