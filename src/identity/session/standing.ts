/**
 * Whether an account may act (docs/protocol.md §2 "Disabling and deleting",
 * docs/architecture.md "The sign-in door"): the one rule every door that
 * mints, refreshes or accepts a credential asks, whatever the credential is:
 * a session cookie or a tab token (identity/session/service.ts), an OpenID code,
 * token or refresh (features/oidc/provider.ts, its userinfo and introspection), a
 * Connect API key (features/connect/apps.ts) and the OpenID clients of its app.
 *
 * An account stands when it exists, is not deleted, is not merged into
 * another and the operator does not hold it. A merged account's pointer is
 * followed only where the door means the person (a sign-in, a switch: the
 * survivor answers); a credential issued to the merged account itself names
 * an account that is gone.
 */
import { OcError } from '../../platform/errors.js';
import type { AccountRecord } from '../../platform/storage/index.js';

/** `active`: it may act; `held`: the operator disabled it; `gone`: unknown, deleted or merged away. */
export type AccountStanding = 'active' | 'held' | 'gone';

export function accountStanding(account: AccountRecord | null | undefined): AccountStanding {
  if (account === null || account === undefined || account.deleted_at !== null || account.merged_into !== null) return 'gone';
  return account.disabled_at === null ? 'active' : 'held';
}

/** True when the account may act: {@link accountStanding} is `active`. */
export function mayAct(account: AccountRecord | null | undefined): account is AccountRecord {
  return accountStanding(account) === 'active';
}

/**
 * The account, when it may act; otherwise the refusal every door answers:
 * a held account 403 `account_disabled`, a gone one 404 `unknown_did_oc`.
 * `what` names the door in the message.
 */
export function standingAccount(account: AccountRecord | null | undefined, what: string): AccountRecord {
  const standing = accountStanding(account);
  if (standing === 'gone') throw new OcError('unknown_did_oc', `${what}: no such account`);
  if (standing === 'held') throw new OcError('account_disabled', `${what}: this account is disabled by the operator`);
  return account as AccountRecord;
}
