/**
 * Nostr relays (docs/protocol.md §7 "Relay envelopes"): the attestation envelope,
 * its kind-30078 event, and the pool that reads and publishes them.
 */
export {
  MAX_CONTENT_BYTES,
  attestationIdOf,
  buildAttestationEvent,
  buildEnvelope,
  identityKey,
  parseEnvelopeEvent,
  parseIdentity,
} from './envelope.js';
export type { AttestationEnvelope } from './envelope.js';
export { createRelayPool } from './client.js';
export type {
  AttestationQueryResult,
  RelayPool,
  RelayPoolOptions,
  VerifiedEnvelope,
} from './client.js';
export type { AttestationLookup } from './lookup.js';
