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
import { OcError } from '../errors.js';
import { didOf } from '../session/accounts.js';
import type { AccountRecord, IdentityKind, IdentityRecord, AccountStore } from '../storage/index.js';
import type { ProvenIdentity } from './step-up.js';

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

export interface LinkInput {
  /** The active, canonical account. */
  readonly account: AccountRecord;
  /** Just proven by the caller. */
  readonly identity: ProvenIdentity;
  /** docs/protocol.md §2: with true, an identity held by another account merges that account into this one. */
  readonly confirmTransfer: boolean;
  readonly nowMs: number;
}

export type LinkOutcome =
  | { readonly status: 'linked' | 'already_linked'; readonly account: AccountRecord }
  /** `merged` is the did of the account that was merged into `account` (it exists no more on its own). */
  | { readonly status: 'merged'; readonly account: AccountRecord; readonly merged: { readonly did_oc: string } };

/**
 * The refusal of a proven identity that another account holds. It names that
 * account (its did and display name): the caller has just proven the
 * identity, so could sign in to it anyway, and needs to know what a transfer
 * would merge.
 */
export function linkedElsewhere(identity: ProvenIdentity, holder?: AccountRecord): OcError {
  const options = holder === undefined ? undefined : { holder: { did_oc: didOf(holder.id), display_name: holder.display_name } };
  return identity.kind === 'btc'
    ? new OcError('address_linked_elsewhere', 'link: another account holds this address; send confirm_transfer: true with a fresh proof to merge it into this one', options)
    : new OcError('email_linked_elsewhere', 'link: another account holds this e-mail; send confirm_transfer: true with a fresh proof to merge it into this one', options);
}

/** A linked address becomes the primary one when the account has none (docs/protocol.md §2 display default). */
async function withPrimaryAddress(store: AccountStore, account: AccountRecord, identity: ProvenIdentity, nowMs: number): Promise<AccountRecord> {
  if (identity.kind !== 'btc' || account.primary_btc !== null) return account;
  return (await store.updateAccount(account.id, { primary_btc: identity.value }, nowMs)) ?? account;
}

/**
 * Links `identity` to `account`:
 * - free: linked, verified (the caller just proved it);
 * - already on this account: a no-op;
 * - on another account: 409 `address_linked_elsewhere` / `email_linked_elsewhere`,
 *   unless `confirmTransfer`, when the other account is merged into this one
 *   (docs/protocol.md §2 "dual proof": this account's live session plus the fresh
 *   proof of one of the other's identities). The store moves its identities,
 *   revokes its sessions and puts this account in its place in every roster.
 */
export async function linkIdentity(store: AccountStore, input: LinkInput): Promise<LinkOutcome> {
  const { account, identity, nowMs } = input;
  let owner: AccountRecord | null = null;
  // Twice at most: an identity unlinked by its owner between the insert and
  // the owner look-up is free again, and the second insert takes it.
  for (let attempt = 0; attempt < 2 && owner === null; attempt += 1) {
    const added = await store.addIdentity({ account_id: account.id, kind: identity.kind, value: identity.value, verified: true, created_at: nowMs });
    if (added.status !== 'linked_elsewhere') {
      const current = await withPrimaryAddress(store, account, identity, nowMs);
      return { status: added.status === 'added' ? 'linked' : 'already_linked', account: current };
    }
    owner = await store.findAccountByIdentity(identity.kind, identity.value);
  }
  if (owner === null) throw new OcError('internal_error', 'link: the identity changed hands while linking; try again');
  // Merged into this account by a concurrent transfer since addIdentity looked.
  if (owner.id === account.id) return { status: 'already_linked', account: (await store.findAccount(account.id)) ?? account };
  if (!input.confirmTransfer) throw linkedElsewhere(identity, owner);

  let survivor: AccountRecord;
  try {
    survivor = (await store.mergeAccounts(owner.id, account.id, nowMs)).account;
  } catch (error) {
    // Two transfers of the same account raced: the loser finds the owner
    // already merged. When it was merged into this account, the identity is here.
    const holder = await store.findAccountByIdentity(identity.kind, identity.value);
    if (holder?.id === account.id) return { status: 'already_linked', account: (await store.findAccount(account.id)) ?? account };
    throw error;
  }
  return { status: 'merged', account: await withPrimaryAddress(store, survivor, identity, nowMs), merged: { did_oc: didOf(owner.id) } };
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
export async function unlinkIdentity(store: AccountStore, accountId: string, identityId: string, nowMs: number, currentSessionJti?: string): Promise<void> {
  const result = await store.removeIdentity(accountId, identityId, nowMs, currentSessionJti);
  if (result === 'not_found') throw new OcError('not_found', 'identities: this account has no identity with this id');
  if (result === 'last_identity') {
    throw new OcError('last_identity', 'identities: this is the last identity of the account; link another one first');
  }
}
