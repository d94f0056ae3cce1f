/**
 * The whole storage, composed above every owner of tables
 * (docs/architecture.md "Layers", "A storage area"): the identity core
 * first, then each feature that keeps rows, in the order of the list of the
 * features (src/feature-list.ts). Their migrations merge into one list,
 * their hooks into one set, and their areas, over one shared executor, into
 * one {@link Store} (src/platform/storage/tables.ts).
 */
import {
  applyMigrations as applyMigrationList,
  composeStore,
  joinStoreHooks,
  mergeMigrations,
  migrateDatabase,
  openStoreExecutor,
  type Migration,
  type MigrationReport,
  type OpenDatabase,
  type OpenDatabaseOptions,
  type OpenStoreOptions,
  type Store,
  type TableOwner,
} from './platform/storage/index.js';
import { IDENTITY_TABLES } from './identity/storage/tables.js';
import { FEATURES } from './feature-list.js';

export type { OpenStoreOptions, Store } from './platform/storage/index.js';

/** Every owner of tables: the identity core, then the features in the order of their list. */
const OWNERS: readonly TableOwner[] = [IDENTITY_TABLES, ...FEATURES.flatMap((entry) => (entry.tables === undefined ? [] : [entry.tables]))];

/**
 * Every migration, in version order. A version several owners contribute to
 * runs their parts in the order of the owners, the order its tables were
 * created in when it was one migration; a fresh database gets exactly that
 * schema (test/storage-schema.test.ts).
 */
export const MIGRATIONS: readonly Migration[] = mergeMigrations(OWNERS.map((owner) => owner.migrations));

/**
 * Where a change to an account or a session reaches the features' tables, in
 * its own transaction (src/platform/storage/hooks.ts): each hook filled by
 * the one owner whose rows it changes.
 */
const STORE_HOOKS = joinStoreHooks(OWNERS.map((owner) => owner.hooks));

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
export async function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Promise<Store> {
  return composeStore(await openStoreExecutor(databaseUrl, MIGRATIONS, STORE_HOOKS, options), OWNERS);
}
