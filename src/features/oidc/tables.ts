/** The OpenID provider's tables as one owner of the store (src/platform/storage/tables.ts). */
import { rowsAffected, type TableOwner } from '../../platform/storage/index.js';
import { WEBHOOK_LOG_RETENTION_MS } from '../connect/index.js';
import { OidcLogoutsArea, oidcStoreHooks, type OidcLogoutStore } from './logout-store.js';
import { OidcArea, type OidcStore } from './store.js';
import { OIDC_MIGRATIONS } from './store-schema.js';

declare module '../../platform/storage/tables.js' {
  interface StoreAreas extends OidcStore, OidcLogoutStore {}
}

export const OIDC_TABLES: TableOwner = {
  migrations: OIDC_MIGRATIONS,
  // Revoked and replaced sessions, merges, deletions and holds reach the provider's links, grants and tokens.
  hooks: oidcStoreHooks,
  open(executor) {
    const db = executor.db;
    const oidc = new OidcArea(executor);
    return {
      areas: [new OidcLogoutsArea(executor), oidc],
      async purge(now) {
        // Logouts are kept as long as webhook deliveries; a link goes when its host session expires.
        const logouts = await db
          .deleteFrom('oidc_logouts')
          .where('state', '!=', 'pending')
          .where('created_at', '<=', now - WEBHOOK_LOG_RETENTION_MS)
          .executeTakeFirst();
        await db.deleteFrom('oidc_session_links').where('expires_at', '<=', now).execute();
        const models = await db.deleteFrom('oidc_models').where('expires_at', '<=', now).executeTakeFirst();
        await db.deleteFrom('oidc_token_revocations').where('expires_at', '<=', now).execute();
        await oidc.purgeOrphanOidcClients(now);
        return { oidc_logouts: rowsAffected(logouts.numDeletedRows), oidc_models: rowsAffected(models.numDeletedRows) };
      },
    };
  },
};
