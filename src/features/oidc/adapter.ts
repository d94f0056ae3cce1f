/**
 * The provider library's storage adapter on our storage (docs/protocol.md §8
 * "Storage"): every code, token, grant, session and interaction is a row of
 * `oidc_models`, so every instance on the database sees the same ones, on
 * SQLite and PostgreSQL alike. Clients come from `oidc_clients`, where the
 * secret is kept as its SHA-256 (src/features/oidc/clients.ts). Nothing is held in
 * memory: a flow may hop between instances at every request
 * (docs/operations.md "Several instances behind a proxy").
 *
 * The two checks that must hold however requests race, on one instance or
 * several, are single statements of the database: a use of a code, a
 * refresh token, a device code or a pushed request (`consume`) succeeds once,
 * and a proof id the replay detection sees (DPoP proofs, client assertions)
 * is new once.
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OidcStore } from './store.js';
import { clientMetadataOf, DISABLED_METADATA, hashClientSecret, isHashedClientSecret, OWNER_APP_METADATA } from './clients.js';

/** The policy every client registered with a Connect app's key gets (src/features/oidc/provider.ts). */
export const CONNECT_APP_POLICY = 'connect-app';

/** How long an initial access token found by the adapter is good for: this one request. */
const INITIAL_ACCESS_TOKEN_SECONDS = 60;

/**
 * How long the replay detection's claim of an id holds before the library
 * saves it with its own lifetime, moments later in the same request.
 */
const REPLAY_CLAIM_MS = 10 * 60 * 1000;

/**
 * How long a device code is kept after it expires (docs/protocol.md §8
 * "Devices"): the store finds no expired row, and the library tells an
 * expired code from an unknown one only when it finds it (RFC 8628
 * `expired_token` to the device, "expired" on the verification page), so
 * the row outlives the code by this much. The library checks the code's
 * own expiry on every use.
 */
const DEVICE_CODE_KEPT_SECONDS = 10 * 60;

export interface AdapterDeps {
  readonly store: OidcStore;
  readonly now: () => number;
  /**
   * The Connect app whose API key this is, or null: an app's API key is its
   * initial access token for dynamic registration (docs/protocol.md §8 "Clients").
   */
  readonly appOfApiKey?: ((apiKey: string) => Promise<ApiKeyApp | null>) | undefined;
  /**
   * Whether the owner of a Connect app may act (src/identity/session/standing.ts): a
   * client of an app whose owner the operator holds is not found meanwhile,
   * so it signs nobody in and its tokens answer nothing.
   */
  readonly appMayAct?: ((appId: string) => Promise<boolean>) | undefined;
  /**
   * The library's error for an object used a second time by a request that
   * raced the first (the model's name says which): the library checks
   * `consumed` before it consumes, so only the store can tell the later of two.
   */
  readonly usedTwice: (model: string) => Error;
}

/** The app an API key names, or, for the key of an app whose owner is held, that it is held. */
export type ApiKeyApp = { readonly appId: string } | { readonly held: true };

/**
 * Whether an id the library looks up can be stored at all: it hands on ids
 * from requests (a client_id, a token, a code), and PostgreSQL text cannot
 * hold NUL, which no id the provider or the registry makes contains. Such
 * an id is found nowhere, on both engines, instead of failing the query.
 */
function storableId(id: string): boolean {
  return !id.includes('\u0000');
}

/** Builds the adapter class the provider instantiates once per model name. */
export function storageAdapter(deps: AdapterDeps): new (name: string) => Adapter {
  const { store, now } = deps;
  return class StorageAdapter implements Adapter {
    readonly #model: string;

    constructor(name: string) {
      this.#model = name;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      if (this.#model === 'Client') return upsertClient(store, id, payload, now());
      const kept = this.#model === 'DeviceCode' ? DEVICE_CODE_KEPT_SECONDS : 0;
      await store.putOidcModel(this.#model, id, rowOf(payload, expiresIn === undefined ? null : now() + (expiresIn + kept) * 1000));
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (!storableId(id)) return undefined;
      if (this.#model === 'Client') {
        const client = await store.findOidcClient(id);
        if (client === null) return undefined;
        // A client the operator holds is not found: no authorization, no code, no token of it is honoured.
        const { [DISABLED_METADATA]: held, ...metadata } = clientMetadataOf(client) as Record<string, unknown>;
        if (held !== undefined) return undefined;
        if (client.owner_app_id !== null && deps.appMayAct !== undefined && !(await deps.appMayAct(client.owner_app_id))) return undefined;
        // Every ID token names when the person signed in (docs/protocol.md §8 "Tokens"), whatever the client registered.
        return { ...(metadata as AdapterPayload), require_auth_time: true };
      }
      if (this.#model === 'InitialAccessToken') {
        // A held owner's key is found, so that the registration policy answers why it is refused.
        const app = deps.appOfApiKey === undefined ? null : await deps.appOfApiKey(id);
        if (app === null) return undefined;
        const iat = Math.floor(now() / 1000);
        return { jti: id, kind: 'InitialAccessToken', iat, exp: iat + INITIAL_ACCESS_TOKEN_SECONDS, policies: [CONNECT_APP_POLICY] };
      }
      if (this.#model === 'ReplayDetection') {
        // The library looks an id up, then saves it when it was not found: two
        // requests with one proof would both find nothing. Here the look-up
        // claims the id in one statement, and only the first finds nothing;
        // the save that follows gives the row the library's lifetime.
        const at = now();
        const claimed = await store.claimOidcModel(this.#model, id, rowOf({ jti: id }, at + REPLAY_CLAIM_MS), at);
        return claimed ? undefined : { jti: id };
      }
      return this.#payloadOf(await store.findOidcModel(this.#model, id, now()));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      if (!storableId(userCode)) return undefined;
      return this.#payloadOf(await store.findOidcModelByUserCode(this.#model, userCode, now()));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      if (!storableId(uid)) return undefined;
      return this.#payloadOf(await store.findOidcModelByUid(this.#model, uid, now()));
    }

    async consume(id: string): Promise<void> {
      if (await store.consumeOidcModel(this.#model, id, now())) return;
      // Another request used it in the meantime (on this instance or another):
      // as the library does for a second use, what was issued from its grant ends.
      const row = await store.findOidcModel(this.#model, id, now());
      const grantId = row === null ? undefined : (JSON.parse(row.payload) as AdapterPayload).grantId;
      if (typeof grantId === 'string' && this.#model !== 'PushedAuthorizationRequest') {
        await store.deleteOidcGrant(grantId);
        await store.deleteOidcModel('Grant', grantId);
      }
      throw deps.usedTwice(this.#model);
    }

    async destroy(id: string): Promise<void> {
      // A client deleting itself (RFC 7592) goes with its consents, codes and tokens, as an operator's delete.
      if (this.#model === 'Client') await store.deleteOidcClient(id, now());
      else await store.deleteOidcModel(this.#model, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      // A grant's JWT access tokens are not stored: the feed lists a cut-off for them (docs/protocol.md §8 "Revoking API tokens").
      if (this.#model === 'AccessToken') await store.endOidcGrantAccessTokens(grantId, now());
      else await store.deleteOidcGrant(grantId, this.#model);
    }

    #payloadOf(found: { readonly payload: string; readonly consumed_at: number | null } | null): AdapterPayload | undefined {
      if (found === null) return undefined;
      const payload = JSON.parse(found.payload) as AdapterPayload;
      // The library treats a truthy `consumed` as "used": a second use of a code revokes its grant.
      return found.consumed_at === null ? payload : { ...payload, consumed: Math.floor(found.consumed_at / 1000) };
    }
  };
}

/** The row of one object of the library. */
function rowOf(payload: AdapterPayload, expiresAt: number | null) {
  return {
    payload: JSON.stringify(payload),
    grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
    uid: typeof payload.uid === 'string' ? payload.uid : null,
    user_code: typeof payload.userCode === 'string' ? payload.userCode : null,
    expires_at: expiresAt,
  };
}

/**
 * A client the library registered (RFC 7591): its secret is stored as its
 * hash, and the Connect app the registration policy named owns it.
 */
async function upsertClient(store: OidcStore, clientId: string, payload: AdapterPayload, at: number): Promise<void> {
  const metadata: Record<string, unknown> = { ...payload };
  delete metadata.client_id;
  const secret = metadata.client_secret;
  if (typeof secret === 'string' && !isHashedClientSecret(secret)) metadata.client_secret = hashClientSecret(secret);
  const owner = metadata[OWNER_APP_METADATA];
  const text = JSON.stringify(metadata);
  if (await store.updateOidcClient(clientId, { metadata: text }, at)) return;
  const inserted = await store.insertOidcClient({
    client_id: clientId,
    metadata: text,
    owner_app_id: typeof owner === 'string' ? owner : null,
    first_party: false,
    created_at: at,
    updated_at: at,
  });
  if (!inserted) throw new Error('oidc: a registered client id was taken');
}
