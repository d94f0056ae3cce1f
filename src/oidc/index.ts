/**
 * The OpenID provider (docs/protocol.md §8): oc-host as a standard OpenID
 * Connect provider, on the certified `oidc-provider` library, with its keys,
 * clients, claims and storage adapter.
 */
export { httpsOrigin, OidcService, type OidcServiceDeps } from './service.js';
export {
  DEVICE_CODE_SECONDS,
  INTERACTION_PATH,
  loginHintOf,
  OIDC_ROUTES,
  prefersKey,
  setAsideProviderSession,
  type DeviceCodeProblem,
  type DeviceQuestion,
  type HostSessionView,
  type LogoutQuestion,
  type OidcPages,
} from './provider.js';
export { ACR_BASIC, ACR_KEY, OIDC_SCOPES } from './claims.js';
export {
  CLIENT_AUTH_METHODS,
  cspSourceOf,
  DEVICE_CODE_GRANT,
  type ClientAuthMethod,
  type ClientView,
  type IssuedClient,
} from './clients.js';
export { ensureOidcKeys, listOidcKeys, rotateOidcKeys, isOidcAlgorithm, OIDC_ALGORITHMS, type OidcAlgorithm } from './keys.js';
export { BackchannelLogoutDispatcher } from './backchannel.js';
