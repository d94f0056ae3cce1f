/** Security keys and passkeys (docs/protocol.md §6). */
export { relyingParty } from './relying-party.js';

export { WebAuthnService } from './service.js';

export { asAuthentication, registerWebAuthnRoutes, WEBAUTHN_ASSERTION_FIELDS } from './routes.js';

export { PASSKEY_TABLES } from './tables.js';
export type { WebAuthnCredentialRecord, WebAuthnStore } from './store.js';
export { PASSKEYS_WORDS } from './words.js';
