/**
 * The storage interfaces of the service: one method per domain action, so the
 * session, sign-in and HTTP layers never write SQL and never learn which
 * engine they run on. They come in areas (accounts and identities, sessions
 * and rosters, nonces, keys and settings, e-mail codes, Connect, statistics),
 * each implemented in its own file over one shared executor (executor.ts) and
 * each the only thing a service is handed; {@link Store} is all of them
 * together, as kysely-store.ts builds it for SQLite and PostgreSQL.
 * test/storage.conformance.test.ts holds every area to it on both engines and
 * both SQLite drivers.
 *
 * Conventions:
 * - Every time is a number: milliseconds since the epoch. The caller passes
 *   the clock (`now`, `at`) so tests can freeze time; the store never reads
 *   the wall clock for domain decisions.
 * - Records use the column names (snake_case), as the wire formats do.
 * - "Not found" is `null`. Expected conflicts (an identity linked elsewhere,
 *   removing the last identity) are ordinary results, not exceptions.
 *   Exceptions mean programmer misuse (an upper-case e-mail, a malformed
 *   account id, merging an account into itself) or a broken database.
 */
import type {
  AccountKind,
  AttestEventKind,
  DisplayIdentityKind,
  IdentityKind,
  WebAuthnAuthenticatorType,
  WebAuthnDeviceType,
} from './schema.js';
import type { DatabaseEngine } from './database.js';

export type {
  AccountKind,
  AttestEventKind,
  DisplayIdentityKind,
  IdentityKind,
  WebAuthnAuthenticatorType,
  WebAuthnDeviceType,
} from './schema.js';

/** Milliseconds since 1970-01-01T00:00:00Z. */
export type EpochMilliseconds = number;

export interface AccountRecord {
  /** 32 lowercase hex; the JWT `sub`, `did_oc` is `did:oc:` + id (docs/protocol.md §2). */
  readonly id: string;
  readonly kind: AccountKind;
  readonly display_name: string | null;
  readonly display_identity_kind: DisplayIdentityKind | null;
  readonly primary_btc: string | null;
  /** The surviving account when this one was merged (docs/protocol.md §2). */
  readonly merged_into: string | null;
  readonly created_at: EpochMilliseconds;
  readonly updated_at: EpochMilliseconds;
  /** Set by an operator (`oc-host accounts disable`): the account cannot sign in or be switched to. */
  readonly disabled_at: EpochMilliseconds | null;
  /** The account was deleted; the row stays as a tombstone so its id is never issued again. */
  readonly deleted_at: EpochMilliseconds | null;
}

export interface IdentityRecord {
  readonly id: string;
  readonly account_id: string;
  readonly kind: IdentityKind;
  /**
   * btc: the address; email: the lowercased address; oauth: `<provider>:<sub>`;
   * connect: `<app_id>:<user_id>` (docs/protocol.md §2).
   */
  readonly value: string;
  readonly verified: boolean;
  readonly created_at: EpochMilliseconds;
}

export interface SessionRecord {
  readonly jti: string;
  /** Lowercase hex SHA-256 of the JWT currently issued for this row (docs/protocol.md §3). */
  readonly token_hash: string;
  readonly account_id: string;
  /** NULL only for rows that predate multi-account (docs/protocol.md §3). */
  readonly roster_id: string | null;
  /** `bip322`, `email_otp`, `oauth:<provider>`, `passkey` (docs/protocol.md §3). */
  readonly signing_method: string | null;
  readonly created_at: EpochMilliseconds;
  /** created_at + 30 days; a switch or re-mint never extends it. */
  readonly expires_at: EpochMilliseconds;
  readonly last_seen_at: EpochMilliseconds;
  readonly revoked_at: EpochMilliseconds | null;
  readonly step_up_at: EpochMilliseconds | null;
  readonly sudo_at: EpochMilliseconds | null;
}

/** A session row as the account's device list shows it (GET /api/auth/sessions). */
export interface DeviceSessionRecord extends SessionRecord {
  /** A coarse device label ("Chrome 156 on Linux"), or null. */
  readonly device: string | null;
  /** An IPv4 /24 or IPv6 /48, or null; never a full address. */
  readonly network: string | null;
}

/** One live member of a roster, with what /api/auth/me shows of it. */
export interface RosterMemberRecord {
  readonly session: SessionRecord;
  readonly account: AccountRecord;
  /** What the account's identities say, read in the same statement (GET /api/auth/me). */
  readonly facts?: AccountFacts;
}

/** Facts about an account's identities that its view shows without listing them. */
export interface AccountFacts {
  readonly has_email: boolean;
  /** The npub of a linked Nostr key (`nostr:<npub>` provider identity), or null. */
  readonly nostr_npub: string | null;
}

export interface LiveRosterRecord {
  readonly current: RosterMemberRecord;
  readonly members: readonly RosterMemberRecord[];
}

export interface SigningKeyRecord {
  /** RFC 7638 thumbprint of the public key (docs/protocol.md §3). */
  readonly kid: string;
  /** JSON text of the Ed25519 private JWK. */
  readonly private_jwk: string;
  /** JSON text of the Ed25519 public JWK. */
  readonly public_jwk: string;
  readonly created_at: EpochMilliseconds;
  /** From this time on the key may sign; before it, it is only published. */
  readonly activated_at: EpochMilliseconds;
  readonly retired_at: EpochMilliseconds | null;
}

export interface EmailCodeRecord {
  /** Lowercased. */
  readonly email: string;
  /** Keyed hash of the 6-digit code; the code itself is never stored (docs/protocol.md §6). */
  readonly code_hash: string;
  readonly token: string;
  readonly expires_at: EpochMilliseconds;
  /** Tries so far that carried this code's `token` (the browser that started it). */
  readonly attempts: number;
  /** Tries so far without a token: a budget of their own, so they cannot use up `attempts`. */
  readonly tokenless_attempts: number;
  readonly created_at: EpochMilliseconds;
}

export interface ConnectAppRecord {
  readonly id: string;
  readonly owner_account_id: string;
  readonly name: string;
  readonly key_hash: string;
  readonly created_at: EpochMilliseconds;
  readonly rotated_at: EpochMilliseconds | null;
  /** Where the app's webhooks go (docs/protocol.md §6 "Webhooks"), or null. */
  readonly webhook_url: string | null;
}

/** A registered security key or passkey (docs/protocol.md §6): its public key and what the host learnt about it. */
export interface WebAuthnCredentialRecord {
  /** The credential id, base64url; unique on this host. */
  readonly id: string;
  readonly account_id: string;
  /** COSE public key, base64url. */
  readonly public_key: string;
  /** The authenticator's signature counter as last seen; 0 for authenticators that keep none. */
  readonly counter: number;
  readonly transports: readonly string[];
  readonly label: string;
  readonly authenticator_type: WebAuthnAuthenticatorType;
  /** Backup eligibility, fixed at registration (WebAuthn Level 3: the BE flag never changes). */
  readonly device_type: WebAuthnDeviceType;
  /** Backup state (the BS flag) as last seen; it may change between uses. */
  readonly backed_up: boolean;
  /** The authenticator verified the person (PIN, biometrics) when the credential was made. */
  readonly user_verified: boolean;
  /** A sign-in passkey; otherwise the key only steps up an account already signed in. */
  readonly sign_in: boolean;
  /** The WebAuthn user handle it was created for, base64url. */
  readonly user_handle: string;
  readonly aaguid: string;
  readonly created_at: EpochMilliseconds;
  readonly last_used_at: EpochMilliseconds | null;
}

/** What a successful assertion writes: the new counter, only if the stored one is still `expected_counter`. */
export interface WebAuthnUse {
  readonly expected_counter: number;
  readonly counter: number;
  readonly backed_up: boolean;
  readonly at: EpochMilliseconds;
}

/** One security event of an account (docs/protocol.md §6 "Activity"). */
export interface ActivityRecord {
  /** 32 lowercase hex: the time, a per-process sequence and random bits, so ids of one instance sort as recorded. */
  readonly id: string;
  readonly account_id: string;
  readonly at: EpochMilliseconds;
  readonly kind: string;
  /** A flat object of strings, numbers, booleans, nulls and string arrays. */
  readonly detail: Readonly<Record<string, ActivityValue>>;
}

export type ActivityValue = string | number | boolean | null | readonly string[];

/** Where a page of activity starts: strictly older than this event. */
export interface ActivityCursor {
  readonly at: EpochMilliseconds;
  readonly id: string;
}

/** docs/protocol.md §6 `/api/family-stats`, without `ok` and `generated_at`. */
export interface FamilyStats {
  /** Canonical accounts only: merged ones are not counted twice. */
  readonly accounts: { readonly total: number; readonly btc: number; readonly federated: number };
  /** Unrevoked, unexpired session rows. */
  readonly sessions: { readonly active: number };
  /** Rosters holding two or more live rows. */
  readonly rosters: { readonly multi_account: number };
  readonly attest: { readonly checks_24h: number; readonly verifies_24h: number };
}

/** Rows deleted by {@link Store.purgeExpired}. */
export interface PurgeCounts {
  readonly sessions: number;
  readonly nonces: number;
  readonly email_codes: number;
  readonly attest_events: number;
  readonly activity: number;
  readonly webhook_deliveries: number;
}

export interface NewAccount {
  /** 32 lowercase hex; generated when absent. */
  readonly id?: string;
  readonly kind: AccountKind;
  readonly display_name?: string | null;
  readonly display_identity_kind?: DisplayIdentityKind | null;
  readonly primary_btc?: string | null;
  readonly created_at: EpochMilliseconds;
}

export interface NewIdentity {
  /** Random; generated when absent. */
  readonly id?: string;
  readonly kind: IdentityKind;
  /** E-mail addresses must already be lowercased (the store checks, it does not fold). */
  readonly value: string;
  readonly verified: boolean;
  readonly created_at: EpochMilliseconds;
}

export type CreateAccountResult =
  | { readonly created: true; readonly account: AccountRecord; readonly identity: IdentityRecord }
  /**
   * The identity already belonged to an account (perhaps created a moment ago
   * by a concurrent sign-in): `account` is that owner's canonical account and
   * `identity` the stored identity. Nothing was written.
   */
  | { readonly created: false; readonly account: AccountRecord; readonly identity: IdentityRecord };

export type AddIdentityResult =
  | { readonly status: 'added'; readonly identity: IdentityRecord }
  /** The identity was already linked to this account (or to an account merged into it). */
  | { readonly status: 'already_linked'; readonly identity: IdentityRecord }
  /** Another account holds it: 409 `address_linked_elsewhere` / `email_linked_elsewhere` (docs/protocol.md §2). */
  | { readonly status: 'linked_elsewhere'; readonly identity: IdentityRecord };

/** `last_identity`: the account would be left with nothing to sign in with (409 `last_identity`). */
export type RemoveIdentityResult = 'removed' | 'not_found' | 'last_identity';

/** Fields left out stay as they are; `null` clears one. */
export interface AccountPatch {
  readonly display_name?: string | null;
  readonly display_identity_kind?: DisplayIdentityKind | null;
  readonly primary_btc?: string | null;
}

/** An app or a security key as a transfer names it: its id and the name its owner gave it. */
export interface NamedItem {
  readonly id: string;
  readonly name: string;
}

/** What an account holds that a merge could move (docs/protocol.md §2 "Merging"). */
export interface TransferHoldings {
  readonly identities: IdentityRecord[];
  /** Security keys and passkeys: never moved, removed with the account. */
  readonly keys: NamedItem[];
  /** Connect apps the account owns. */
  readonly apps: NamedItem[];
}

/**
 * What a merge moves from the merged account (docs/protocol.md §2
 * "Merging"): the identity just proven and whatever else the person
 * confirmed by id. Everything else the merged account held is removed.
 */
export interface MergeSelection {
  readonly identityIds: readonly string[];
  readonly appIds: readonly string[];
}

/**
 * Why a merge was refused: an account in it is disabled or deleted
 * (`account_disabled`), or the selection names something the merged
 * account does not hold (`selection_changed`).
 */
export class MergeRefused extends Error {
  constructor(
    readonly code: 'account_disabled' | 'selection_changed',
    message: string,
  ) {
    super(message);
    this.name = 'MergeRefused';
  }
}

export interface MergeResult {
  /** The surviving canonical account, after the merge. */
  readonly account: AccountRecord;
  readonly moved_identities: number;
  /** Rows of the merged account that the merge revoked (all of them: no roster gains the survivor). */
  readonly revoked_sessions: number;
  /** What arrived in the survivor. */
  readonly moved: { readonly identities: IdentityRecord[]; readonly apps: NamedItem[] };
  /** What the merged account held and the merge removed. */
  readonly removed: { readonly identities: IdentityRecord[]; readonly keys: NamedItem[]; readonly apps: NamedItem[] };
}

export interface NewSession {
  readonly jti: string;
  readonly token_hash: string;
  readonly account_id: string;
  readonly roster_id: string | null;
  readonly signing_method: string | null;
  /** Also the time at which a replaced row of the same (roster, account) is revoked. */
  readonly created_at: EpochMilliseconds;
  readonly expires_at: EpochMilliseconds;
  /** Defaults to created_at. */
  readonly last_seen_at?: EpochMilliseconds;
  readonly step_up_at?: EpochMilliseconds | null;
  readonly sudo_at?: EpochMilliseconds | null;
  /**
   * The identity the sign-in proved; the row remembers it, so that unlinking
   * that identity revokes the row (removeIdentity).
   */
  readonly opened_by?: { readonly kind: IdentityKind; readonly value: string };
  /** A coarse device label; absent or null when unknown. */
  readonly device?: string | null;
  /** An IPv4 /24 or IPv6 /48; absent or null when unknown. */
  readonly network?: string | null;
}

/** A revoked session whose token has not expired yet (GET /api/auth/revocations). */
export interface RevocationRecord {
  readonly jti: string;
  readonly revoked_at: EpochMilliseconds;
  readonly expires_at: EpochMilliseconds;
}

/** Step-up claims to change on a re-mint; fields left out stay as they are. */
export interface SessionFreshness {
  readonly step_up_at?: EpochMilliseconds | null;
  readonly sudo_at?: EpochMilliseconds | null;
}

export interface NewSigningKey {
  readonly kid: string;
  readonly private_jwk: string;
  readonly public_jwk: string;
  readonly created_at: EpochMilliseconds;
  readonly activated_at: EpochMilliseconds;
}

export interface NewEmailCode {
  readonly email: string;
  readonly code_hash: string;
  readonly token: string;
  readonly expires_at: EpochMilliseconds;
  readonly created_at: EpochMilliseconds;
}

export interface NewConnectApp {
  /** Generated (32 lowercase hex) when absent; it must not contain `:` (docs/protocol.md §2). */
  readonly id?: string;
  readonly owner_account_id: string;
  readonly name: string;
  readonly key_hash: string;
  readonly created_at: EpochMilliseconds;
}

export interface MergedAccountRecord {
  readonly id: string;
  readonly created_at: EpochMilliseconds;
  readonly last_signed_in_at: EpochMilliseconds | null;
}

export interface PurgeOptions {
  /**
   * How long revoked and expired session rows are kept before deletion, for
   * inspection after an incident. Default {@link DEFAULT_SESSION_RETENTION_MS}.
   */
  readonly sessionRetentionMs?: number;
  /** How long activity events are kept. Default {@link DEFAULT_ACTIVITY_RETENTION_MS}. */
  readonly activityRetentionMs?: number;
}

/** Activity events are kept 180 days unless ACTIVITY_RETENTION_DAYS says otherwise. */
export const DEFAULT_ACTIVITY_RETENTION_MS = 180 * 24 * 60 * 60 * 1000;

/** Revoked or expired session rows are deleted after 7 days. */
export const DEFAULT_SESSION_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** Finished webhook deliveries stay in the delivery log 30 days (docs/protocol.md §6 "Webhooks"). */
export const WEBHOOK_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** Attestation events are kept 48 hours: twice the 24-hour window they are counted in. */
export const ATTEST_EVENT_RETENTION_MS = 48 * 60 * 60 * 1000;

/** merged_into chains are followed at most this far (mergeAccounts keeps them at length 1). */
export const MAX_MERGE_DEPTH = 8;

/** The storage setting that keeps a Connect-provisioned account's e-mail hint (docs/protocol.md §6 "Connect"). */
export function emailHintSetting(accountId: string): string {
  return `connect_email_hint:${accountId}`;
}

/** Accounts and their identities, merges included (docs/protocol.md §2). */
export interface AccountStore {
  /**
   * Creates an account and its first identity atomically. When the identity
   * already exists, returns its owner's canonical account instead (so
   * concurrent first sign-ins with one address end with one account).
   */
  createAccountWithIdentity(input: { readonly account: NewAccount; readonly identity: NewIdentity }): Promise<CreateAccountResult>;

  /** The account row as stored, merged or not. */
  findAccount(accountId: string): Promise<AccountRecord | null>;

  /** Follows merged_into to the surviving account. Throws on a loop or a chain longer than MAX_MERGE_DEPTH. */
  resolveCanonicalAccount(accountId: string): Promise<AccountRecord | null>;

  /** The ids of the accounts merged into this one (their `merged_into`), sorted. */
  listMergedInto(accountId: string): Promise<string[]>;

  /** The accounts merged into this one, with when each was created and last signed in (null when no session row is left). */
  listMergedAccounts(accountId: string): Promise<MergedAccountRecord[]>;

  /** The canonical account that holds this identity. */
  findAccountByIdentity(kind: IdentityKind, value: string): Promise<AccountRecord | null>;

  /** Oldest first. */
  listIdentities(accountId: string): Promise<IdentityRecord[]>;

  addIdentity(input: NewIdentity & { readonly account_id: string }): Promise<AddIdentityResult>;

  /**
   * Unlinks one identity, never the account's last one. When the removed
   * identity was the primary address, the oldest remaining address takes its
   * place (or none); when no identity of the display kind remains, the display
   * kind is cleared so the docs/protocol.md §2 default applies.
   */
  /**
   * Unlinks an identity (refusing the last one) and, in the same transaction,
   * revokes every live session that was signed in through it, except
   * `keepSessionJti` (the session doing the unlink).
   */
  removeIdentity(accountId: string, identityId: string, now: EpochMilliseconds, keepSessionJti?: string): Promise<RemoveIdentityResult>;

  updateAccount(accountId: string, patch: AccountPatch, now: EpochMilliseconds): Promise<AccountRecord | null>;

  /**
   * Merges `fromId` into `intoId` (resolved to its canonical account) in one
   * transaction (docs/protocol.md §2, docs/api.md states table):
   * - only what `selection` names moves to `into`: identities and Connect
   *   apps of `from`, by id (the caller puts the proven identity there). The
   *   rest of `from`'s identities and apps, and every security key and
   *   passkey of `from`, are removed, so nothing reaches `into` that the
   *   person merging did not see and accept (docs/protocol.md §2 "Merging");
   * - refused with {@link MergeRefused}: `account_disabled` when either
   *   account is disabled or deleted, `selection_changed` when the selection
   *   names an identity or app `from` does not hold;
   * - accounts merged into `from` earlier are repointed to `into`, so chains
   *   stay one step long;
   * - `from.merged_into` is set; `into` adopts `from`'s display name where its
   *   own is empty, and its primary address when that address moved;
   * - every session row of `from` is revoked, and no roster gains a row for
   *   `into`: a merge gives no one access they did not have. Rosters that
   *   held `from` simply lose it on their next /me; `into` stays only where
   *   it already was (the roster of the session that performed the merge).
   * A JWT issued for `from` stops working on the host at once; its holder
   * signs in again (proving one of the moved identities) and lands in the
   * canonical account.
   */
  mergeAccounts(fromId: string, intoId: string, now: EpochMilliseconds, selection: MergeSelection): Promise<MergeResult>;

  /** What `accountId` holds that a merge of it could move or would remove; null for an unknown account. */
  transferHoldings(accountId: string): Promise<TransferHoldings | null>;

  /**
   * Deletes an account (docs/protocol.md §2 "Disabling and deleting") in one
   * transaction, together with the accounts merged into it earlier: every
   * session row is revoked (and forgets its device and network; the rows stay
   * until their tokens expire, for the revocation feed), and its identities,
   * security keys, Connect apps, activity, pending e-mail codes and Connect
   * e-mail hints are removed. The account rows stay as tombstones
   * (`deleted_at` set, names cleared), so the ids are never issued again, and
   * the identities are free for new sign-ups. Null when the account is
   * unknown, merged or already deleted.
   */
  deleteAccount(accountId: string, now: EpochMilliseconds): Promise<DeletedAccountRecord | null>;

  /**
   * Sets (`disabled`) or clears `disabled_at`; disabling revokes every live
   * session of the account in the same transaction. `changed` is false when
   * the account already was so. Null when the account is unknown, merged or
   * deleted.
   */
  setAccountDisabled(
    accountId: string,
    disabled: boolean,
    now: EpochMilliseconds,
  ): Promise<{ readonly account: AccountRecord; readonly changed: boolean; readonly revoked_sessions: number } | null>;
}

/** What {@link AccountStore.deleteAccount} removed. */
export interface DeletedAccountRecord {
  /** The tombstone. */
  readonly account: AccountRecord;
  /** Accounts merged into it earlier, deleted with it. */
  readonly merged_accounts: number;
  readonly identities: number;
  readonly revoked_sessions: number;
  readonly keys: number;
  readonly connect_apps: number;
  readonly activity: number;
}

/** Session rows and the rosters they form (docs/protocol.md §3). */
export interface SessionStore {
  /**
   * Inserts a session row. For a roster row, in the same transaction, first
   * revokes every unrevoked row of that (roster, account): expired ones (so
   * the live-row unique index admits the new row) and a live one (a sign-in of
   * an account already in the roster is a re-authentication, docs/api.md).
   * Safe under concurrency: parallel inserts for one (roster, account) all
   * succeed and leave exactly one live row, the last one committed.
   * Throws when the account does not exist or has been merged.
   */
  insertSession(session: NewSession): Promise<SessionRecord>;

  /** The live row holding this token hash (one indexed lookup). */
  findLiveSessionByTokenHash(tokenHash: string, now: EpochMilliseconds): Promise<SessionRecord | null>;

  /**
   * The hot path of every authenticated request: the live row holding this
   * token hash together with its account row (merged or not), in one query.
   */
  findLiveSessionWithAccount(tokenHash: string, now: EpochMilliseconds): Promise<RosterMemberRecord | null>;

  /**
   * GET /api/auth/me in one statement: the live row holding this token hash
   * (`current`) and every live member of its roster, itself included, oldest
   * first. A row without a roster comes back as its only member.
   */
  findLiveRosterByTokenHash(tokenHash: string, now: EpochMilliseconds): Promise<LiveRosterRecord | null>;

  findLiveSessionInRoster(rosterId: string, accountId: string, now: EpochMilliseconds): Promise<SessionRecord | null>;

  /** Every live row of the roster with its account, in the order they joined. */
  listLiveRoster(rosterId: string, now: EpochMilliseconds): Promise<RosterMemberRecord[]>;

  /**
   * Points an unrevoked row at a newly minted JWT (switch, step-up, account
   * edit) and optionally changes its step-up claims. Never changes expires_at.
   * Null when the row is gone or revoked (e.g. a concurrent logout won).
   */
  updateSessionToken(jti: string, tokenHash: string, freshness?: SessionFreshness): Promise<SessionRecord | null>;

  /** Changes the step-up claims of an unrevoked row without re-minting its token. Null when the row is gone or revoked. */
  updateSessionFreshness(jti: string, freshness: SessionFreshness): Promise<SessionRecord | null>;

  /**
   * Records one more token of the row `jti` for a pinned tab: its hash and
   * its own jti. Keeps the `keep` newest live tokens of the row and
   * supersedes older ones (they stop working and the revocation feed lists
   * them), forgetting superseded ones past `keep`. False when the row is gone
   * or revoked (nothing is recorded).
   */
  insertTabToken(
    jti: string,
    token: { readonly hash: string; readonly jti: string },
    now: EpochMilliseconds,
    keep: number,
  ): Promise<boolean>;

  /**
   * Supersedes every live tab token of the row `jti` (but the one whose hash
   * is `except`): they stop working on the host and the revocation feed lists
   * them from `now`. Returns how many.
   */
  supersedeTabTokens(jti: string, now: EpochMilliseconds, except?: string): Promise<number>;

  /**
   * Like {@link findLiveSessionWithAccount}, for a token recorded by
   * {@link insertTabToken}: a live one, or with `superseded` also one
   * superseded while its row lives on.
   */
  findLiveSessionByTabToken(
    tokenHash: string,
    now: EpochMilliseconds,
    options?: { readonly superseded?: boolean },
  ): Promise<RosterMemberRecord | null>;

  /** Sets last_seen_at of an unrevoked row; a no-op when it is already as recent. */
  touchSession(jti: string, now: EpochMilliseconds): Promise<void>;

  /** True when this call revoked the row. */
  revokeSession(jti: string, now: EpochMilliseconds): Promise<boolean>;

  /** Revokes the account's row(s) in one roster (logout scope=current). Returns the rows revoked. */
  revokeAccountInRoster(rosterId: string, accountId: string, now: EpochMilliseconds): Promise<number>;

  /** Revokes every row of the roster (logout scope=all). Returns the rows revoked. */
  revokeRoster(rosterId: string, now: EpochMilliseconds): Promise<number>;

  /** Revokes every row of the account, in every roster. Returns the rows revoked. */
  revokeAllForAccount(accountId: string, now: EpochMilliseconds): Promise<number>;

  /**
   * Tokens revoked after `after` (by revocation time, then jti) whose expiry
   * is still ahead of `now`, oldest revocation first, at most `limit`: revoked
   * rows, superseded tab tokens, and the tab tokens of revoked rows (each
   * with its own jti).
   */
  listRevocations(
    after: { readonly at: EpochMilliseconds; readonly jti: string } | null,
    now: EpochMilliseconds,
    limit: number,
  ): Promise<RevocationRecord[]>;

  /** Every live row of the account, in every roster, most recently seen first, with its device facts. */
  /** Every session row of the account, revoked and expired ones not yet purged included, newest first, at most `limit`. */
  listSessionsOfAccount(accountId: string, limit: number): Promise<DeviceSessionRecord[]>;

  listLiveSessionsOfAccount(accountId: string, now: EpochMilliseconds): Promise<DeviceSessionRecord[]>;

  /** Revokes the row `jti` when it is a live row of the account. True when this call revoked it. */
  revokeSessionOfAccount(accountId: string, jti: string, now: EpochMilliseconds): Promise<boolean>;

  /** Revokes every live row of the account except `keepJti`. Returns the rows revoked. */
  revokeOtherSessionsOfAccount(accountId: string, keepJti: string, now: EpochMilliseconds): Promise<number>;
}

/** Single-use challenge nonces (docs/protocol.md §5). */
export interface NonceStore {
  /**
   * Marks a nonce used. True for exactly one caller, ever (until the row is
   * purged after `expiresAt`, when the challenge itself has expired). A nonce
   * that has already expired is refused.
   */
  consumeNonce(nonce: string, expiresAt: EpochMilliseconds, now: EpochMilliseconds): Promise<boolean>;
}

/** Settings and the signing key ring (docs/protocol.md §1, §3). */
export interface KeyStore {
  /**
   * The value of `key`; when absent, stores `create()` and returns it. Instances
   * racing on an empty database all get the one value that was stored first.
   */
  getOrCreateSetting(key: string, create: () => string): Promise<string>;

  getSetting(key: string): Promise<string | null>;

  /** Every key, retired ones too, newest activation first. Publish the ones still in their overlap window. */
  listSigningKeys(): Promise<SigningKeyRecord[]>;

  /** The key that signs now: the newest unretired key whose activation has come. */
  findActiveSigningKey(now: EpochMilliseconds): Promise<SigningKeyRecord | null>;

  /** False when a key with this kid already exists (the same key, as kid is its thumbprint). */
  insertSigningKey(key: NewSigningKey): Promise<boolean>;

  /** True when this call retired the key. */
  retireSigningKey(kid: string, at: EpochMilliseconds): Promise<boolean>;
}

/** E-mail one-time codes (docs/protocol.md §6). */
export interface EmailCodeStore {
  /** Stores the code for its address, replacing (killing) an older one; both try counts start at 0. */
  putEmailCode(code: NewEmailCode): Promise<void>;

  findEmailCode(email: string): Promise<EmailCodeRecord | null>;

  /**
   * Counts one try atomically, in `attempts` (`kind: 'token'`) or in
   * `tokenless_attempts`, and only on the code whose token is `token` (the
   * one the caller read), so a try never lands on a newer code that replaced
   * it. Returns the new count of that kind, or null when no such code exists.
   */
  incrementEmailCodeAttempts(email: string, token: string, kind: 'token' | 'tokenless'): Promise<number | null>;

  /**
   * Deletes the address's code. With `codeHash`, only if the stored code is
   * that one. True for exactly one caller: the verifier that gets true has
   * consumed the code (single use, docs/protocol.md §6).
   */
  deleteEmailCode(email: string, codeHash?: string): Promise<boolean>;
}

/** Connect apps and their API keys (docs/protocol.md §6). */
export interface ConnectStore {
  createConnectApp(app: NewConnectApp): Promise<ConnectAppRecord>;

  /** Oldest first. */
  listConnectApps(ownerAccountId: string): Promise<ConnectAppRecord[]>;

  findConnectAppByKeyHash(keyHash: string): Promise<ConnectAppRecord | null>;

  /** False when no such app belongs to the owner. */
  rotateConnectAppKey(appId: string, ownerAccountId: string, newKeyHash: string, at: EpochMilliseconds): Promise<boolean>;

  /** False when no such app belongs to the owner. Its webhook deliveries go with it. */
  deleteConnectApp(appId: string, ownerAccountId: string): Promise<boolean>;

  /** Sets or clears the app's webhook endpoint; null when no such app belongs to the owner. */
  setConnectAppWebhook(appId: string, ownerAccountId: string, url: string | null): Promise<ConnectAppRecord | null>;
}

/** A webhook delivery (docs/protocol.md §6 "Webhooks"): an outbox row and its log. */
export interface WebhookDeliveryRecord {
  readonly id: string;
  readonly app_id: string;
  readonly event_type: string;
  readonly payload: string;
  readonly created_at: EpochMilliseconds;
  readonly state: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly next_attempt_at: EpochMilliseconds;
  readonly last_attempt_at: EpochMilliseconds | null;
  readonly last_status: number | null;
  readonly last_error: string | null;
  readonly delivered_at: EpochMilliseconds | null;
}

/** A claimed delivery with where it goes now (null: the app's webhook was removed since). */
export interface ClaimedWebhookDelivery extends WebhookDeliveryRecord {
  readonly url: string | null;
}

/** How one attempt ended. */
export interface WebhookAttempt {
  readonly at: EpochMilliseconds;
  readonly status: number | null;
  /** A short code (`timeout`, `connect`, `http_500`, …) or null on success. */
  readonly error: string | null;
  /** `delivered`; `retry` at `next_attempt_at`; `failed` for good. */
  readonly outcome: 'delivered' | 'retry' | 'failed';
  readonly next_attempt_at?: EpochMilliseconds;
}

/** The webhook outbox (docs/protocol.md §6 "Webhooks"). Rows are written by the account changes themselves, in their transactions. */
export interface WebhookStore {
  /**
   * Claims up to `limit` due deliveries for `owner` until `now + leaseMs`:
   * each row is taken by a compare-and-set on its lease, so across instances
   * one worker holds a delivery at a time. A lease that ran out (a worker
   * that died mid-delivery) is taken over.
   */
  claimWebhookDeliveries(owner: string, now: EpochMilliseconds, leaseMs: number, limit: number): Promise<ClaimedWebhookDelivery[]>;

  /** Records an attempt and releases the lease; false when `owner` no longer held it. */
  finishWebhookAttempt(id: string, owner: string, attempt: WebhookAttempt): Promise<boolean>;

  /** The app's deliveries, newest first. */
  listWebhookDeliveries(appId: string, limit: number): Promise<WebhookDeliveryRecord[]>;
}

/** Attestation call counts and the public statistics (docs/protocol.md §6 /api/family-stats). */
export interface StatsStore {
  /** Records `count` calls (default 1) of `kind` at `at`; callers batch them. */
  recordAttestEvent(kind: AttestEventKind, at: EpochMilliseconds, count?: number): Promise<void>;

  familyStats(now: EpochMilliseconds): Promise<FamilyStats>;
}

/** Security keys and passkeys (docs/protocol.md §6 "Security keys and passkeys"). */
export interface WebAuthnStore {
  /** False when a credential with this id is already registered (to any account): ids are unique per host. */
  insertWebAuthnCredential(credential: WebAuthnCredentialRecord): Promise<boolean>;

  /** The account's credentials, oldest first. */
  listWebAuthnCredentials(accountId: string): Promise<WebAuthnCredentialRecord[]>;

  findWebAuthnCredential(id: string): Promise<WebAuthnCredentialRecord | null>;

  /** Changes the label or the sign-in choice of the account's credential; null when the account has no such credential. */
  updateWebAuthnCredential(
    id: string,
    accountId: string,
    patch: { readonly label?: string; readonly sign_in?: boolean },
  ): Promise<WebAuthnCredentialRecord | null>;

  /** False when the account has no such credential. */
  deleteWebAuthnCredential(id: string, accountId: string): Promise<boolean>;

  /**
   * Records a use: counter, backup state and last_used_at, in one
   * compare-and-set on the counter. False when the stored counter is no
   * longer `expected_counter` (a concurrent use won) or the credential is gone.
   */
  recordWebAuthnUse(id: string, use: WebAuthnUse): Promise<boolean>;
}

/** Security events per account (docs/protocol.md §6 "Activity"). */
export interface ActivityStore {
  /** Stores one event; the id is generated when absent. */
  recordActivity(event: {
    readonly id?: string;
    readonly account_id: string;
    readonly at: EpochMilliseconds;
    readonly kind: string;
    readonly detail: Readonly<Record<string, ActivityValue>>;
  }): Promise<ActivityRecord>;

  /** The account's events, newest first, at most `limit`, older than `before` when given. */
  listActivity(accountId: string, options: { readonly before?: ActivityCursor; readonly limit: number }): Promise<ActivityRecord[]>;
}

/**
 * The whole storage: every area on one database, and what spans them
 * (purging, readiness, closing). Services take only the area they need.
 */
export interface Store
  extends AccountStore,
    SessionStore,
    NonceStore,
    KeyStore,
    EmailCodeStore,
    ConnectStore,
    StatsStore,
    WebAuthnStore,
    ActivityStore,
    WebhookStore {
  readonly engine: DatabaseEngine;

  // ---- maintenance ----

  /**
   * Deletes: session rows expired longer than the retention ago, and rows
   * revoked longer than the retention ago once they have expired (the
   * revocation feed lists a revoked row until its token expires),
   * used nonces past expiry, e-mail codes past expiry, attestation events
   * older than 48 hours, activity older than its retention.
   */
  purgeExpired(now: EpochMilliseconds, options?: PurgeOptions): Promise<PurgeCounts>;

  /** Resolves when the database answers a trivial query (readiness). */
  ping(): Promise<void>;

  /** Closes the connection or pool. Safe to call twice. */
  close(): Promise<void>;
}
