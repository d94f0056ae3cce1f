/**
 * Back-channel logout (docs/protocol.md §8 "Logout"): the links between a
 * host session and the clients the provider signed in through it, and the
 * outbox of logout tokens to send them.
 *
 * Whatever revokes a host session row (sign-out, device sign-out, sign-out
 * everywhere, a merge, a deletion, a hold) goes through
 * `StoreExecutor.revokeLiveSessions`, whose hook calls {@link logOutSessions}
 * in the same transaction (src/platform/storage/hooks.ts): the logouts are stored exactly when the revocation
 * is, so a crash loses neither. The provider's own session of each link ends
 * there too (its cookie finds nothing, and the tokens that expire
 * with it stop). A worker sends the outbox (src/features/oidc/backchannel.ts) with the
 * leases of src/platform/storage/outbox.ts and the backoff of the webhook outbox.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  claimRows,
  finishAttempt,
  newOutboxRow,
  outboxLog,
  outboxRecord,
  type DatabaseSchema,
  type EpochMilliseconds,
  type OutboxState,
  type StoreExecutor,
  type StoreHooks,
  type WebhookAttempt,
} from '../../platform/storage/index.js';
import { endSessionBoundGrants, listTokenRevocations } from './token-revocation-store.js';
import { deleteConsents, deleteConsentTokens } from './store.js';

/** docs/protocol.md §8 "Logout": a client the provider signed in through a host session. */
export interface OidcSessionLink {
  /** The host session row's jti. */
  readonly session_jti: string;
  readonly client_id: string;
  /** The account (32 hex), as the host session names it. */
  readonly account_id: string;
  /** The provider's `sid` of the client in its session. */
  readonly sid: string;
  /** The provider session's uid; it ends with the host session. */
  readonly op_session_uid: string;
  /** Whether the client had a `backchannel_logout_uri` when it signed in. */
  readonly backchannel: boolean;
  readonly created_at: EpochMilliseconds;
  /** The host session's expiry (set by the store from its row). */
  readonly expires_at: EpochMilliseconds;
}

/** A back-channel logout to send (docs/protocol.md §8 "Logout"): an outbox row and its log. */
export interface OidcLogoutRecord extends OutboxState {
  readonly id: string;
  readonly client_id: string;
  readonly account_id: string;
  readonly sid: string;
  readonly created_at: EpochMilliseconds;
}

export type ClaimedOidcLogout = OidcLogoutRecord;

/**
 * Back-channel logout (docs/protocol.md §8 "Logout"): which clients signed in
 * through which host session, and the outbox of logouts. Revoking a host
 * session enqueues its clients' logouts in the same transaction
 * (the storage hook below).
 */
export interface OidcLogoutStore {
  /**
   * Records that the provider signed a client in through a live host session
   * of the account (replacing an earlier link of the pair); false, and
   * nothing recorded, when that session is no longer live.
   */
  linkOidcSession(link: Omit<OidcSessionLink, 'expires_at'>): Promise<boolean>;
  /** The clients linked to a host session, by client id. */
  listOidcSessionLinks(sessionJti: string): Promise<OidcSessionLink[]>;
  /** Stores one logout; false when this (client, sid) already has one. */
  enqueueOidcLogout(logout: { client_id: string; account_id: string; sid: string }, now: EpochMilliseconds): Promise<boolean>;
  /** Claims due logouts for `owner` until `now + leaseMs`, by a compare-and-set on each row's lease. */
  claimOidcLogouts(owner: string, now: EpochMilliseconds, leaseMs: number, limit: number): Promise<ClaimedOidcLogout[]>;
  /** Records an attempt and releases the lease; false when `owner` no longer held it. */
  finishOidcLogoutAttempt(id: string, owner: string, attempt: WebhookAttempt): Promise<boolean>;
  /** The client's logouts, newest first. */
  listOidcLogouts(clientId: string, limit: number): Promise<OidcLogoutRecord[]>;
}

function toNumber(value: number | string | bigint): number {
  return Number(value);
}

/** One logout per (client, sid): a second request for the same one (the app's own end-session, then the sign-out) is dropped. */
async function enqueue(
  db: Kysely<DatabaseSchema>,
  logouts: readonly { readonly client_id: string; readonly account_id: string; readonly sid: string }[],
  now: number,
): Promise<number> {
  let added = 0;
  for (const logout of logouts) {
    const result = await db
      .insertInto('oidc_logouts')
      .values({
        id: `bcl_${randomBytes(16).toString('hex')}`,
        client_id: logout.client_id,
        account_id: logout.account_id,
        sid: logout.sid,
        created_at: now,
        ...newOutboxRow(now),
      })
      .onConflict((conflict) => conflict.columns(['client_id', 'sid']).doNothing())
      .executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0n);
  }
  return added;
}

/** Ends what the links of `pick` name: one logout per client with a back-channel URI, the provider sessions, the links. */
async function endLinks(
  db: Kysely<DatabaseSchema>,
  pick: 'session_jti' | 'account_id',
  values: readonly string[],
  now: number,
): Promise<number> {
  if (values.length === 0) return 0;
  const links = await db.selectFrom('oidc_session_links').selectAll().where(pick, 'in', values).execute();
  if (links.length === 0) return 0;
  const added = await enqueue(
    db,
    links.filter((link) => Number(link.backchannel) === 1),
    now,
  );
  const uids = [...new Set(links.map((link) => link.op_session_uid))];
  await endSessionBoundGrants(db, uids, now);
  await db.deleteFrom('oidc_models').where('model', '=', 'Session').where('uid', 'in', uids).execute();
  await db.deleteFrom('oidc_session_links').where(pick, 'in', values).execute();
  return added;
}

/** In the revoking transaction: the clients signed in through these host sessions are logged out. */
function logOutSessions(trx: Kysely<DatabaseSchema>, jtis: readonly string[], now: number): Promise<number> {
  return endLinks(trx, 'session_jti', jtis, now);
}

/** In a deletion's transaction: every client these accounts signed in to, through any host session, is logged out. */
function logOutAccounts(trx: Kysely<DatabaseSchema>, accountIds: readonly string[], now: number): Promise<number> {
  return endLinks(trx, 'account_id', accountIds, now);
}

/**
 * In a deletion's or a merge's transaction: every client these accounts
 * signed in to is logged out, and what the provider issued them ends: their
 * consents, the grants of those and every token of the grants (offline
 * access included), so no app keeps acting for an account that is gone.
 */
async function endProviderAccess(trx: Kysely<DatabaseSchema>, accountIds: readonly string[], now: number): Promise<void> {
  await logOutAccounts(trx, accountIds, now);
  await deleteConsents(
    trx,
    'account_id',
    accountIds.map((id) => `did:oc:${id}`),
    now,
  );
}

/** A host session that replaces another of the same account in the same browser keeps its clients. */
async function moveLinks(trx: Kysely<DatabaseSchema>, fromJtis: readonly string[], to: { jti: string; expires_at: number }): Promise<void> {
  if (fromJtis.length === 0) return;
  await trx
    .updateTable('oidc_session_links')
    .set({ session_jti: to.jti, expires_at: to.expires_at })
    .where('session_jti', 'in', fromJtis)
    .execute();
}

export class OidcLogoutsArea implements OidcLogoutStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async linkOidcSession(link: Omit<OidcSessionLink, 'expires_at'>): Promise<boolean> {
    return this.#x.transaction(async (trx) => {
      // Only a live host session of that account takes a link: a sign-out that raced the sign-in has already ended it.
      // PostgreSQL: the row stays locked until the link is in, so a revocation either sees the link or came first.
      let query = trx
        .selectFrom('sessions')
        .select(['jti', 'expires_at'])
        .where('jti', '=', link.session_jti)
        .where('account_id', '=', link.account_id)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', link.created_at);
      if (this.#x.engine === 'postgres') query = query.forUpdate();
      const live = await query.executeTakeFirst();
      if (live === undefined) return false;
      const values = {
        session_jti: link.session_jti,
        client_id: link.client_id,
        account_id: link.account_id,
        sid: link.sid,
        op_session_uid: link.op_session_uid,
        backchannel: link.backchannel ? 1 : 0,
        created_at: link.created_at,
        expires_at: toNumber(live.expires_at),
      };
      const earlier = await trx
        .selectFrom('oidc_session_links')
        .select('op_session_uid')
        .where('session_jti', '=', link.session_jti)
        .where('client_id', '=', link.client_id)
        .executeTakeFirst();
      await trx
        .insertInto('oidc_session_links')
        .values(values)
        .onConflict((conflict) =>
          conflict.columns(['session_jti', 'client_id']).doUpdateSet({
            sid: values.sid,
            op_session_uid: values.op_session_uid,
            backchannel: values.backchannel,
            expires_at: values.expires_at,
          }),
        )
        .execute();
      // The account signed in to the client again through another provider session of this browser (it had been set
      // aside for another account, src/features/oidc/provider.ts): the older one, once no link names it, would outlive the host
      // session with its tokens, so it ends here, as endLinks would end it (docs/protocol.md §8 "Signing in").
      const superseded = earlier?.op_session_uid;
      if (superseded !== undefined && superseded !== link.op_session_uid) {
        const named = await trx
          .selectFrom('oidc_session_links')
          .select('session_jti')
          .where('op_session_uid', '=', superseded)
          .executeTakeFirst();
        if (named === undefined) {
          await endSessionBoundGrants(trx, [superseded], link.created_at);
          await trx.deleteFrom('oidc_models').where('model', '=', 'Session').where('uid', '=', superseded).execute();
        }
      }
      return true;
    });
  }

  async listOidcSessionLinks(sessionJti: string): Promise<OidcSessionLink[]> {
    const rows = await this.#x.db
      .selectFrom('oidc_session_links')
      .selectAll()
      .where('session_jti', '=', sessionJti)
      .orderBy('client_id')
      .execute();
    return rows.map((row) => ({
      session_jti: row.session_jti,
      client_id: row.client_id,
      account_id: row.account_id,
      sid: row.sid,
      op_session_uid: row.op_session_uid,
      backchannel: Number(row.backchannel) === 1,
      created_at: toNumber(row.created_at),
      expires_at: toNumber(row.expires_at),
    }));
  }

  async enqueueOidcLogout(logout: { client_id: string; account_id: string; sid: string }, now: number): Promise<boolean> {
    return (await enqueue(this.#x.db, [logout], now)) > 0;
  }

  claimOidcLogouts(owner: string, now: number, leaseMs: number, limit: number): Promise<ClaimedOidcLogout[]> {
    return claimRows(this.#x.db, 'oidc_logouts', { owner, now, leaseMs, limit }, async (id) => {
      const row = await this.#x.db.selectFrom('oidc_logouts').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? undefined : outboxRecord(row);
    });
  }

  finishOidcLogoutAttempt(id: string, owner: string, attempt: WebhookAttempt): Promise<boolean> {
    return finishAttempt(this.#x.db, 'oidc_logouts', id, owner, attempt);
  }

  async listOidcLogouts(clientId: string, limit: number): Promise<OidcLogoutRecord[]> {
    return (await outboxLog(this.#x.db, 'oidc_logouts', { column: 'client_id', value: clientId }, limit)).map((row) => outboxRecord(row));
  }
}

/**
 * What the provider's tables do when a host session or an account changes
 * (src/platform/storage/hooks.ts), in that change's transaction.
 */
export const oidcStoreHooks: Pick<
  StoreHooks,
  'sessionsRevoked' | 'sessionsReplaced' | 'moreRevocations' | 'endProviderAccess' | 'endProviderTokens'
> = {
  sessionsRevoked: logOutSessions,
  sessionsReplaced: moveLinks,
  moreRevocations: listTokenRevocations,
  endProviderAccess,
  endProviderTokens: (trx, accountIds, now) =>
    deleteConsentTokens(
      trx,
      accountIds.map((id) => `did:oc:${id}`),
      now,
    ),
};
