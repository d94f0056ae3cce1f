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
export type { IssueChallengeInput, IssuedChallenge } from './challenge.js';
export { proveAddress, type ChallengeProofContext, type ChallengeProofInput } from './bip322-signin.js';
export { DEFAULT_CHALLENGE_PURPOSE, expectedField } from './challenge.js';
export { RETURN_TO_DETAIL, checkReturnTo, safeReturnTo, withTabAdoptMarker } from './oauth-return-to.js';
export { originRules } from './origins.js';
export type { OriginRules } from './origins.js';
