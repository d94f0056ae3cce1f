/**
 * One entry point for attestation and sign-in signatures (docs/protocol.md §7
 * "Signatures"), answering a stable code instead of a boolean.
 *
 * - `legacy`: Bitcoin Core signmessage, P2PKH only; any other address type
 *   is `sig_unsupported_script`.
 * - `bip322`: the simple or full form. P2WSH addresses, and proofs that are
 *   recognisably for a script kind this verifier does not evaluate (a P2SH
 *   that wraps something other than P2WPKH, a taproot script path), are
 *   `sig_unsupported_script`; everything else that fails is `sig_invalid`.
 *   On a P2PKH address a legacy signature is also accepted under `bip322`,
 *   since BIP-322 §Legacy makes it one of the BIP's own formats; the code
 *   then says `sig_ok_legacy`, naming what was actually checked.
 * - no scheme: `bip322`, unless the address is P2PKH and the signature looks
 *   like a legacy one (88 base64 characters, header 27..34). On any other
 *   address a compact signature (header 27..42) that fails as BIP-322 is
 *   `sig_unsupported_script`: the wallet used the legacy method, which such
 *   an address cannot be checked by, rather than signing wrongly.
 *
 * Unknown schemes and non-string inputs from untyped callers are `sig_invalid`;
 * the route answers `invalid_scheme` before calling this. Never throws.
 */
import { tryDecodeAddress } from './address.js';
import { checkBip322Decoded } from './bip322.js';
import { looksLikeCompactSignature, looksLikeLegacySignature, verifyLegacy } from './legacy.js';

export type SignatureScheme = 'bip322' | 'legacy';
export type SignatureCode = 'sig_ok_bip322' | 'sig_ok_legacy' | 'sig_invalid' | 'sig_unsupported_script';

export function verifySignature(input: {
  address: string;
  message: string;
  signature: string;
  scheme?: SignatureScheme | undefined;
}): SignatureCode {
  try {
    const { address, message, signature, scheme } = input;
    if (typeof address !== 'string' || typeof message !== 'string' || typeof signature !== 'string') return 'sig_invalid';
    if (scheme !== undefined && scheme !== 'bip322' && scheme !== 'legacy') return 'sig_invalid';
    const decoded = tryDecodeAddress(address);
    if (!decoded) return 'sig_invalid';

    if (scheme === 'legacy') {
      if (decoded.type !== 'p2pkh') return 'sig_unsupported_script';
      return verifyLegacy(address, message, signature) ? 'sig_ok_legacy' : 'sig_invalid';
    }
    if (decoded.type === 'p2pkh' && looksLikeLegacySignature(signature)) {
      return verifyLegacy(address, message, signature) ? 'sig_ok_legacy' : 'sig_invalid';
    }
    switch (checkBip322Decoded(decoded, message, signature)) {
      case 'valid':
        return 'sig_ok_bip322';
      case 'unsupported':
        return 'sig_unsupported_script';
      default:
        return decoded.type !== 'p2pkh' && looksLikeCompactSignature(signature) ? 'sig_unsupported_script' : 'sig_invalid';
    }
  } catch {
    return 'sig_invalid';
  }
}
