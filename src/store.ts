/**
 * The whole storage, composed above every owner of tables
 * (docs/architecture.md "Layers"): the identity core's and each feature's
 * parts of the migrations, merged into one list in a fixed order of owners,
 * and the store opened on them.
 */
import {
  applyMigrations as applyMigrationList,
  mergeMigrations,
  migrateDatabase,
  openKyselyStore,
  type Migration,
  type MigrationReport,
  type OpenDatabase,
  type OpenDatabaseOptions,
  type OpenStoreOptions,
  type Store,
} from './platform/storage/index.js';
import { IDENTITY_MIGRATIONS } from './identity/storage/schema.js';
import { EMAIL_CODE_MIGRATIONS } from './features/email-code/store-schema.js';
import { CONNECT_MIGRATIONS } from './features/connect/index.js';
import { STATS_MIGRATIONS } from './features/stats/store-schema.js';
import { PASSKEY_MIGRATIONS } from './features/passkeys/index.js';
import { PHONE_MIGRATIONS } from './features/phone/store-schema.js';
import { OIDC_MIGRATIONS } from './features/oidc/index.js';

export type { OpenStoreOptions } from './platform/storage/index.js';

/**
 * Every migration, in version order. A version several owners contribute to
 * runs their parts in this order of owners, the order its tables were created
 * in when it was one migration; a fresh database gets exactly that schema
 * (test/storage-schema.test.ts).
 */
export const MIGRATIONS: readonly Migration[] = mergeMigrations([
  IDENTITY_MIGRATIONS,
  EMAIL_CODE_MIGRATIONS,
  CONNECT_MIGRATIONS,
  STATS_MIGRATIONS,
  PASSKEY_MIGRATIONS,
  PHONE_MIGRATIONS,
  OIDC_MIGRATIONS,
]);

/** Applies every migration the database lacks (by default all of {@link MIGRATIONS}), each in its own locked transaction. */
export function applyMigrations(
  database: OpenDatabase,
  options: { now?: () => number; migrations?: readonly Migration[] } = {},
): Promise<MigrationReport> {
  return applyMigrationList(database, options.migrations ?? MIGRATIONS, options);
}

/** For the CLI (`oc-host migrate`): open the database of `databaseUrl`, bring its schema up to date, close it. */
export function migrate(databaseUrl: string, options: OpenDatabaseOptions = {}): Promise<MigrationReport> {
  return migrateDatabase(databaseUrl, MIGRATIONS, options);
}

/** Opens the database of `databaseUrl` (docs/protocol.md §1 `DATABASE_URL`), migrated, as a {@link Store}. */
export function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Promise<Store> {
  return openKyselyStore(databaseUrl, MIGRATIONS, options);
}
