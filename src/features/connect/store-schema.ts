/**
 * Connect's tables (its apps and their webhook deliveries), as this owner's parts of the migrations (docs/architecture.md "A
 * storage area"): the runner (src/platform/storage/migrations.ts) merges every
 * owner's parts by version, so each version keeps the number and name it was
 * released with, and applies them in a fixed order of owners (src/store.ts).
 * Like every migration, a part is never edited once released.
 */
import { sql } from 'kysely';
import type { Migration, OutboxColumns } from '../../platform/storage/index.js';

export interface ConnectAppsTable {
  id: string;
  owner_account_id: string;
  name: string;
  key_hash: string;
  created_at: number;
  rotated_at: number | null;
  webhook_url: string | null;
}

/** docs/protocol.md §6 "Webhooks": one row per (event, app), the outbox and the delivery log in one. */
interface WebhookDeliveriesTable extends OutboxColumns {
  id: string;
  app_id: string;
  event_type: string;
  /** The request body exactly as signed and sent. */
  payload: string;
  created_at: number;
}

declare module '../../platform/storage/schema.js' {
  interface DatabaseSchema {
    connect_apps: ConnectAppsTable;
    webhook_deliveries: WebhookDeliveriesTable;
  }
}

const connectApps: Migration = {
  version: 2,
  name: 'email_codes_connect_apps_attest_events',
  async up(db) {
    // docs/protocol.md §6 (Connect): integrator apps; API keys are stored hashed.
    await db.schema
      .createTable('connect_apps')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('owner_account_id', 'text', (column) => column.notNull().references('accounts.id'))
      .addColumn('name', 'text', (column) => column.notNull())
      .addColumn('key_hash', 'text', (column) => column.notNull().unique())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('rotated_at', 'bigint')
      .execute();
    await db.schema.createIndex('connect_apps_owner').on('connect_apps').column('owner_account_id').execute();
  },
};

const webhooks: Migration = {
  version: 12,
  name: 'webhooks',
  async up(db) {
    // docs/protocol.md §6 "Webhooks": an app's endpoint, and the outbox that is
    // also the delivery log.
    await db.schema.alterTable('connect_apps').addColumn('webhook_url', 'text').execute();
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('app_id', 'text', (column) => column.notNull())
      .addColumn('event_type', 'text', (column) => column.notNull())
      .addColumn('payload', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('state', 'text', (column) => column.notNull())
      .addColumn('attempts', 'integer', (column) => column.notNull())
      .addColumn('next_attempt_at', 'bigint', (column) => column.notNull())
      .addColumn('lease_owner', 'text')
      .addColumn('lease_until', 'bigint')
      .addColumn('last_attempt_at', 'bigint')
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('delivered_at', 'bigint')
      .addCheckConstraint('webhook_deliveries_state', sql`state IN ('pending', 'delivered', 'failed')`)
      .execute();
    await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
    await db.schema.createIndex('webhook_deliveries_app').on('webhook_deliveries').columns(['app_id', 'created_at']).execute();
  },
};

/** This owner's parts, in version order. */
export const CONNECT_MIGRATIONS: readonly Migration[] = [connectApps, webhooks];
