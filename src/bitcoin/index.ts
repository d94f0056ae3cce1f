/**
 * Bitcoin addresses and message signatures (docs/protocol.md §7 "Signatures").
 * Pure functions; the signer is exported separately from './signer.js' for
 * tests and tooling.
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
