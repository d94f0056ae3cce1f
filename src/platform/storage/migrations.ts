/**
 * The runner of versioned schema migrations, as code, applied at start
 * (openStore) or by the CLI ({@link migrateDatabase}). Each owner of tables
 * (the identity core, each feature) contributes its parts of the migrations
 * beside its storage; {@link mergeMigrations} joins them by version, and
 * src/store.ts gives the one list.
 *
 * Rules:
 * - A migration is never edited once released; a change is a new version.
 * - Each migration runs in its own transaction together with its
 *   `schema_migrations` row, so it is applied completely or not at all.
 * - Instances that start at the same moment must not both apply a version.
 *   Inside each transaction the migrator first takes a lock: on PostgreSQL a
 *   transaction-scoped advisory lock keyed by the current schema, on SQLite the
 *   write lock that `BEGIN IMMEDIATE` takes (sqlite-dialect.ts). Only then does
 *   it look at `schema_migrations`, so the second instance waits, sees the
 *   version applied, and skips it.
 * - A database that holds versions this build does not know (a newer instance
 *   migrated it during a rolling deploy) is accepted: migrations only add.
 *
 * Migrations use Kysely<any> on purpose: they describe the schema as it was at
 * their version, not as the table types describe it today.
 */
import { sql } from 'kysely';
import type { Kysely, Transaction } from 'kysely';
import { openDatabase } from './database.js';
import type { DatabaseEngine, OpenDatabase, OpenDatabaseOptions } from './database.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  // biome-ignore lint/suspicious/noExplicitAny: a migration runs against the schema as it was then, not DatabaseSchema.
  up(db: Kysely<any>, engine: DatabaseEngine): Promise<void>;
}

export interface MigrationReport {
  /** Versions this call applied, in order; empty when the schema was current. */
  readonly applied: ReadonlyArray<{ readonly version: number; readonly name: string }>;
  /** The highest version recorded in the database afterwards. */
  readonly currentVersion: number;
}

/** First key of the two-key advisory lock; the second is the schema's hash. ("oc" 0x0001) */
const MIGRATION_LOCK_CLASS = 0x6f630001;

/** SQLite has no boolean type; an integer restricted to 0/1 stands in (row-mapping.ts). */
export function booleanColumnType(engine: DatabaseEngine) {
  return engine === 'postgres' ? ('boolean' as const) : ('integer' as const);
}

/**
 * One list of migrations from the parts of every owner, given in the fixed
 * order of owners: each version's parts run in that order, in one
 * transaction, under the version's one name (every part of a version names it
 * alike).
 */
export function mergeMigrations(owners: ReadonlyArray<readonly Migration[]>): Migration[] {
  const byVersion = new Map<number, Migration[]>();
  for (const parts of owners) {
    for (const part of parts) byVersion.set(part.version, [...(byVersion.get(part.version) ?? []), part]);
  }
  return [...byVersion.entries()]
    .sort(([a], [b]) => a - b)
    .map(([version, parts]) => {
      const name = parts[0]!.name;
      if (parts.some((part) => part.name !== name)) throw new Error(`storage: the parts of migration ${version} name it differently`);
      return {
        version,
        name,
        async up(db, engine) {
          for (const part of parts) await part.up(db, engine);
        },
      };
    });
}

// biome-ignore lint/suspicious/noExplicitAny: the migration runner works before and across schema versions.
async function lockMigrations(trx: Transaction<any>, engine: DatabaseEngine): Promise<void> {
  // SQLite: the transaction already holds the write lock (BEGIN IMMEDIATE).
  if (engine !== 'postgres') return;
  // Keyed by schema, so test schemas side by side in one database do not wait on each other.
  await sql`SELECT pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_CLASS)}, hashtext(current_schema()))`.execute(trx);
}

// biome-ignore lint/suspicious/noExplicitAny: the migration runner works before and across schema versions.
async function ensureMigrationTable(trx: Transaction<any>): Promise<void> {
  // Under the lock above, so two instances cannot race on CREATE TABLE either.
  await trx.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('version', 'integer', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('applied_at', 'bigint', (column) => column.notNull())
    .execute();
}

/** Applies every migration the database lacks, each in its own locked transaction. */
export async function applyMigrations(
  database: OpenDatabase,
  list: readonly Migration[],
  options: { now?: () => number } = {},
): Promise<MigrationReport> {
  const now = options.now ?? Date.now;
  const migrations = [...list].sort((a, b) => a.version - b.version);
  // biome-ignore lint/suspicious/noExplicitAny: the migration runner works before and across schema versions.
  const db = database.db as unknown as Kysely<any>;
  const applied: Array<{ version: number; name: string }> = [];
  for (const migration of migrations) {
    const didApply = await db.transaction().execute(async (trx) => {
      await lockMigrations(trx, database.engine);
      await ensureMigrationTable(trx);
      const existing = await trx
        .selectFrom('schema_migrations')
        .select('version')
        .where('version', '=', migration.version)
        .executeTakeFirst();
      if (existing) return false;
      await migration.up(trx, database.engine);
      await trx.insertInto('schema_migrations').values({ version: migration.version, name: migration.name, applied_at: now() }).execute();
      return true;
    });
    if (didApply) applied.push({ version: migration.version, name: migration.name });
  }
  const latest = await db
    .selectFrom('schema_migrations')
    .select((eb) => eb.fn.max<number | null>('version').as('version'))
    .executeTakeFirst();
  return { applied, currentVersion: Number(latest?.version ?? 0) };
}

/**
 * For the CLI (`oc-host migrate`, through src/store.ts): open the database of
 * `databaseUrl`, bring its schema up to date with `migrations`, close it.
 */
export async function migrateDatabase(
  databaseUrl: string,
  migrations: readonly Migration[],
  options: OpenDatabaseOptions = {},
): Promise<MigrationReport> {
  const database = await openDatabase(databaseUrl, options);
  try {
    return await applyMigrations(database, migrations);
  } finally {
    await database.close();
  }
}
