/**
 * The records the storage areas answer and the inputs they take (store.ts
 * holds the areas themselves), with the retention times of what the store
 * purges. Conventions as in store.ts: times are milliseconds since the
 * epoch, and records use the column names (snake_case).
 */
import type { AccountKind, DisplayIdentityKind, IdentityKind } from './schema.js';

export type {
  AccountKind,
  DisplayIdentityKind,
  IdentityKind,
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

/** What the host keeps of a tab token beside its row (docs/protocol.md §3 "Pinned tabs", "Freshness"). */
export interface TabTokenRecord {
  /** The step-up claims the token was minted with: the only ones the host honours for it. */
  readonly sudo_at: EpochMilliseconds | null;
  readonly step_up_at: EpochMilliseconds | null;
  /** When it was superseded; null while it is live. */
  readonly superseded_at: EpochMilliseconds | null;
}

/** A live row found by one of its tab tokens, with that token's own record. */
export interface TabTokenMemberRecord extends RosterMemberRecord {
  readonly tab: TabTokenRecord;
}

/** A tab token as it is recorded: its hash, its own jti and the claims it carries. */
export interface NewTabToken {
  readonly hash: string;
  readonly jti: string;
  readonly sudo_at?: EpochMilliseconds | null;
  readonly step_up_at?: EpochMilliseconds | null;
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
export type AccountPatch = Partial<Pick<AccountRecord, 'display_name' | 'display_identity_kind' | 'primary_btc'>>;

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

export interface NewSession
  extends Pick<SessionRecord, 'jti' | 'token_hash' | 'account_id' | 'roster_id' | 'signing_method' | 'expires_at'> {
  /** Also the time at which a replaced row of the same (roster, account) is revoked. */
  readonly created_at: EpochMilliseconds;
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

/**
 * A revoked session whose token has not expired yet (GET /api/auth/revocations),
 * or, with `access`, JWT access tokens ended early (docs/protocol.md §8
 * "Revoking API tokens"); `jti` is then the entry's id, which orders the feed.
 */
export interface RevocationRecord extends Pick<SessionRecord, 'jti' | 'expires_at'> {
  readonly revoked_at: EpochMilliseconds;
  readonly access?: {
    readonly kind: 'access_token' | 'grant' | 'client';
    /** The token's jti, the grant's reference or the client id. */
    readonly subject: string;
    /** For a grant or a client: tokens issued at or before this (Unix seconds) are ended. */
    readonly iat_before: number | null;
  };
}

/** Step-up claims to change on a re-mint; fields left out stay as they are. */
export type SessionFreshness = Pick<NewSession, 'step_up_at' | 'sudo_at'>;

/** A key as it is first stored: not retired yet. */
export type NewSigningKey = Omit<SigningKeyRecord, 'retired_at'>;

export interface MergedAccountRecord {
  readonly id: string;
  readonly created_at: EpochMilliseconds;
  readonly last_signed_in_at: EpochMilliseconds | null;
}

/** Activity events are kept 180 days unless ACTIVITY_RETENTION_DAYS says otherwise. */
export const DEFAULT_ACTIVITY_RETENTION_MS = 180 * 24 * 60 * 60 * 1000;

/** Revoked or expired session rows are deleted after 7 days. */
export const DEFAULT_SESSION_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

/** merged_into chains are followed at most this far (mergeAccounts keeps them at length 1). */
export const MAX_MERGE_DEPTH = 8;

/** The storage setting that keeps a Connect-provisioned account's e-mail hint (docs/protocol.md §6 "Connect"). */
export function emailHintSetting(accountId: string): string {
  return `connect_email_hint:${accountId}`;
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

/** Where an outbox row stands (src/platform/storage/outbox.ts): its attempts so far and the next. */
export interface OutboxState {
  readonly state: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly next_attempt_at: EpochMilliseconds;
  readonly last_attempt_at: EpochMilliseconds | null;
  readonly last_status: number | null;
  readonly last_error: string | null;
  readonly delivered_at: EpochMilliseconds | null;
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
