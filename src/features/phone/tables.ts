/** The phone hand-offs' table as one owner of the store (src/platform/storage/tables.ts). */
import { rowsAffected, type TableOwner } from '../../platform/storage/index.js';
import { HANDOFF_PURGE_DELAY_MS, HandoffsArea, type HandoffStore } from './store.js';
import { PHONE_MIGRATIONS } from './store-schema.js';

declare module '../../platform/storage/tables.js' {
  interface StoreAreas extends HandoffStore {}
}

export const PHONE_TABLES: TableOwner = {
  migrations: PHONE_MIGRATIONS,
  open: (executor) => ({
    areas: [new HandoffsArea(executor)],
    async purge(now) {
      // An approved hand-off may still be claimed a little after its expiry (handoff.ts).
      const deleted = await executor.db
        .deleteFrom('handoffs')
        .where('expires_at', '<=', now - HANDOFF_PURGE_DELAY_MS)
        .executeTakeFirst();
      return { handoffs: rowsAffected(deleted.numDeletedRows) };
    },
  }),
};
