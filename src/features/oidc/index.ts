/**
 * The OpenID provider (docs/protocol.md §8): oc-host as a standard OpenID
 * Connect provider, on the certified `oidc-provider` library, with its keys,
 * clients, claims and storage adapter.
 */
export { OidcService, type OidcServiceDeps } from './service.js';
export { ACR_BASIC, ACR_KEY } from './claims.js';
export { CLIENT_AUTH_METHODS, cspSourceOf, type ClientAuthMethod, type ClientView, type IssuedClient } from './clients.js';
export { ensureOidcKeys, listOidcKeys, rotateOidcKeys, isOidcAlgorithm, OIDC_ALGORITHMS, type OidcAlgorithm } from './keys.js';

export { BackchannelLogoutDispatcher } from './backchannel.js';

export { registerOidcRoutes } from './routes.js';
export { registerConsentRoutes, registerOidcClientRoutes } from './client-routes.js';

export { OIDC_MIGRATIONS } from './store-schema.js';

export { OidcArea } from './store.js';
export type { OidcResourceRecord, OidcStore } from './store.js';
export { OidcLogoutsArea, oidcStoreHooks } from './logout-store.js';
export type { OidcLogoutStore } from './logout-store.js';
export { grantReference } from './token-revocation-store.js';
