/**
 * Security keys and passkeys (docs/protocol.md §6): the public half of each
 * registered WebAuthn credential and its signature counter.
 */
import {
  fromDatabaseBoolean,
  isUniqueViolation,
  rowsAffected,
  toDatabaseBoolean,
  toNumber,
  toNumberOrNull,
  type DatabaseSchema,
  type EpochMilliseconds,
  type StoreExecutor,
  type StoreHooks,
} from '../../platform/storage/index.js';
import type { Kysely } from 'kysely';
import type { WebAuthnAuthenticatorType, WebAuthnCredentialsTable, WebAuthnDeviceType } from './store-schema.js';

export type { WebAuthnAuthenticatorType } from './store-schema.js';

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

function toWebAuthnCredentialRecord(row: WebAuthnCredentialsTable): WebAuthnCredentialRecord {
  return {
    id: row.id,
    account_id: row.account_id,
    public_key: row.public_key,
    counter: toNumber(row.counter),
    transports: row.transports === '' ? [] : row.transports.split(','),
    label: row.label,
    authenticator_type: row.authenticator_type,
    device_type: row.device_type,
    backed_up: fromDatabaseBoolean(row.backed_up),
    user_verified: fromDatabaseBoolean(row.user_verified),
    sign_in: fromDatabaseBoolean(row.sign_in),
    user_handle: row.user_handle,
    aaguid: row.aaguid,
    created_at: toNumber(row.created_at),
    last_used_at: toNumberOrNull(row.last_used_at),
  };
}

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
    return (await keysOf(this.#x.db, accountId).execute()).map(toWebAuthnCredentialRecord);
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

/** An account's keys, oldest first and ties by id (the order every list of them has). */
function keysOf(db: Kysely<DatabaseSchema>, accountId: string) {
  return db.selectFrom('webauthn_credentials').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('id');
}

/**
 * What a merge or a deletion does to an account's keys
 * (src/platform/storage/hooks.ts): a merge lists them and removes them, since
 * a key proves whoever registered it and never moves; a deletion removes them.
 */
export const passkeyAccountHooks: StoreHooks['keys'] = {
  async list(db, accountId) {
    return (await keysOf(db, accountId).execute()).map((key) => ({ id: key.id, name: key.label }));
  },
  async removeOf(trx, accountIds) {
    const removed = await trx.deleteFrom('webauthn_credentials').where('account_id', 'in', accountIds).executeTakeFirst();
    return rowsAffected(removed.numDeletedRows);
  },
};
