/**
 * Fresh, disposable databases for tests, on both engines the service supports
 * (docs/architecture.md: "real SQLite and PostgreSQL").
 *
 * - SQLite: a file in a new temporary directory (a file, not `:memory:`, so a
 *   test can open a second connection to the same database).
 * - PostgreSQL: a new schema with a random name inside the database of
 *   `TEST_DATABASE_URL` (default postgres://postgres@127.0.0.1:5432/test),
 *   dropped with everything in it afterwards.
 *
 * PostgreSQL availability: when `CI=true` the PostgreSQL suite must run, so an
 * unreachable server fails the test file. Elsewhere it is skipped with a
 * message saying so, so a laptop without PostgreSQL can still run the rest.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openStore, type OpenStoreOptions, type Store } from '../../src/store.js';
import { redactDatabaseUrl } from '../../src/platform/storage/index.js';
import { nodeSqliteSupported, type SqliteDriverName } from '../../src/platform/storage/sqlite-driver.js';

export type TestEngine = 'sqlite' | 'postgres';

const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

export function postgresTestUrl(): string {
  return process.env.TEST_DATABASE_URL || DEFAULT_TEST_DATABASE_URL;
}

export interface TestDatabase {
  readonly engine: TestEngine;
  /** A DATABASE_URL naming a fresh, empty database (not yet migrated). */
  readonly url: string;
  /** Deletes the database: the temporary directory, or the schema. */
  cleanup(): Promise<void>;
}

export interface TestEngineAvailability {
  readonly engine: TestEngine;
  /** Why this engine's tests are skipped; undefined when they run. */
  readonly skipReason: string | undefined;
}

async function probePostgres(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * The SQLite libraries to test on this Node, each with a reason when it
 * cannot run: node:sqlite needs Node 22.13; better-sqlite3 12 aborts the
 * process on Node 24 and later, so there it is never loaded. CI runs the
 * suite on Node 20 and on Node 24, so each library runs in one of them (and
 * both on Node 22).
 */
export function sqliteDrivers(): Array<{ readonly driver: SqliteDriverName; readonly skipReason: string | undefined }> {
  const major = Number(process.versions.node.split('.')[0]);
  const drivers = [
    {
      driver: 'node' as const,
      skipReason: nodeSqliteSupported() ? undefined : `node:sqlite needs Node 22.13 or later (this is ${process.versions.node})`,
    },
    {
      driver: 'better-sqlite3' as const,
      skipReason: major >= 24 ? `better-sqlite3 12 aborts on Node ${major}; node:sqlite is used there` : undefined,
    },
  ];
  for (const { driver, skipReason } of drivers) {
    if (skipReason !== undefined) console.warn(`\n[storage tests] SKIPPING the SQLite suite on ${driver}: ${skipReason}.\n`);
  }
  return drivers;
}

let availability: Promise<TestEngineAvailability[]> | undefined;

/**
 * The engines to test and whether each runs. Throws when CI=true and
 * PostgreSQL is unreachable: there the PostgreSQL suite is mandatory.
 */
export function testEngines(): Promise<TestEngineAvailability[]> {
  availability ??= (async () => {
    const url = postgresTestUrl();
    const failure = await probePostgres(url);
    if (failure !== undefined) {
      const message = `PostgreSQL at ${redactDatabaseUrl(url)} is unreachable (${failure})`;
      if (process.env.CI === 'true') {
        throw new Error(`test: ${message}; CI=true requires the PostgreSQL suite. Set TEST_DATABASE_URL.`);
      }
      console.warn(
        `\n[storage tests] SKIPPING the PostgreSQL suite: ${message}. ` +
          'Start PostgreSQL or set TEST_DATABASE_URL to run it (it is mandatory when CI=true).\n',
      );
      return [
        { engine: 'sqlite', skipReason: undefined },
        { engine: 'postgres', skipReason: message },
      ];
    }
    return [
      { engine: 'sqlite', skipReason: undefined },
      { engine: 'postgres', skipReason: undefined },
    ];
  })();
  return availability;
}

export async function createTestDatabase(engine: TestEngine): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    const directory = await mkdtemp(join(tmpdir(), 'oc-host-storage-'));
    // A subdirectory that does not exist yet: opening must create it (docs/protocol.md §1).
    const url = `sqlite:${join(directory, 'data', 'oc.sqlite')}`;
    return {
      engine,
      url,
      cleanup: () => rm(directory, { recursive: true, force: true }),
    };
  }
  const base = postgresTestUrl();
  const schema = `oc_test_${randomBytes(8).toString('hex')}`;
  const url = `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`;
  return {
    engine,
    url,
    cleanup: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

export interface TestStore {
  readonly store: Store;
  readonly database: TestDatabase;
  /** Closes the store and deletes its database. */
  dispose(): Promise<void>;
}

/** A migrated store on a fresh database of `engine`. */
export async function openTestStore(engine: TestEngine, options: OpenStoreOptions = {}): Promise<TestStore> {
  const database = await createTestDatabase(engine);
  let store: Store;
  try {
    store = await openStore(database.url, options);
  } catch (error) {
    await database.cleanup();
    throw error;
  }
  return {
    store,
    database,
    dispose: async () => {
      try {
        await store.close();
      } finally {
        await database.cleanup();
      }
    },
  };
}
