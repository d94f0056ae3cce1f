/**
 * What the store is built on, for SQLite and PostgreSQL alike: the database
 * opened and migrated, under one shared executor (executor.ts) that every
 * area object runs on; src/store.ts builds the whole store from the identity
 * core's and each feature's areas.
 */
import { openDatabase } from './database.js';
import type { OpenDatabaseOptions } from './database.js';
import { StoreExecutor } from './executor.js';
import type { StoreHooks } from './hooks.js';
import { applyMigrations, type Migration } from './migrations.js';

/** The area's methods, bound to it, as own properties (so they can be spread into one object). */
export function methodsOf<T extends object>(area: T): { [K in keyof T]: T[K] } {
  const bound: Record<string, unknown> = {};
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(area))) {
    const value = (area as Record<string, unknown>)[name];
    if (name !== 'constructor' && typeof value === 'function') bound[name] = value.bind(area);
  }
  return bound as { [K in keyof T]: T[K] };
}

export interface OpenStoreOptions extends OpenDatabaseOptions {
  /** Apply pending migrations before returning (default true). The CLI's `migrate` does it separately. */
  readonly migrate?: boolean;
}

/**
 * Opens the database of `databaseUrl` (docs/protocol.md §1 `DATABASE_URL`),
 * migrated by `migrations` (every owner's, src/store.ts), as the executor
 * every area of the store runs on, with the `hooks` that carry the core's
 * changes to the features' tables (hooks.ts).
 */
export async function openStoreExecutor(
  databaseUrl: string,
  migrations: readonly Migration[],
  hooks: StoreHooks,
  options: OpenStoreOptions = {},
): Promise<StoreExecutor> {
  const database = await openDatabase(databaseUrl, options);
  if (options.migrate ?? true) {
    try {
      await applyMigrations(database, migrations);
    } catch (error) {
      await database.close();
      throw error;
    }
  }
  return new StoreExecutor(database, hooks);
}
