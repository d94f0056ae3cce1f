/**
 * The OpenID provider (docs/protocol.md §8): oc-host as a standard OpenID
 * Connect provider, on the certified `oidc-provider` library, with its keys,
 * clients, claims and storage adapter.
 */
export { OidcService, type OidcServiceDeps } from './service.js';
export { ACR_BASIC, ACR_KEY } from './claims.js';
export {
  CLIENT_AUTH_METHODS,
  cspSourceOf,
  type ClientAuthMethod,
  type ClientEdit,
  type ClientInput,
  type ClientView,
  type IssuedClient,
} from './clients.js';
export { ensureOidcKeys, listOidcKeys, rotateOidcKeys, isOidcAlgorithm, OIDC_ALGORITHMS, type OidcAlgorithm } from './keys.js';

export { BackchannelLogoutDispatcher } from './backchannel.js';

export { registerOidcRoutes } from './routes.js';
export { registerConsentRoutes, registerOidcClientRoutes } from './client-routes.js';

export type { OidcResourceRecord, OidcStore } from './store.js';
export { OIDC_TABLES } from './tables.js';
export { grantReference } from './token-revocation-store.js';
export { backchannelUriChecker } from './backchannel-uri.js';
export { OIDC_WORDS } from './words.js';
