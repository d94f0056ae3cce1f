/** Security keys and passkeys (docs/protocol.md §6). */
export { relyingParty, type RelyingParty } from './relying-party.js';
export { WEBAUTHN_CHALLENGE_TTL_MS } from './challenge-token.js';
export {
  credentialView,
  MAX_CREDENTIAL_LABEL_LENGTH,
  MAX_CREDENTIALS_PER_ACCOUNT,
  WebAuthnService,
  type CeremonyOptions,
  type CredentialView,
  type WebAuthnServiceDeps,
} from './service.js';
