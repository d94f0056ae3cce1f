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
  type ActivityDetail,
  type ActivityKind,
  type ActivityLogDeps,
  type ActivityPage,
  type ActivityView,
} from './activity.js';
export { DeviceService, type DeviceServiceDeps, type DeviceView } from './devices.js';
export { AccountService, type AccountChange, type AccountServiceDeps, type MergeReport, type ProviderProfile } from './service.js';
export { SignInService, type CompleteSignIn, type SignInServiceDeps, type SignInTarget } from './sign-in.js';
export { codePointLength, cleanDisplayText } from './display-text.js';
export { DISPLAY_IDENTITY_KINDS, MAX_DISPLAY_NAME_LENGTH, accountPatchOf, displayNameFromProvider, editAccount } from './edit.js';
export type { AccountEditInput } from './edit.js';
export { identityView, linkIdentity, listIdentityViews, unlinkIdentity } from './linking.js';
export type { IdentityView, LinkInput, LinkOutcome, TransferAcceptance } from './linking.js';
export {
  SUDO_WINDOW_MS,
  isSudoFresh,
  proofFromFields,
  proveAccountAgain,
  proveIdentity,
  requireFreshSudo,
} from './step-up.js';
export type { AddressProof, EmailProof, IdentityProof, ProofCheckers, ProofFields, ProvenAddressOrEmail } from './step-up.js';
export type { ProvenIdentity } from './accounts.js';
export { AccountLifecycle } from './lifecycle.js';
export { SignInNotices } from './notices.js';
export { requireRecentStepUp } from './step-up.js';
