/**
 * The OrangeCheck attestation format (docs/protocol.md §7): the canonical
 * message, its id, and the `protocol:identifier` items it binds. It is the
 * lowest layer of the attestation code: `attest/` (verification, look-ups)
 * and `relay/` (Nostr envelopes) both read the format through here, so
 * neither re-implements it and neither imports the other for it.
 */
export {
  attestationId,
  buildAttestationMessage,
  parseAttestationMessage,
  type ParsedAttestation,
} from './canonical.js';
export {
  canonicalProtocol,
  formatIdentity,
  identityKey,
  parseIdentity,
  parseIdentityItem,
  type Identity,
} from './identities.js';
