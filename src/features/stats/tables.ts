/** The statistics' table as one owner of the store (src/platform/storage/tables.ts). */
import { rowsAffected, type TableOwner } from '../../platform/storage/index.js';
import { ATTEST_EVENT_RETENTION_MS, StatsArea, type StatsStore } from './store.js';
import { STATS_MIGRATIONS } from './store-schema.js';

declare module '../../platform/storage/tables.js' {
  interface StoreAreas extends StatsStore {}
}

export const STATS_TABLES: TableOwner = {
  migrations: STATS_MIGRATIONS,
  open: (executor) => ({
    areas: [new StatsArea(executor)],
    async purge(now) {
      const deleted = await executor.db
        .deleteFrom('attest_events')
        .where('at', '<=', now - ATTEST_EVENT_RETENTION_MS)
        .executeTakeFirst();
      return { attest_events: rowsAffected(deleted.numDeletedRows) };
    },
  }),
};
