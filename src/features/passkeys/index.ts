/** Security keys and passkeys (docs/protocol.md §6). */
export { relyingParty } from './relying-party.js';

export { WebAuthnService } from './service.js';

export { asAuthentication, registerWebAuthnRoutes, WEBAUTHN_ASSERTION_FIELDS } from './routes.js';

export { PASSKEY_MIGRATIONS } from './store-schema.js';
export { WebAuthnArea } from './store.js';
export type { WebAuthnCredentialRecord, WebAuthnStore } from './store.js';
export { passkeyAccountHooks } from './store.js';
