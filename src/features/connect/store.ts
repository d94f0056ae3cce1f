/**
 * Connect's storage area (docs/protocol.md §6): integrator apps and their
 * hashed API keys, with the records and the outbox interface of their
 * webhooks (webhook-store.ts). What an account's merge or deletion does to
 * the apps it owns is {@link connectAccountHooks}, run in that change's
 * transaction (src/platform/storage/hooks.ts).
 */
import type { Kysely, Transaction } from 'kysely';
import {
  newRandomId,
  rowsAffected,
  toNumber,
  toNumberOrNull,
  type OutboxState,
  type DatabaseSchema,
  type EpochMilliseconds,
  type StoreExecutor,
  type StoreHooks,
  type WebhookAttempt,
} from '../../platform/storage/index.js';
import type { ConnectAppsTable } from './store-schema.js';

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

export interface NewConnectApp {
  /** Generated (32 lowercase hex) when absent; it must not contain `:` (docs/protocol.md §2). */
  readonly id?: string;
  readonly owner_account_id: string;
  readonly name: string;
  readonly key_hash: string;
  readonly created_at: EpochMilliseconds;
}

/** Finished webhook deliveries stay in the delivery log 30 days (docs/protocol.md §6 "Webhooks"). */
export const WEBHOOK_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** A webhook delivery (docs/protocol.md §6 "Webhooks"): an outbox row and its log. */
export interface WebhookDeliveryRecord extends OutboxState {
  readonly id: string;
  readonly app_id: string;
  readonly event_type: string;
  readonly payload: string;
  readonly created_at: EpochMilliseconds;
}

/** A claimed delivery with where it goes now (null: the app's webhook was removed since). */
export interface ClaimedWebhookDelivery extends WebhookDeliveryRecord {
  readonly url: string | null;
}

/** Connect apps and their API keys (docs/protocol.md §6). */
export interface ConnectStore {
  createConnectApp(app: NewConnectApp): Promise<ConnectAppRecord>;

  /** Oldest first. */
  listConnectApps(ownerAccountId: string): Promise<ConnectAppRecord[]>;

  findConnectAppByKeyHash(keyHash: string): Promise<ConnectAppRecord | null>;

  /** The app of this id, or null. */
  findConnectApp(appId: string): Promise<ConnectAppRecord | null>;

  /** Every owner's apps, by id, `limit` after `afterId` (the operator's list). */
  listAllConnectApps(limit: number, afterId?: string): Promise<ConnectAppRecord[]>;

  /** False when no such app belongs to the owner. */
  rotateConnectAppKey(appId: string, ownerAccountId: string, newKeyHash: string, at: EpochMilliseconds): Promise<boolean>;

  /** False when no such app belongs to the owner. Its webhook deliveries go with it. */
  deleteConnectApp(appId: string, ownerAccountId: string): Promise<boolean>;

  /** Sets or clears the app's webhook endpoint; null when no such app belongs to the owner. */
  setConnectAppWebhook(appId: string, ownerAccountId: string, url: string | null): Promise<ConnectAppRecord | null>;
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

  /**
   * Queues a delivery that failed for one more attempt, due at `now`, with
   * its own id and body (a receiver that got it after all sees the same id).
   * `not_failed` for one pending or delivered, `unknown` for no such
   * delivery of the app.
   */
  resendWebhookDelivery(appId: string, id: string, now: EpochMilliseconds): Promise<'queued' | 'not_failed' | 'unknown'>;
}

function toConnectAppRecord(row: ConnectAppsTable): ConnectAppRecord {
  return {
    id: row.id,
    owner_account_id: row.owner_account_id,
    name: row.name,
    key_hash: row.key_hash,
    created_at: toNumber(row.created_at),
    rotated_at: toNumberOrNull(row.rotated_at),
    webhook_url: row.webhook_url,
  };
}

/** An account's apps, oldest first and ties by id (the order every list of them has). */
function ownedApps(db: Kysely<DatabaseSchema>, ownerAccountId: string) {
  return db.selectFrom('connect_apps').selectAll().where('owner_account_id', '=', ownerAccountId).orderBy('created_at').orderBy('id');
}

/** Removes these apps with their outbox and delivery log. */
async function removeApps(trx: Transaction<DatabaseSchema>, appIds: readonly string[]): Promise<void> {
  if (appIds.length === 0) return;
  await trx.deleteFrom('webhook_deliveries').where('app_id', 'in', appIds).execute();
  await trx.deleteFrom('connect_apps').where('id', 'in', appIds).execute();
}

/** What a merge or a deletion of the owner does to its apps (src/platform/storage/hooks.ts). */
export const connectAccountHooks: StoreHooks['apps'] = {
  async list(db, accountId) {
    return (await ownedApps(db, accountId).execute()).map((app) => ({ id: app.id, name: app.name }));
  },
  async move(trx, appIds, intoAccountId) {
    await trx.updateTable('connect_apps').set({ owner_account_id: intoAccountId }).where('id', 'in', appIds).execute();
  },
  remove: removeApps,
  async removeOwnedBy(trx, accountIds) {
    const owned = await trx.selectFrom('connect_apps').select('id').where('owner_account_id', 'in', accountIds).execute();
    await removeApps(
      trx,
      owned.map((app) => app.id),
    );
    return owned.length;
  },
};

export class ConnectArea implements ConnectStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async createConnectApp(app: NewConnectApp): Promise<ConnectAppRecord> {
    const id = app.id ?? newRandomId();
    // Connect identities are `<app_id>:<user_id>` (docs/protocol.md §2); a colon in
    // the app id would make them ambiguous.
    if (id.length === 0 || id.includes(':')) throw new Error('storage: a Connect app id must be non-empty without ":"');
    const row = {
      id,
      owner_account_id: app.owner_account_id,
      name: app.name,
      key_hash: app.key_hash,
      created_at: app.created_at,
      rotated_at: null,
      webhook_url: null,
    };
    await this.#x.db.insertInto('connect_apps').values(row).execute();
    return toConnectAppRecord(row);
  }

  async listConnectApps(ownerAccountId: string): Promise<ConnectAppRecord[]> {
    return (await ownedApps(this.#x.db, ownerAccountId).execute()).map(toConnectAppRecord);
  }

  async findConnectAppByKeyHash(keyHash: string): Promise<ConnectAppRecord | null> {
    const row = await this.#x.db.selectFrom('connect_apps').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
    return row ? toConnectAppRecord(row) : null;
  }

  async findConnectApp(appId: string): Promise<ConnectAppRecord | null> {
    const row = await this.#x.db.selectFrom('connect_apps').selectAll().where('id', '=', appId).executeTakeFirst();
    return row ? toConnectAppRecord(row) : null;
  }

  async listAllConnectApps(limit: number, afterId?: string): Promise<ConnectAppRecord[]> {
    let select = this.#x.db.selectFrom('connect_apps').selectAll();
    if (afterId !== undefined) select = select.where('id', '>', afterId);
    return (await select.orderBy('id').limit(limit).execute()).map(toConnectAppRecord);
  }

  async rotateConnectAppKey(appId: string, ownerAccountId: string, newKeyHash: string, at: number): Promise<boolean> {
    const result = await this.#x.db
      .updateTable('connect_apps')
      .set({ key_hash: newKeyHash, rotated_at: at })
      .where('id', '=', appId)
      .where('owner_account_id', '=', ownerAccountId)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows) > 0;
  }

  deleteConnectApp(appId: string, ownerAccountId: string): Promise<boolean> {
    return this.#x.transaction(async (trx) => {
      const result = await trx
        .deleteFrom('connect_apps')
        .where('id', '=', appId)
        .where('owner_account_id', '=', ownerAccountId)
        .executeTakeFirst();
      if (rowsAffected(result.numDeletedRows) === 0) return false;
      // Its outbox and delivery log go with it.
      await trx.deleteFrom('webhook_deliveries').where('app_id', '=', appId).execute();
      return true;
    });
  }

  async setConnectAppWebhook(appId: string, ownerAccountId: string, url: string | null): Promise<ConnectAppRecord | null> {
    const row = await this.#x.db
      .updateTable('connect_apps')
      .set({ webhook_url: url })
      .where('id', '=', appId)
      .where('owner_account_id', '=', ownerAccountId)
      .returningAll()
      .executeTakeFirst();
    return row ? toConnectAppRecord(row) : null;
  }
}
