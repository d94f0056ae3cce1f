/**
 * The OpenID provider's tables (docs/protocol.md §8): its signing keys, its
 * registered clients, the objects the provider library stores (codes,
 * tokens, grants, sessions, interactions: one row each, keyed by model and
 * id) and the consents accounts gave clients.
 */
import type { Kysely } from 'kysely';
import { rowsAffected, toNumber, type DatabaseSchema, type EpochMilliseconds, type StoreExecutor } from '../../platform/storage/index.js';
import type { OidcClientsTable, OidcConsentsTable, OidcModelsTable, OidcResourcesTable } from './store-schema.js';
import { cutOffClients, cutOffGrants, revokeAccessToken } from './token-revocation-store.js';

/** One of the OpenID provider's signing keys (docs/protocol.md §8 "Keys"). */
export interface OidcKeyRecord {
  readonly kid: string;
  /** `RS256`, `ES256` or `EdDSA`. */
  readonly alg: string;
  /** JSON text of the private JWK. */
  readonly private_jwk: string;
  readonly created_at: EpochMilliseconds;
  readonly retired_at: EpochMilliseconds | null;
}

/** An API the provider issues JWT access tokens for (docs/protocol.md §8 "APIs"). */
export interface OidcResourceRecord {
  readonly uri: string;
  readonly name: string;
  readonly scopes: readonly string[];
  readonly alg: string;
  readonly access_token_seconds: number;
  readonly created_at: EpochMilliseconds;
}

/** A registered OpenID client (docs/protocol.md §8 "Clients"). */
export interface OidcClientRecord {
  readonly client_id: string;
  /** JSON text of its metadata; `client_secret`, when present, is the secret's SHA-256. */
  readonly metadata: string;
  /** The Connect app that registered it; null for the operator's clients. */
  readonly owner_app_id: string | null;
  /** The operator's own app: no consent screen. */
  readonly first_party: boolean;
  readonly created_at: EpochMilliseconds;
  readonly updated_at: EpochMilliseconds;
}

/** One stored object of the provider library (a code, a token, a grant, a session, an interaction). */
export interface OidcModelRecord {
  /** JSON text of the library's payload. */
  readonly payload: string;
  readonly consumed_at: EpochMilliseconds | null;
}

/** What {@link OidcModelRecord} is stored with, besides its payload. */
export interface NewOidcModel {
  readonly payload: string;
  readonly grant_id: string | null;
  readonly uid: string | null;
  readonly user_code: string | null;
  /** Null: kept until destroyed. */
  readonly expires_at: EpochMilliseconds | null;
}

/** The consent an account gave a client: the grant holding what it agreed to share. */
export interface OidcConsentRecord {
  readonly account_id: string;
  readonly client_id: string;
  readonly grant_id: string;
  readonly created_at: EpochMilliseconds;
  readonly updated_at: EpochMilliseconds;
}

/** The OpenID provider's keys, clients, stored objects and consents (docs/protocol.md §8). */
export interface OidcStore {
  /** Every key, newest first. */
  listOidcKeys(): Promise<OidcKeyRecord[]>;
  /** False when a key with that kid exists. */
  insertOidcKey(key: Omit<OidcKeyRecord, 'retired_at'>): Promise<boolean>;
  /** False when the key is unknown or already retired. */
  retireOidcKey(kid: string, at: EpochMilliseconds): Promise<boolean>;

  /** False when the client id is taken. */
  insertOidcClient(client: OidcClientRecord): Promise<boolean>;
  findOidcClient(clientId: string): Promise<OidcClientRecord | null>;
  /** Every client, oldest first; only one app's when `ownerAppId` is given, only the operator's when it is null. */
  listOidcClients(ownerAppId?: string | null): Promise<OidcClientRecord[]>;
  /** Replaces the metadata (and the first-party mark when given); false when the client is unknown. */
  updateOidcClient(
    clientId: string,
    change: { readonly metadata: string; readonly first_party?: boolean },
    at: EpochMilliseconds,
  ): Promise<boolean>;
  /**
   * Deletes the client with every consent given to it and every object of
   * those grants (its codes and tokens stop working); false when unknown.
   */
  deleteOidcClient(clientId: string, now: EpochMilliseconds): Promise<boolean>;
  /** Deletes the clients whose Connect app no longer exists (they already count as gone); how many. */
  purgeOrphanOidcClients(now: EpochMilliseconds): Promise<number>;

  /** False when an API with that URI is registered. */
  insertOidcResource(resource: OidcResourceRecord): Promise<boolean>;
  findOidcResource(uri: string): Promise<OidcResourceRecord | null>;
  /** Every API, oldest first. */
  listOidcResources(): Promise<OidcResourceRecord[]>;
  /** False when unknown. Its tokens already issued stay valid until they expire. */
  deleteOidcResource(uri: string): Promise<boolean>;

  /** Stores or replaces one object of the library. */
  putOidcModel(model: string, id: string, value: NewOidcModel): Promise<void>;
  /**
   * Stores the object unless one with that id is there and not past its
   * expiry: true for the one call that stored it (the provider's replay
   * detection, src/features/oidc/adapter.ts).
   */
  claimOidcModel(model: string, id: string, value: NewOidcModel, now: EpochMilliseconds): Promise<boolean>;
  /** The object unless it is unknown or past its expiry. */
  findOidcModel(model: string, id: string, now: EpochMilliseconds): Promise<OidcModelRecord | null>;
  findOidcModelByUid(model: string, uid: string, now: EpochMilliseconds): Promise<OidcModelRecord | null>;
  findOidcModelByUserCode(model: string, userCode: string, now: EpochMilliseconds): Promise<OidcModelRecord | null>;
  /**
   * Marks the object used (a code, a rotated refresh token, a pushed request):
   * true for the one call that did, false when it was used already or is unknown.
   */
  consumeOidcModel(model: string, id: string, at: EpochMilliseconds): Promise<boolean>;
  deleteOidcModel(model: string, id: string): Promise<void>;
  /**
   * Deletes a grant's access tokens and ends its JWT access tokens issued
   * until `now` (the revocation feed lists the cut-off, docs/protocol.md §8
   * "Revoking API tokens").
   */
  endOidcGrantAccessTokens(grantId: string, now: EpochMilliseconds): Promise<void>;
  /** Lists one JWT access token in the revocation feed until `expiresAt`. */
  revokeOidcAccessToken(jti: string, expiresAt: EpochMilliseconds, now: EpochMilliseconds): Promise<void>;
  /** Deletes the objects of one model (or of every model) that belong to a grant. */
  deleteOidcGrant(grantId: string, model?: string): Promise<void>;

  findOidcConsent(accountId: string, clientId: string): Promise<OidcConsentRecord | null>;
  /** Records (or replaces) the grant of an account's consent to a client. */
  putOidcConsent(consent: OidcConsentRecord): Promise<void>;
  /** The account's consents, newest first. */
  listOidcConsents(accountId: string): Promise<OidcConsentRecord[]>;
  /** Withdraws a consent with its grant and every object of the grant; false when there was none. */
  deleteOidcConsent(accountId: string, clientId: string, now: EpochMilliseconds): Promise<boolean>;
}

function toClientRecord(row: OidcClientsTable): OidcClientRecord {
  return {
    client_id: row.client_id,
    metadata: row.metadata,
    owner_app_id: row.owner_app_id,
    first_party: Number(row.first_party) === 1,
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
  };
}

function toResourceRecord(row: OidcResourcesTable): OidcResourceRecord {
  return {
    uri: row.uri,
    name: row.name,
    scopes: JSON.parse(row.scopes) as string[],
    alg: row.alg,
    access_token_seconds: toNumber(row.access_token_seconds),
    created_at: toNumber(row.created_at),
  };
}

function toConsentRecord(row: OidcConsentsTable): OidcConsentRecord {
  return {
    account_id: row.account_id,
    client_id: row.client_id,
    grant_id: row.grant_id,
    created_at: toNumber(row.created_at),
    updated_at: toNumber(row.updated_at),
  };
}

/**
 * Deletes the consents of these clients or accounts, with their grants' own
 * rows and every object of those grants; the JWT access tokens of those
 * grants (and, for clients, every one of theirs) end at `now` too.
 */
export async function deleteConsents(
  trx: Kysely<DatabaseSchema>,
  column: 'client_id' | 'account_id',
  values: readonly string[],
  now: number,
): Promise<void> {
  if (values.length === 0) return;
  const grants = trx.selectFrom('oidc_consents').select('grant_id').where(column, 'in', values);
  await cutOffGrants(
    trx,
    (await grants.execute()).map((row) => row.grant_id),
    now,
  );
  if (column === 'client_id') await cutOffClients(trx, values, now);
  await trx
    .deleteFrom('oidc_models')
    .where((eb) => eb.or([eb('grant_id', 'in', grants), eb.and([eb('model', '=', 'Grant'), eb('id', 'in', grants)])]))
    .execute();
  await trx.deleteFrom('oidc_consents').where(column, 'in', values).execute();
}

/**
 * Deletes every code, access token and refresh token of the consents these
 * accounts (`did:oc` values) gave, keeping the consents and their grants: the
 * operator's hold (docs/protocol.md §2 "Disabling and deleting"). Their JWT
 * access tokens end at `now`; those the grants issue after a lifted hold do not.
 */
export async function deleteConsentTokens(trx: Kysely<DatabaseSchema>, accountIds: readonly string[], now: number): Promise<void> {
  if (accountIds.length === 0) return;
  const grants = trx.selectFrom('oidc_consents').select('grant_id').where('account_id', 'in', accountIds);
  await cutOffGrants(
    trx,
    (await grants.execute()).map((row) => row.grant_id),
    now,
  );
  await trx.deleteFrom('oidc_models').where('grant_id', 'in', grants).where('model', '<>', 'Grant').execute();
}

export class OidcArea implements OidcStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async listOidcKeys(): Promise<OidcKeyRecord[]> {
    const rows = await this.#x.db.selectFrom('oidc_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid', 'desc').execute();
    return rows.map((row) => ({
      kid: row.kid,
      alg: row.alg,
      private_jwk: row.private_jwk,
      created_at: toNumber(row.created_at),
      retired_at: row.retired_at === null ? null : toNumber(row.retired_at),
    }));
  }

  async insertOidcKey(key: Omit<OidcKeyRecord, 'retired_at'>): Promise<boolean> {
    const result = await this.#x.db
      .insertInto('oidc_keys')
      .values({ ...key, retired_at: null })
      .onConflict((conflict) => conflict.column('kid').doNothing())
      .executeTakeFirst();
    return rowsAffected(result.numInsertedOrUpdatedRows) === 1;
  }

  async retireOidcKey(kid: string, at: number): Promise<boolean> {
    const result = await this.#x.db
      .updateTable('oidc_keys')
      .set({ retired_at: at })
      .where('kid', '=', kid)
      .where('retired_at', 'is', null)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows) > 0;
  }

  async insertOidcClient(client: OidcClientRecord): Promise<boolean> {
    const result = await this.#x.db
      .insertInto('oidc_clients')
      .values({ ...client, first_party: client.first_party ? 1 : 0 })
      .onConflict((conflict) => conflict.column('client_id').doNothing())
      .executeTakeFirst();
    return rowsAffected(result.numInsertedOrUpdatedRows) === 1;
  }

  /** Clients whose Connect app is gone (deleted, merged away, its account deleted) count as gone too. */
  #liveClients() {
    return this.#x.db
      .selectFrom('oidc_clients')
      .selectAll()
      .where((eb) =>
        eb.or([
          eb('owner_app_id', 'is', null),
          eb.exists(eb.selectFrom('connect_apps').select('connect_apps.id').whereRef('connect_apps.id', '=', 'oidc_clients.owner_app_id')),
        ]),
      );
  }

  async findOidcClient(clientId: string): Promise<OidcClientRecord | null> {
    // The provider looks its client up on every request (docs/performance.md "The OpenID provider").
    const [row] = await this.#x.runCompiled<OidcClientsTable>(
      'findOidcClient',
      () => this.#liveClients().where('client_id', '=', clientId),
      [clientId],
    );
    return row ? toClientRecord(row) : null;
  }

  async listOidcClients(ownerAppId?: string | null): Promise<OidcClientRecord[]> {
    let query = this.#liveClients();
    if (ownerAppId === null) query = query.where('owner_app_id', 'is', null);
    else if (ownerAppId !== undefined) query = query.where('owner_app_id', '=', ownerAppId);
    const rows = await query.orderBy('created_at').orderBy('client_id').execute();
    return rows.map(toClientRecord);
  }

  async updateOidcClient(
    clientId: string,
    change: { readonly metadata: string; readonly first_party?: boolean },
    at: number,
  ): Promise<boolean> {
    const result = await this.#x.db
      .updateTable('oidc_clients')
      .set({
        metadata: change.metadata,
        updated_at: at,
        ...(change.first_party === undefined ? {} : { first_party: change.first_party ? 1 : 0 }),
      })
      .where('client_id', '=', clientId)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows) > 0;
  }

  async purgeOrphanOidcClients(now: number): Promise<number> {
    const orphans = (
      await this.#x.db
        .selectFrom('oidc_clients')
        .select('client_id')
        .where('owner_app_id', 'is not', null)
        .where((eb) =>
          eb.not(
            eb.exists(
              eb.selectFrom('connect_apps').select('connect_apps.id').whereRef('connect_apps.id', '=', 'oidc_clients.owner_app_id'),
            ),
          ),
        )
        .execute()
    ).map((row) => row.client_id);
    for (const clientId of orphans) await this.deleteOidcClient(clientId, now);
    return orphans.length;
  }

  async insertOidcResource(resource: OidcResourceRecord): Promise<boolean> {
    const result = await this.#x.db
      .insertInto('oidc_resources')
      .values({ ...resource, scopes: JSON.stringify(resource.scopes) })
      .onConflict((conflict) => conflict.column('uri').doNothing())
      .executeTakeFirst();
    return rowsAffected(result.numInsertedOrUpdatedRows) === 1;
  }

  async findOidcResource(uri: string): Promise<OidcResourceRecord | null> {
    // Asked at every token for an API (docs/performance.md "The OpenID provider").
    const [row] = await this.#x.runCompiled<OidcResourcesTable>(
      'findOidcResource',
      () => this.#x.db.selectFrom('oidc_resources').selectAll().where('uri', '=', uri),
      [uri],
    );
    return row ? toResourceRecord(row) : null;
  }

  async listOidcResources(): Promise<OidcResourceRecord[]> {
    const rows = await this.#x.db.selectFrom('oidc_resources').selectAll().orderBy('created_at').orderBy('uri').execute();
    return rows.map(toResourceRecord);
  }

  async deleteOidcResource(uri: string): Promise<boolean> {
    const result = await this.#x.db.deleteFrom('oidc_resources').where('uri', '=', uri).executeTakeFirst();
    return rowsAffected(result.numDeletedRows) > 0;
  }

  async deleteOidcClient(clientId: string, now: number): Promise<boolean> {
    return this.#x.transaction(async (trx) => {
      await deleteConsents(trx, 'client_id', [clientId], now);
      const result = await trx.deleteFrom('oidc_clients').where('client_id', '=', clientId).executeTakeFirst();
      return rowsAffected(result.numDeletedRows) > 0;
    });
  }

  async putOidcModel(model: string, id: string, value: NewOidcModel): Promise<void> {
    // Every token, code, session and interaction the provider saves (docs/performance.md "The OpenID provider").
    await this.#x.runCompiled(
      'putOidcModel',
      () =>
        this.#x.db
          .insertInto('oidc_models')
          // Spelled out: the parameters below follow this order, whatever the caller's object had.
          .values({
            model,
            id,
            payload: value.payload,
            grant_id: value.grant_id,
            uid: value.uid,
            user_code: value.user_code,
            expires_at: value.expires_at,
            consumed_at: null,
          })
          .onConflict((conflict) =>
            conflict.columns(['model', 'id']).doUpdateSet((eb) => ({
              payload: eb.ref('excluded.payload'),
              grant_id: eb.ref('excluded.grant_id'),
              uid: eb.ref('excluded.uid'),
              user_code: eb.ref('excluded.user_code'),
              expires_at: eb.ref('excluded.expires_at'),
            })),
          ),
      [model, id, value.payload, value.grant_id, value.uid, value.user_code, value.expires_at, null],
    );
  }

  async claimOidcModel(model: string, id: string, value: NewOidcModel, now: number): Promise<boolean> {
    // Insert-if-absent in one statement; a row past its expiry is taken over.
    const rows = await this.#x.db
      .insertInto('oidc_models')
      .values({ model, id, ...value, consumed_at: null })
      .onConflict((conflict) =>
        conflict
          .columns(['model', 'id'])
          .doUpdateSet({
            payload: value.payload,
            grant_id: value.grant_id,
            uid: value.uid,
            user_code: value.user_code,
            expires_at: value.expires_at,
            consumed_at: null,
          })
          .where('oidc_models.expires_at', 'is not', null)
          .where('oidc_models.expires_at', '<=', now),
      )
      .returning('id')
      .execute();
    return rows.length === 1;
  }

  async #findBy(model: string, column: 'id' | 'uid' | 'user_code', value: string, now: number): Promise<OidcModelRecord | null> {
    // Every code exchange and userinfo reads three or four of these (docs/performance.md "The OpenID provider").
    const [row] = await this.#x.runCompiled<Pick<OidcModelsTable, 'payload' | 'consumed_at' | 'expires_at'>>(
      `findOidcModelBy:${column}`,
      () =>
        this.#x.db
          .selectFrom('oidc_models')
          .select(['payload', 'consumed_at', 'expires_at'])
          .where('model', '=', model)
          .where(column, '=', value),
      [model, value],
    );
    if (!row) return null;
    if (row.expires_at !== null && toNumber(row.expires_at) <= now) return null;
    return { payload: row.payload, consumed_at: row.consumed_at === null ? null : toNumber(row.consumed_at) };
  }

  findOidcModel(model: string, id: string, now: number): Promise<OidcModelRecord | null> {
    return this.#findBy(model, 'id', id, now);
  }

  findOidcModelByUid(model: string, uid: string, now: number): Promise<OidcModelRecord | null> {
    return this.#findBy(model, 'uid', uid, now);
  }

  findOidcModelByUserCode(model: string, userCode: string, now: number): Promise<OidcModelRecord | null> {
    return this.#findBy(model, 'user_code', userCode, now);
  }

  async consumeOidcModel(model: string, id: string, at: number): Promise<boolean> {
    // One statement decides which of two racing uses (on one instance or two) is the first.
    const rows = await this.#x.runCompiled<{ id: string }>(
      'consumeOidcModel',
      () =>
        this.#x.db
          .updateTable('oidc_models')
          .set({ consumed_at: at })
          .where('model', '=', model)
          .where('id', '=', id)
          .where('consumed_at', 'is', null)
          .returning('id'),
      [at, model, id],
    );
    return rows.length === 1;
  }

  async deleteOidcModel(model: string, id: string): Promise<void> {
    // An interaction's end, on every sign-in through the provider.
    await this.#x.runCompiled(
      'deleteOidcModel',
      () => this.#x.db.deleteFrom('oidc_models').where('model', '=', model).where('id', '=', id),
      [model, id],
    );
  }

  async endOidcGrantAccessTokens(grantId: string, now: number): Promise<void> {
    await this.#x.transaction(async (trx) => {
      await cutOffGrants(trx, [grantId], now);
      await trx.deleteFrom('oidc_models').where('grant_id', '=', grantId).where('model', '=', 'AccessToken').execute();
    });
  }

  async revokeOidcAccessToken(jti: string, expiresAt: number, now: number): Promise<void> {
    await revokeAccessToken(this.#x.db, jti, expiresAt, now);
  }

  async deleteOidcGrant(grantId: string, model?: string): Promise<void> {
    let query = this.#x.db.deleteFrom('oidc_models').where('grant_id', '=', grantId);
    if (model !== undefined) query = query.where('model', '=', model);
    await query.execute();
  }

  async findOidcConsent(accountId: string, clientId: string): Promise<OidcConsentRecord | null> {
    // Asked at every authorization (docs/performance.md "The OpenID provider").
    const [row] = await this.#x.runCompiled<OidcConsentsTable>(
      'findOidcConsent',
      () => this.#x.db.selectFrom('oidc_consents').selectAll().where('account_id', '=', accountId).where('client_id', '=', clientId),
      [accountId, clientId],
    );
    return row ? toConsentRecord(row) : null;
  }

  async putOidcConsent(consent: OidcConsentRecord): Promise<void> {
    await this.#x.db
      .insertInto('oidc_consents')
      .values(consent)
      .onConflict((conflict) =>
        conflict.columns(['account_id', 'client_id']).doUpdateSet({ grant_id: consent.grant_id, updated_at: consent.updated_at }),
      )
      .execute();
  }

  async listOidcConsents(accountId: string): Promise<OidcConsentRecord[]> {
    const rows = await this.#x.db
      .selectFrom('oidc_consents')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('updated_at', 'desc')
      .orderBy('client_id')
      .execute();
    return rows.map(toConsentRecord);
  }

  async deleteOidcConsent(accountId: string, clientId: string, now: number): Promise<boolean> {
    return this.#x.transaction(async (trx) => {
      const row = await trx
        .deleteFrom('oidc_consents')
        .where('account_id', '=', accountId)
        .where('client_id', '=', clientId)
        .returning('grant_id')
        .executeTakeFirst();
      if (!row) return false;
      await cutOffGrants(trx, [row.grant_id], now);
      await trx
        .deleteFrom('oidc_models')
        .where((eb) => eb.or([eb('grant_id', '=', row.grant_id), eb.and([eb('model', '=', 'Grant'), eb('id', '=', row.grant_id)])]))
        .execute();
      return true;
    });
  }
}
