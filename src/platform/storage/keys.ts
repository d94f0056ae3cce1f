/**
 * Settings (the server secret, the Nostr key) and the signing key ring (docs/protocol.md §1, §3).
 */
import { rowsAffected, type StoreExecutor } from './executor.js';
import { toSigningKeyRecord } from './row-mapping.js';
import type { NewSigningKey, SigningKeyRecord, KeyStore } from './store.js';

export class KeysArea implements KeyStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async getOrCreateSetting(key: string, create: () => string): Promise<string> {
    const existing = await this.getSetting(key);
    if (existing !== null) return existing;
    const candidate = create();
    if (typeof candidate !== 'string') throw new Error(`storage: setting ${key} must be created as a string`);
    // Insert-if-absent, then read: whichever instance inserted first, every
    // instance returns that value (docs/protocol.md §1, "every instance on that
    // database shares it").
    await this.#x.db
      .insertInto('settings')
      .values({ key, value: candidate })
      .onConflict((conflict) => conflict.column('key').doNothing())
      .execute();
    const stored = await this.getSetting(key);
    if (stored === null) throw new Error(`storage: setting ${key} vanished right after it was stored`);
    return stored;
  }

  async getSetting(key: string): Promise<string | null> {
    const row = await this.#x.db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
    return row ? row.value : null;
  }

  async listSigningKeys(): Promise<SigningKeyRecord[]> {
    const rows = await this.#x.db
      .selectFrom('signing_keys')
      .selectAll()
      .orderBy('activated_at', 'desc')
      .orderBy('created_at', 'desc')
      .orderBy('kid', 'desc')
      .execute();
    return rows.map(toSigningKeyRecord);
  }

  async findActiveSigningKey(now: number): Promise<SigningKeyRecord | null> {
    const row = await this.#x.db
      .selectFrom('signing_keys')
      .selectAll()
      .where('retired_at', 'is', null)
      .where('activated_at', '<=', now)
      .orderBy('activated_at', 'desc')
      .orderBy('created_at', 'desc')
      .orderBy('kid', 'desc')
      .executeTakeFirst();
    return row ? toSigningKeyRecord(row) : null;
  }

  async insertSigningKey(key: NewSigningKey): Promise<boolean> {
    const result = await this.#x.db
      .insertInto('signing_keys')
      .values({ ...key, retired_at: null })
      .onConflict((conflict) => conflict.column('kid').doNothing())
      .executeTakeFirst();
    return rowsAffected(result.numInsertedOrUpdatedRows) === 1;
  }

  async retireSigningKey(kid: string, at: number): Promise<boolean> {
    const result = await this.#x.db
      .updateTable('signing_keys')
      .set({ retired_at: at })
      .where('kid', '=', kid)
      .where('retired_at', 'is', null)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows) > 0;
  }
}
