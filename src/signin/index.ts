/**
 * Sign-in paths (docs/protocol.md §5, §6). The signed challenge lives here; the
 * signature itself is checked with `src/bitcoin`.
 */
export {
  DEFAULT_CHALLENGE_TTL_SECONDS,
  MAX_CHALLENGE_FIELD_LENGTH,
  MAX_CHALLENGE_TTL_SECONDS,
  MIN_CHALLENGE_TTL_SECONDS,
  checkChallenge,
  issueChallenge,
  parseChallengeMessage,
} from './challenge.js';
export type {
  ChallengeCheckResult,
  ChallengeContext,
  ChallengeFailureCode,
  CheckChallengeInput,
  IssueChallengeInput,
  IssuedChallenge,
  ParsedChallenge,
} from './challenge.js';
export { proveAddress, type ChallengeProofContext, type ChallengeProofInput, type NonceGuard } from './bip322-signin.js';
export { createEmailCodeService, type EmailCodeService } from './email-code.js';
export { HandoffService, spacedCode, type ClaimResult, type HandoffView, type StartedHandoff } from './handoff.js';
export {
  createProviderRegistry,
  isProviderError,
  ProviderError,
  type ProviderRegistry,
  type ProviderErrorCode,
} from './providers.js';
export { DEFAULT_CHALLENGE_PURPOSE, expectedField } from './challenge.js';
export { oauthErrorLocation } from './oauth-errors.js';
export { checkReturnTo } from './oauth-return-to.js';
export { originRules } from './origins.js';
export type { OriginRules } from './origins.js';
export { OAUTH_STATE_COOKIE_NAME, withTabAdoptMarker } from './providers.js';
export type { ProviderSignIn } from './providers.js';
