/**
 * Bitcoin addresses and message signatures (docs/protocol.md §7 "Signatures").
 * Pure functions, and verification only: the service never holds a user's
 * key. The signer the tests and benchmarks use is test/support/bitcoin-signer.ts.
 */
export {
  addressMatchesNetwork,
  tryDecodeAddress,
  type DecodedAddress,
} from './address.js';
export { verifySignature, type SignatureScheme } from './verify.js';
