/**
 * Security keys and passkeys (docs/protocol.md §6): the public half of each
 * registered WebAuthn credential and its signature counter.
 */
import { heldRows, isUniqueViolation, rowsAffected, type StoreExecutor } from './executor.js';
import { toDatabaseBoolean, toWebAuthnCredentialRecord } from './row-mapping.js';
import type { WebAuthnCredentialRecord, WebAuthnStore, WebAuthnUse } from './store.js';

export class WebAuthnArea implements WebAuthnStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async insertWebAuthnCredential(credential: WebAuthnCredentialRecord): Promise<boolean> {
    if (credential.transports.some((transport) => transport.includes(',')))
      throw new Error('storage: a WebAuthn transport must not contain ","');
    const engine = this.#x.engine;
    try {
      await this.#x.db
        .insertInto('webauthn_credentials')
        .values({
          ...credential,
          transports: credential.transports.join(','),
          backed_up: toDatabaseBoolean(engine, credential.backed_up),
          user_verified: toDatabaseBoolean(engine, credential.user_verified),
          sign_in: toDatabaseBoolean(engine, credential.sign_in),
        })
        .execute();
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  async listWebAuthnCredentials(accountId: string): Promise<WebAuthnCredentialRecord[]> {
    return (await heldRows(this.#x.db, 'webauthn_credentials', accountId)).map(toWebAuthnCredentialRecord);
  }

  async findWebAuthnCredential(id: string): Promise<WebAuthnCredentialRecord | null> {
    const row = await this.#x.db.selectFrom('webauthn_credentials').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toWebAuthnCredentialRecord(row) : null;
  }

  async updateWebAuthnCredential(
    id: string,
    accountId: string,
    patch: { readonly label?: string; readonly sign_in?: boolean },
  ): Promise<WebAuthnCredentialRecord | null> {
    const values: { label?: string; sign_in?: boolean | 0 | 1 } = {};
    if (patch.label !== undefined) values.label = patch.label;
    if (patch.sign_in !== undefined) values.sign_in = toDatabaseBoolean(this.#x.engine, patch.sign_in);
    if (Object.keys(values).length > 0) {
      await this.#x.db.updateTable('webauthn_credentials').set(values).where('id', '=', id).where('account_id', '=', accountId).execute();
    }
    const row = await this.#x.db
      .selectFrom('webauthn_credentials')
      .selectAll()
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row ? toWebAuthnCredentialRecord(row) : null;
  }

  async deleteWebAuthnCredential(id: string, accountId: string): Promise<boolean> {
    const result = await this.#x.db
      .deleteFrom('webauthn_credentials')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return rowsAffected(result.numDeletedRows) > 0;
  }

  async recordWebAuthnUse(id: string, use: WebAuthnUse): Promise<boolean> {
    const result = await this.#x.db
      .updateTable('webauthn_credentials')
      .set({ counter: use.counter, backed_up: toDatabaseBoolean(this.#x.engine, use.backed_up), last_used_at: use.at })
      .where('id', '=', id)
      .where('counter', '=', use.expected_counter)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows) > 0;
  }
}
