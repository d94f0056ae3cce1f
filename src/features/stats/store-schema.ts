/**
 * The counters of check and verify calls, as this owner's parts of the migrations (docs/architecture.md "A
 * storage area"): the runner (src/platform/storage/migrations.ts) merges every
 * owner's parts by version, so each version keeps the number and name it was
 * released with, and applies them in a fixed order of owners (src/store.ts).
 * Like every migration, a part is never edited once released.
 */
import { sql, type Generated } from 'kysely';
import type { Migration } from '../../platform/storage/index.js';

/** docs/api.md: the two attestation routes counted by /api/family-stats. */
export type AttestEventKind = 'check' | 'verify';

interface AttestEventsTable {
  id: Generated<number>;
  kind: AttestEventKind;
  at: number;
  /** Calls this row stands for (migration 3); the counter writes batches. */
  count: Generated<number>;
}

declare module '../../platform/storage/schema.js' {
  interface DatabaseSchema {
    attest_events: AttestEventsTable;
  }
}

const attestEvents: Migration = {
  version: 2,
  name: 'email_codes_connect_apps_attest_events',
  async up(db, engine) {
    // docs/protocol.md §6 (/api/family-stats): 24-hour counters of check and verify calls.
    await db.schema
      .createTable('attest_events')
      .$call((table) =>
        engine === 'postgres'
          ? table.addColumn('id', 'bigint', (column) => column.primaryKey().generatedByDefaultAsIdentity())
          : // INTEGER PRIMARY KEY is SQLite's rowid: assigned on insert, no extra index.
            table.addColumn('id', 'integer', (column) => column.primaryKey()),
      )
      .addColumn('kind', 'text', (column) => column.notNull())
      .addColumn('at', 'bigint', (column) => column.notNull())
      .addCheckConstraint('attest_events_kind', sql`kind IN ('check', 'verify')`)
      .execute();
    await db.schema.createIndex('attest_events_kind_at').on('attest_events').columns(['kind', 'at']).execute();
  },
};

const batchedAttestEvents: Migration = {
  version: 3,
  name: 'attest_events_count',
  async up(db) {
    // One row now stands for a batch of calls, written at most once a second
    // per kind (src/features/stats/counter.ts), instead of one row per request.
    await db.schema
      .alterTable('attest_events')
      .addColumn('count', 'bigint', (column) => column.notNull().defaultTo(1))
      .execute();
  },
};

/** This owner's parts, in version order. */
export const STATS_MIGRATIONS: readonly Migration[] = [attestEvents, batchedAttestEvents];
