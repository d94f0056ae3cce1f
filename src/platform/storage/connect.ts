/**
 * Connect apps and their hashed API keys (docs/protocol.md §6).
 */
import { heldRows, newRandomId, rowsAffected, type StoreExecutor } from './executor.js';
import { toConnectAppRecord } from './row-mapping.js';
import type { ConnectAppRecord, NewConnectApp, ConnectStore } from './store.js';

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
    return (await heldRows(this.#x.db, 'connect_apps', ownerAccountId)).map(toConnectAppRecord);
  }

  async findConnectAppByKeyHash(keyHash: string): Promise<ConnectAppRecord | null> {
    const row = await this.#x.db.selectFrom('connect_apps').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
    return row ? toConnectAppRecord(row) : null;
  }

  async findConnectApp(appId: string): Promise<ConnectAppRecord | null> {
    const row = await this.#x.db.selectFrom('connect_apps').selectAll().where('id', '=', appId).executeTakeFirst();
    return row ? toConnectAppRecord(row) : null;
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
