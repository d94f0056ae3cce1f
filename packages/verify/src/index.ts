/**
 * @oc-host/verify: consumer-side verification of the oc-host session cookie
 * (docs/api.md Authentication 2; docs/protocol.md §3).
 *
 *   import { verifySession } from '@oc-host/verify';
 *   const session = await verifySession(token, { issuer: 'https://auth.example.com' }); // OC_AUTH_PUBLIC_JWK
 *
 * An API checks the provider's access tokens (RFC 9068) with
 * `createAccessTokenVerifier({ issuer, audience })`, or the frameworks'
 * `requireAccessToken({ issuer, audience, scopes })` guards.
 *
 * Framework middleware lives in `@oc-host/verify/express`, `/fastify` and
 * `/hono`; the client for the public routes in `@oc-host/verify/client`.
 */
export { createSessionVerifier, verifySession, PUBLIC_JWK_ENV, MAX_TOKEN_LENGTH } from './verifier.js';
export type { SessionVerifier, VerifySessionOptions } from './verifier.js';
export type { AuthenticationMethod, DisplayIdentity, OcSessionClaims, SigningMethod } from './claims.js';
export { createAccessTokenVerifier, ACCESS_TOKEN_ALGORITHMS } from './access-tokens.js';
export type {
  AccessTokenAlgorithm,
  AccessTokenClaims,
  AccessTokenProblem,
  AccessTokenResult,
  AccessTokenVerifier,
  AccessTokenVerifierOptions,
} from './access-tokens.js';
export { accessTokenGuard } from './access-guards.js';
export type { AccessGuard, AccessGuardCode, AccessRefusal, AccessTokenGuardOptions } from './access-guards.js';
export { parsePublicJwk } from './keys.js';
export { stopRevocationPolling, DEFAULT_REVOCATION_INTERVAL_SECONDS } from './revocations.js';
export type { RevocationOptions } from './revocations.js';
export type { RevocationFeedEntry } from './revocation-feed.js';
export type { Ed25519PublicJwk, JwkObject, PublicJwkInput } from './keys.js';
export {
  bearerToken,
  presentedSessionTokens,
  sessionCookieValues,
  tabSessionToken,
  SESSION_COOKIE_NAME,
  TAB_SESSION_HEADER,
} from './tokens.js';
export { resolveSession } from './resolve.js';
export type { NoSessionReason, SessionRequestHeaders, SessionResolution } from './resolve.js';
export type { HeaderValue } from './tokens.js';
export { createWebhookVerifier, verifyWebhook, WebhookVerificationError, DEFAULT_WEBHOOK_TOLERANCE_SECONDS } from './webhooks.js';
export type { WebhookErrorCode, WebhookEvent, WebhookVerifier, WebhookVerifierOptions } from './webhooks.js';
export {
  freshStepUpGuard,
  freshSudoGuard,
  sessionGuard,
  NOT_AUTHENTICATED,
  STEP_UP_REQUIRED,
  SUDO_REQUIRED,
  TAB_INVALID,
} from './guards.js';
export type { FreshStepUpOptions, FreshSudoOptions, GuardCode, GuardErrorBody, Refusal, SessionGuard } from './guards.js';
