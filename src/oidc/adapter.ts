/**
 * The provider library's storage adapter on our storage (docs/protocol.md §8
 * "Storage"): every code, token, grant, session and interaction is a row of
 * `oidc_models`, so every instance on the database sees the same ones, on
 * SQLite and PostgreSQL alike. Clients come from `oidc_clients`, where the
 * secret is kept as its SHA-256 (src/oidc/clients.ts).
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import type { OidcStore } from '../storage/index.js';
import { clientMetadataOf } from './clients.js';

/** Builds the adapter class the provider instantiates once per model name. */
export function storageAdapter(store: OidcStore, now: () => number): new (name: string) => Adapter {
  return class StorageAdapter implements Adapter {
    readonly #model: string;

    constructor(name: string) {
      this.#model = name;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      if (this.#model === 'Client') throw new Error('oidc: clients are registered through src/oidc/clients.ts');
      await store.putOidcModel(this.#model, id, {
        payload: JSON.stringify(payload),
        grant_id: typeof payload.grantId === 'string' ? payload.grantId : null,
        uid: typeof payload.uid === 'string' ? payload.uid : null,
        user_code: typeof payload.userCode === 'string' ? payload.userCode : null,
        expires_at: expiresIn === undefined ? null : now() + expiresIn * 1000,
      });
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.#model === 'Client') {
        const client = await store.findOidcClient(id);
        return client === null ? undefined : clientMetadataOf(client);
      }
      return this.#payloadOf(await store.findOidcModel(this.#model, id, now()));
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.#payloadOf(await store.findOidcModelByUserCode(this.#model, userCode, now()));
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.#payloadOf(await store.findOidcModelByUid(this.#model, uid, now()));
    }

    async consume(id: string): Promise<void> {
      await store.consumeOidcModel(this.#model, id, now());
    }

    async destroy(id: string): Promise<void> {
      await store.deleteOidcModel(this.#model, id);
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await store.deleteOidcGrant(grantId, this.#model);
    }

    #payloadOf(found: { readonly payload: string; readonly consumed_at: number | null } | null): AdapterPayload | undefined {
      if (found === null) return undefined;
      const payload = JSON.parse(found.payload) as AdapterPayload;
      // The library treats a truthy `consumed` as "used": a second use of a code revokes its grant.
      return found.consumed_at === null ? payload : { ...payload, consumed: Math.floor(found.consumed_at / 1000) };
    }
  };
}
