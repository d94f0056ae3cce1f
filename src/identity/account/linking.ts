/**
 * Linked identities of an account (docs/protocol.md §2, §6): listing them,
 * linking a freshly proven address or e-mail, the dual-proof transfer that
 * merges another account into the active one, and unlinking.
 *
 * The proof itself is checked by the caller (step-up.ts `proveIdentity`)
 * before anything here runs: whether an identity belongs to some other
 * account is only ever revealed to someone who has just proven control of it,
 * so the linking endpoints cannot be used to probe addresses or e-mails.
 */
import { OcError } from '../../platform/errors.js';
import { didOf } from '../session/index.js';
import {
  MergeRefused,
  type AccountRecord,
  type IdentityKind,
  type IdentityRecord,
  type AccountStore,
  type MergeResult,
  type TransferHoldings,
} from '../../platform/storage/index.js';
import type { ProvenAddressOrEmail } from './step-up.js';

/** One element of `identities` in GET /api/auth/identities (docs/protocol.md §6). */
export interface IdentityView {
  readonly id: string;
  readonly kind: IdentityKind;
  /** The address, the e-mail, `<provider>:<sub>` or `<app_id>:<user_id>` (docs/protocol.md §2). */
  readonly value: string;
  readonly verified: boolean;
  /** ISO 8601 UTC. */
  readonly created_at: string;
}

export function identityView(identity: IdentityRecord): IdentityView {
  return {
    id: identity.id,
    kind: identity.kind,
    value: identity.value,
    verified: identity.verified,
    created_at: new Date(identity.created_at).toISOString(),
  };
}

/**
 * One element of `linked` in GET /api/auth/identities, the shape the
 * OrangeCheck account components read (auth-client `OcLinkedIdentity`).
 */
export interface LinkedIdentityView {
  readonly id: string;
  readonly kind: IdentityKind;
  readonly value: string;
  /** When it was proven (ISO 8601 UTC); null for an unverified hint (a Connect e-mail). */
  readonly verified_at: string | null;
  /** How it was proven: `bip322`, `email-otp`, `oauth`, or null for Connect users. */
  readonly verification_method: 'bip322' | 'email-otp' | 'oauth' | null;
  /** The primary address, or the account's first e-mail: the client offers no unlink for it. */
  readonly is_primary: boolean;
}

const VERIFICATION_METHOD: Readonly<Record<IdentityKind, LinkedIdentityView['verification_method']>> = {
  btc: 'bip322',
  email: 'email-otp',
  oauth: 'oauth',
  connect: null,
};

/** `identities` as the client components read them: primary flags by kind, verification by kind. */
export function linkedIdentityViews(account: AccountRecord, identities: readonly IdentityRecord[]): LinkedIdentityView[] {
  const firstEmail = identities.find((identity) => identity.kind === 'email' && identity.verified);
  return identities.map((identity) => ({
    id: identity.id,
    kind: identity.kind,
    value: identity.value,
    verified_at: identity.verified ? new Date(identity.created_at).toISOString() : null,
    verification_method: identity.verified ? VERIFICATION_METHOD[identity.kind] : null,
    is_primary: identity.kind === 'btc' ? identity.value === account.primary_btc : identity === firstEmail,
  }));
}

/** The account's identities, oldest first. E-mails are shown here: only to the account itself. */
export async function listIdentityViews(store: AccountStore, accountId: string): Promise<IdentityView[]> {
  return (await store.listIdentities(accountId)).map(identityView);
}

/**
 * What the person merging accepts besides the identity just proven
 * (docs/protocol.md §2 "Merging"): identities and Connect apps of the other
 * account, by the ids its 409 listed. `confirm_transfer: true` is the empty
 * acceptance: the proven identity alone moves.
 */
export interface TransferAcceptance {
  readonly identities: readonly string[];
  readonly apps: readonly string[];
}

export interface LinkInput {
  /** The active, canonical account. */
  readonly account: AccountRecord;
  /** Just proven by the caller. */
  readonly identity: ProvenAddressOrEmail;
  /** docs/protocol.md §2: with an acceptance, an identity held by another account merges that account into this one. */
  readonly transfer: TransferAcceptance | null;
  readonly nowMs: number;
}

export type LinkOutcome =
  | { readonly status: 'linked' | 'already_linked'; readonly account: AccountRecord }
  /** `merged` is the did of the account that was merged into `account` (it exists no more on its own). */
  | {
      readonly status: 'merged';
      readonly account: AccountRecord;
      readonly merged: { readonly did_oc: string };
      readonly moved: MergeResult['moved'];
      readonly removed: MergeResult['removed'];
    };

/**
 * The refusal of a proven identity that another account holds. It names that
 * account (its did and display name) and lists what it holds: the caller has
 * just proven the identity, so could sign in to it and see as much anyway,
 * and needs to know what a transfer would move and what it would remove.
 */
export function linkedElsewhere(identity: ProvenAddressOrEmail, holder?: AccountRecord, holdings?: TransferHoldings | null): OcError {
  const options =
    holder === undefined
      ? undefined
      : {
          holder: {
            did_oc: didOf(holder.id),
            display_name: holder.display_name,
            ...(holdings === undefined || holdings === null
              ? {}
              : {
                  identities: holdings.identities.map((held) => ({ id: held.id, kind: held.kind, value: held.value })),
                  security_keys: holdings.keys.map((key) => ({ id: key.id, name: key.name })),
                  apps: holdings.apps.map((app) => ({ id: app.id, name: app.name })),
                }),
          },
        };
  return identity.kind === 'btc'
    ? new OcError(
        'address_linked_elsewhere',
        'link: another account holds this address; send confirm_transfer with a fresh proof to merge it into this one',
        options,
      )
    : new OcError(
        'email_linked_elsewhere',
        'link: another account holds this e-mail; send confirm_transfer with a fresh proof to merge it into this one',
        options,
      );
}

/** An account the operator holds is neither merged nor merged into (docs/protocol.md §2 "Disabling and deleting"). */
export function refuseHeldAccount(account: AccountRecord): void {
  if (account.disabled_at !== null || account.deleted_at !== null) {
    throw new OcError('account_disabled', 'link: the account holding this identity is disabled by the operator');
  }
}

/** A linked address becomes the primary one when the account has none (docs/protocol.md §2 display default). */
async function withPrimaryAddress(
  store: AccountStore,
  account: AccountRecord,
  identity: ProvenAddressOrEmail,
  nowMs: number,
): Promise<AccountRecord> {
  if (identity.kind !== 'btc' || account.primary_btc !== null) return account;
  return (await store.updateAccount(account.id, { primary_btc: identity.value }, nowMs)) ?? account;
}

/**
 * Links `identity` to `account`:
 * - free: linked, verified (the caller just proved it);
 * - already on this account: a no-op;
 * - on another account: 409 `address_linked_elsewhere` / `email_linked_elsewhere`
 *   listing what that account holds, unless `transfer` accepts the merge: then
 *   the other account is merged into this one (docs/protocol.md §2 "dual
 *   proof": this account's live session plus the fresh proof of one of the
 *   other's identities). Only the proven identity and what `transfer` names
 *   move; the store removes the rest, revokes the other's sessions, and no
 *   roster gains a row.
 * - either account disabled by the operator: 403 `account_disabled`.
 */
export async function linkIdentity(store: AccountStore, input: LinkInput): Promise<LinkOutcome> {
  const { account, identity, nowMs } = input;
  refuseHeldAccount(account);
  let owner: AccountRecord | null = null;
  // Twice at most: an identity unlinked by its owner between the insert and
  // the owner look-up is free again, and the second insert takes it.
  for (let attempt = 0; attempt < 2 && owner === null; attempt += 1) {
    const added = await store.addIdentity({
      account_id: account.id,
      kind: identity.kind,
      value: identity.value,
      verified: true,
      created_at: nowMs,
    });
    if (added.status !== 'linked_elsewhere') {
      const current = await withPrimaryAddress(store, account, identity, nowMs);
      return { status: added.status === 'added' ? 'linked' : 'already_linked', account: current };
    }
    owner = await store.findAccountByIdentity(identity.kind, identity.value);
  }
  if (owner === null) throw new OcError('internal_error', 'link: the identity changed hands while linking; try again');
  // Merged into this account by a concurrent transfer since addIdentity looked.
  if (owner.id === account.id) return { status: 'already_linked', account: (await store.findAccount(account.id)) ?? account };
  refuseHeldAccount(owner);
  if (input.transfer === null) throw linkedElsewhere(identity, owner, await store.transferHoldings(owner.id));

  const holdings = await store.transferHoldings(owner.id);
  const proven = holdings?.identities.find((held) => held.kind === identity.kind && held.value === identity.value);
  let merge: MergeResult;
  try {
    if (proven === undefined) throw new MergeRefused('selection_changed', 'link: the proven identity left the other account meanwhile');
    const identityIds = [...new Set([proven.id, ...input.transfer.identities])];
    merge = await store.mergeAccounts(owner.id, account.id, nowMs, { identityIds, appIds: input.transfer.apps });
  } catch (error) {
    // Two transfers of the same account raced: the loser finds the owner
    // already merged. When it was merged into this account, the identity is here.
    const holder = await store.findAccountByIdentity(identity.kind, identity.value);
    if (holder?.id === account.id) return { status: 'already_linked', account: (await store.findAccount(account.id)) ?? account };
    if (error instanceof MergeRefused) {
      if (error.code === 'account_disabled')
        throw new OcError('account_disabled', 'link: an account of this transfer is disabled by the operator');
      throw new OcError(
        'transfer_changed',
        'link: the other account no longer holds what confirm_transfer names; link again to see what it holds now',
      );
    }
    throw error;
  }
  return {
    status: 'merged',
    account: await withPrimaryAddress(store, merge.account, identity, nowMs),
    merged: { did_oc: didOf(owner.id) },
    moved: merge.moved,
    removed: merge.removed,
  };
}

/**
 * DELETE /api/auth/identities?id=. The store refuses, atomically, to remove
 * the last identity (a way in must remain) and keeps `primary_btc` and the
 * display kind pointing at identities the account still holds. Sessions that
 * were signed in through the identity are revoked with it, in every browser,
 * except `currentSessionJti`, the session doing the unlink.
 *
 * @throws OcError `not_found` (no such identity on this account, also for an
 *   identity of another account: no hint that it exists), `last_identity`.
 */
export async function unlinkIdentity(
  store: AccountStore,
  accountId: string,
  identityId: string,
  nowMs: number,
  currentSessionJti?: string,
): Promise<void> {
  const result = await store.removeIdentity(accountId, identityId, nowMs, currentSessionJti);
  if (result === 'not_found') throw new OcError('not_found', 'identities: this account has no identity with this id');
  if (result === 'last_identity') {
    throw new OcError('last_identity', 'identities: this is the last identity of the account; link another one first');
  }
}
