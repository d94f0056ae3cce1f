/** Connect's tables (apps, webhooks, deliveries, the webhook keys) as one owner of the store (src/platform/storage/tables.ts). */
import { rowsAffected, type TableOwner } from '../../platform/storage/index.js';
import { ConnectArea, connectAccountHooks, WEBHOOK_LOG_RETENTION_MS, type ConnectStore, type WebhookStore } from './store.js';
import { CONNECT_MIGRATIONS } from './store-schema.js';
import { WEBHOOK_KEY_MIGRATIONS, WebhookKeysArea, type WebhookKeyStore } from './webhook-keys.js';
import { WebhooksArea, webhookNotices } from './webhook-store.js';

declare module '../../platform/storage/tables.js' {
  interface StoreAreas extends ConnectStore, WebhookStore, WebhookKeyStore {}
}

export const CONNECT_TABLES: TableOwner = {
  migrations: [...CONNECT_MIGRATIONS, ...WEBHOOK_KEY_MIGRATIONS],
  // A merge moves or removes the apps the account owns, a deletion removes them; both tell the apps that provisioned it.
  hooks: { apps: connectAccountHooks, appNotices: webhookNotices },
  open: (executor) => ({
    areas: [new ConnectArea(executor), new WebhooksArea(executor), new WebhookKeysArea(executor)],
    async purge(now) {
      // The delivery log keeps finished deliveries 30 days; pending ones stay until they finish.
      const deleted = await executor.db
        .deleteFrom('webhook_deliveries')
        .where('state', '!=', 'pending')
        .where('created_at', '<=', now - WEBHOOK_LOG_RETENTION_MS)
        .executeTakeFirst();
      return { webhook_deliveries: rowsAffected(deleted.numDeletedRows) };
    },
  }),
};
