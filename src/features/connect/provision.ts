/**
 * Provisioning (docs/protocol.md §6: `POST /api/connect/provision` with
 * `{user_id, email?}` answers `{ok, did_oc, is_new}`, idempotent per
 * (app, user_id); "the e-mail is kept as an unverified hint").
 *
 * - The integrator's user is the identity of kind `connect` with value
 *   `<app_id>:<user_id>` (docs/protocol.md §2) on a `federated` account. App ids
 *   hold no `:`, so the first colon splits the value unambiguously, and
 *   because the app id is taken from the authenticated key, never from the
 *   request, one app cannot name (let alone create or find) another app's
 *   users. The unique index on identities makes concurrent first calls end
 *   in one account: exactly one of them answers `is_new: true`.
 * - `user_id` is the integrator's opaque id, kept exactly as sent (no
 *   trimming or case folding: `U1` and `u1` may be two users): 1 to 256
 *   characters, no control characters or unpaired surrogates.
 * - The e-mail hint is NOT an e-mail identity. An identity is a way in: an
 *   unverified e-mail identity would either let whoever later proves that
 *   mailbox land in the integrator's account, or block the mailbox's real
 *   owner from their own. It is kept out of sight instead, under a storage
 *   setting named after the account (`connect_email_hint:<account_id>`),
 *   lowercased, marked unverified. The first hint given for a user is kept and
 *   later ones do not replace it (a repeated provision changes nothing, as
 *   idempotency asks). It is never shown by any route, never used for
 *   sign-in, never logged; deleting the app does not delete it.
 */
import { OcError } from '../../platform/errors.js';
import { normalizeEmail } from '../../platform/mail/index.js';
import { didOf } from '../../identity/session/index.js';
import { accountForIdentity } from '../../identity/account/index.js';
import type { AccountStore, KeyStore } from '../../platform/storage/index.js';
import type { ConnectAppRecord } from './store.js';

const MAX_CONNECT_USER_ID_LENGTH = 256;

const FORBIDDEN_IN_USER_ID = /[\p{Cc}\p{Cs}]/u;

export interface ProvisionInput {
  readonly user_id: string;
  readonly email?: string | null | undefined;
}

export interface Provisioned {
  readonly did_oc: string;
  /** True only for the call that created the account. */
  readonly is_new: boolean;
}

/** The identity value of an integrator's user (docs/protocol.md §2). */
function connectIdentityValue(appId: string, userId: string): string {
  return `${appId}:${userId}`;
}

import { emailHintSetting } from '../../platform/storage/index.js';

export { emailHintSetting };

function checkUserId(userId: string): string {
  const length = Array.from(userId).length;
  if (length < 1 || length > MAX_CONNECT_USER_ID_LENGTH) {
    throw new OcError('bad_request', `user_id: must be 1 to ${MAX_CONNECT_USER_ID_LENGTH} characters`);
  }
  if (FORBIDDEN_IN_USER_ID.test(userId)) throw new OcError('bad_request', 'user_id: must not hold control characters');
  return userId;
}

export async function provisionUser(
  store: AccountStore & KeyStore,
  app: ConnectAppRecord,
  input: ProvisionInput,
  nowMs: number,
): Promise<Provisioned> {
  const userId = checkUserId(input.user_id);
  // Validated before anything is written, so a bad hint leaves no account behind.
  const email = input.email === undefined || input.email === null ? undefined : normalizeEmail(input.email, 'email');
  const { account, created } = await accountForIdentity(store, { kind: 'connect', value: connectIdentityValue(app.id, userId) }, nowMs);
  if (email !== undefined) {
    await store.getOrCreateSetting(emailHintSetting(account.id), () =>
      JSON.stringify({ email, verified: false, app_id: app.id, received_at: new Date(nowMs).toISOString() }),
    );
  }
  return { did_oc: didOf(account.id), is_new: created };
}
