/**
 * Accounts (docs/protocol.md §2, §6): the end of every sign-in (identity to
 * account to session), and the signed-in account managing itself: step-up,
 * linked identities (link, dual-proof transfer, unlink) and account edit.
 */
export { accountForIdentity } from './accounts.js';
export {
  ACTIVITY_KINDS,
  DEFAULT_ACTIVITY_PAGE,
  MAX_ACTIVITY_PAGE,
  ActivityLog,
  activityView,
  type ActivityView,
} from './activity.js';
export { AccountService, type AccountChange } from './service.js';
export { SignInService, type ProviderSignIn, type SignInTarget } from './sign-in.js';
export { cleanDisplayText } from './display-text.js';
export type { TransferAcceptance } from './linking.js';
export { proofFromFields, requireFreshness, requireKeyStepUp } from './step-up.js';
export type { FreshnessNeed, ProofCheckers } from './step-up.js';
export { SignInNotices } from './notices.js';
