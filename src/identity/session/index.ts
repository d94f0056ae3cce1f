/**
 * Sessions (docs/protocol.md §3): signing keys and the JWKS, the session JWT, and
 * the `oc_session` cookie.
 */
export { clientFacts, coarseNetwork, localDeviceLabel, type ClientFacts } from './device.js';
export {
  DEFAULT_KEY_OVERLAP_SECONDS,
  KeyRing,
  generateSigningKey,
  jwkThumbprint,
  KEY_PUBLISH_LEAD_MS,
  publicJwkForConsumers,
  signingKeyFromJwk,
  verificationKeyFromJwk,
} from './keys.js';
export type { SigningKey } from './keys.js';

export { MAX_TOKEN_LENGTH, SESSION_LIFETIME_SECONDS, mintSessionJwt, tokenHash, verifySessionJwt } from './jwt.js';
export { signInMethodClaims } from './sign-in-method.js';
export type {
  SessionClaims,
  SessionClaimsInput,
} from './jwt.js';

export {
  MAX_SESSION_COOKIES,
  SESSION_COOKIE_NAME,
  clearedSessionCookies,
  readCookie,
  readRosterCookie,
  readSessionCookies,
  serializeClearedRosterCookie,
  serializeClearedSessionCookie,
  serializeRosterCookie,
  serializeSessionCookie,
} from './cookie.js';
export { accountIdFromDid, didOf } from './accounts.js';
export type { AccountView } from './accounts.js';
export { loadKeyRing, loadServerSecret, rotateSigningKey, sessionKeyStates } from './keystore.js';
export { RevocationFeed } from './revocations.js';
export { isRosterBinding, rosterBinding } from './roster-binding.js';
export { SessionService } from './service.js';
export type { TokenFreshness } from './freshness.js';
export type { Authenticated, IssuedSession, SigningMethod } from './service.js';
export { accountStanding, mayAct } from './standing.js';
