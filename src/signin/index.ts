/**
 * Sign-in paths (docs/protocol.md §5, §6). The signed challenge lives here; the
 * signature itself is checked with `src/bitcoin`.
 */
export {
  MAX_CHALLENGE_FIELD_LENGTH,
  checkChallenge,
  issueChallenge,
  parseChallengeMessage,
} from './challenge.js';
export type { IssueChallengeInput } from './challenge.js';
export { proveAddress, type ChallengeProofContext, type ChallengeProofInput, type NonceGuard } from './bip322-signin.js';
export { createEmailCodeService, type EmailCodeService } from './email-code.js';
export { HandoffService } from './handoff.js';
export {
  createProviderRegistry,
  isProviderError,
  type ProviderRegistry,
} from './providers.js';
export { DEFAULT_CHALLENGE_PURPOSE, expectedField } from './challenge.js';
export { oauthErrorLocation } from './oauth-errors.js';
export { checkReturnTo } from './oauth-return-to.js';
export { originRules } from './origins.js';
export type { OriginRules } from './origins.js';
export { OAUTH_STATE_COOKIE_NAME, withTabAdoptMarker } from './providers.js';
export type { ProviderSignIn } from './providers.js';
