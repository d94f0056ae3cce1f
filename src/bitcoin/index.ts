/**
 * Bitcoin addresses and message signatures (docs/protocol.md §7 "Signatures").
 * Pure functions, and verification only: the service never holds a user's
 * key. The signer the tests and benchmarks use is test/support/bitcoin-signer.ts.
 */
export {
  AddressError,
  addressMatchesNetwork,
  decodeAddress,
  tryDecodeAddress,
  type AddressNetwork,
  type AddressType,
  type DecodedAddress,
} from './address.js';
export { checkBip322, verifyBip322, type Bip322Outcome } from './bip322.js';
export { looksLikeLegacySignature, verifyLegacy } from './legacy.js';
export { verifySignature, type SignatureCode, type SignatureScheme } from './verify.js';
