/**
 * Opening and closing the database named by `DATABASE_URL` (docs/protocol.md §1):
 * `sqlite:<path>` (the embedded default, created on first start),
 * `sqlite::memory:`, or `postgres://…` / `postgresql://…`.
 *
 * Everything engine-specific about connections lives here: SQLite pragmas and
 * file locking, the PostgreSQL pool, its schema isolation and its bigint
 * parsing. Above this file both engines are one Kysely<DatabaseSchema>.
 */
import { closeSync, existsSync, fchmodSync, mkdirSync, openSync, realpathSync, statSync, unlinkSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect, type PostgresPool, type PostgresPoolClient, type SqliteDatabase, type SqliteStatement } from 'kysely';
import pg from 'pg';
import type { DatabaseSchema } from './schema.js';
import { SharedFileSqliteDialect } from './sqlite-dialect.js';
import { openSqliteConnection, type SqliteConnection, type SqliteDriverChoice, type SqliteDriverName } from './sqlite-driver.js';

export type DatabaseEngine = 'sqlite' | 'postgres';

export type DatabaseLocation =
  | { readonly engine: 'sqlite'; readonly filename: string }
  | { readonly engine: 'postgres'; readonly connectionString: string; readonly schema: string | undefined };

export interface OpenDatabaseOptions {
  /**
   * PostgreSQL only: keep every table in this schema (created when missing)
   * instead of the role's default search path. Same as `?schema=NAME` in the
   * URL; tests use it to isolate themselves inside one database.
   */
  readonly schema?: string;
  /** SQLite only: which library (`SQLITE_DRIVER`); default `auto` (node:sqlite where the running Node has it). */
  readonly sqliteDriver?: SqliteDriverChoice;
  /** PostgreSQL only: connections in the pool. Default 10. */
  readonly poolSize?: number;
  /**
   * PostgreSQL only: errors of idle pooled connections (the server restarted,
   * the network dropped). The pool discards such a connection and opens a new
   * one on the next query, so these are reports, not failures. Default: logged
   * to stderr.
   */
  readonly onBackgroundError?: (error: Error) => void;
  /**
   * Open only a database this service has already set up (it has a
   * `schema_migrations` table), and create nothing: no SQLite folder or file,
   * no PostgreSQL schema. Otherwise {@link DatabaseMissingError}. The CLI's
   * commands other than `migrate` and `serve` open this way
   * (docs/operations.md "Command line"), so a mistyped `DATABASE_URL` is
   * refused instead of answered from a new, empty database.
   */
  readonly mustExist?: boolean;
  /**
   * SQLite only: a database file (or its `-wal`, `-shm`, `-journal`) that
   * other local users can open (docs/operations.md "Files and permissions").
   * Default: {@link exposedFileWarning} on stderr.
   */
  readonly onExposedFile?: (file: ExposedFile) => void;
}

/** A database file whose mode lets other local users open it. */
export interface ExposedFile {
  /** Absolute path. */
  readonly path: string;
  /** The permission bits, e.g. 0o644. */
  readonly mode: number;
}

/** `mustExist` was asked for and there is no database of this service at the URL (docs/errors.md "Internal errors"). */
export class DatabaseMissingError extends Error {
  readonly code = 'database_missing';
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseMissingError';
  }
}

export interface OpenDatabase {
  readonly engine: DatabaseEngine;
  readonly db: Kysely<DatabaseSchema>;
  /** The PostgreSQL schema in use when one was asked for. */
  readonly schema: string | undefined;
  /** The SQLite library in use; undefined on PostgreSQL. */
  readonly sqliteDriver: SqliteDriverName | undefined;
  /**
   * Runs an already compiled query straight on the driver, skipping Kysely's
   * per-query connection handling, which costs several times the look-up
   * itself on the session hot path (measured: 13 µs of SQLite work inside
   * about 70 µs). Answers undefined when the query must take the ordinary
   * path (SQLite: the connection is held by a query or transaction).
   */
  runCompiled(sqlText: string, parameters: readonly unknown[]): Promise<unknown[]> | undefined;
  /** Closes the file or the pool. Safe to call twice. */
  close(): Promise<void>;
}

/** SQLite's busy_timeout: how long a writer waits for another process's lock. */
const SQLITE_BUSY_TIMEOUT_MS = 5000;

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/**
 * docs/operations.md "Files and permissions": the database holds the signing
 * keys, the webhook key and the server secret, so a folder created for it
 * and the file itself are its owner's alone. SQLite gives the `-wal`, `-shm`
 * and `-journal` files the mode of the database file.
 */
const PRIVATE_DIRECTORY_MODE = 0o700;
const PRIVATE_FILE_MODE = 0o600;
/** Permission bits for the group and for everyone else. */
const OTHERS_BITS = 0o077;
const SIDE_FILE_SUFFIXES = ['-wal', '-shm', '-journal'] as const;

const MISSING_HINT = 'check DATABASE_URL; `oc-host migrate` or the first start of the service creates it';

/** The URL with any password masked, for error messages. */
export function redactDatabaseUrl(databaseUrl: string): string {
  return databaseUrl.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}

export function parseDatabaseUrl(databaseUrl: string, options: { schema?: string } = {}): DatabaseLocation {
  if (databaseUrl.startsWith('sqlite:')) {
    let filename = databaseUrl.slice('sqlite:'.length);
    // `sqlite:///abs/path` and `sqlite://rel/path` are common spellings of the same thing.
    if (filename.startsWith('//')) filename = filename.slice(2);
    if (filename === '') throw new Error('storage: DATABASE_URL `sqlite:` needs a path or `:memory:`');
    if (options.schema !== undefined) throw new Error('storage: a schema applies to PostgreSQL only');
    return { engine: 'sqlite', filename };
  }
  if (databaseUrl.startsWith('postgres://') || databaseUrl.startsWith('postgresql://')) {
    let url: URL;
    try {
      url = new URL(databaseUrl);
    } catch {
      throw new Error(`storage: DATABASE_URL is not a valid URL: ${redactDatabaseUrl(databaseUrl)}`);
    }
    const fromUrl = url.searchParams.get('schema') ?? undefined;
    url.searchParams.delete('schema');
    if (fromUrl !== undefined && options.schema !== undefined && fromUrl !== options.schema) {
      throw new Error(`storage: DATABASE_URL names schema ${fromUrl} but the option names ${options.schema}`);
    }
    const schema = options.schema ?? fromUrl;
    if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
      throw new Error(`storage: schema name ${JSON.stringify(schema)} must match ${SCHEMA_NAME.source}`);
    }
    return { engine: 'postgres', connectionString: url.toString(), schema };
  }
  throw new Error(`storage: DATABASE_URL must start with sqlite: or postgres:// (got ${redactDatabaseUrl(databaseUrl)})`);
}

export async function openDatabase(databaseUrl: string, options: OpenDatabaseOptions = {}): Promise<OpenDatabase> {
  const location = parseDatabaseUrl(databaseUrl, options.schema === undefined ? {} : { schema: options.schema });
  return location.engine === 'sqlite' ? openSqlite(location.filename, options) : openPostgres(location, options);
}

/** The warning for a database file others can open, with the command that closes it. */
export function exposedFileWarning(file: ExposedFile): string {
  const quoted = /^[\w./+-]+$/.test(file.path) ? file.path : `'${file.path.replace(/'/g, `'\\''`)}'`;
  return (
    `storage: ${file.path} has mode ${octalMode(file.mode)}, so other local users can open it, and it holds the ` +
    `signing keys and the server secret; restrict it with chmod 600 ${quoted}`
  );
}

/** A mode as four octal digits (0644), as chmod and ls speak of it. */
export function octalMode(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

/**
 * Creates the folders and an empty database file that only the owner can
 * open, before SQLite opens it: SQLite itself would create the file with
 * 0644 under the usual umask. Answers whether this call created the file.
 * An existing file is left as it is (docs/operations.md "Files and permissions").
 */
function createPrivateFile(filename: string): boolean {
  // The mode applies to every folder the call creates; existing ones keep theirs.
  mkdirSync(dirname(resolve(filename)), { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  let descriptor: number;
  try {
    // Exclusive: of two processes starting at once, one creates it, the other opens it.
    descriptor = openSync(filename, 'wx', PRIVATE_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    // The umask may have taken more than the group's and others' bits.
    fchmodSync(descriptor, PRIVATE_FILE_MODE);
  } finally {
    closeSync(descriptor);
  }
  return true;
}

/** The database file and its side files that others can open. */
function exposedFiles(filename: string): ExposedFile[] {
  const path = resolve(filename);
  const found: ExposedFile[] = [];
  for (const candidate of [path, ...SIDE_FILE_SUFFIXES.map((suffix) => `${path}${suffix}`)]) {
    const mode = statSync(candidate, { throwIfNoEntry: false })?.mode;
    if (mode !== undefined && (mode & OTHERS_BITS) !== 0) found.push({ path: candidate, mode: mode & 0o777 });
  }
  return found;
}

/** Whether the database holds this service's migration table (its first migration creates it). */
function sqliteHasMigrationTable(connection: SqliteConnection): boolean {
  const rows = connection.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").all([]);
  return rows.length > 0;
}

async function openSqlite(filename: string, options: OpenDatabaseOptions): Promise<OpenDatabase> {
  const inMemory = filename === ':memory:';
  let created = false;
  if (options.mustExist) {
    // Checked before opening: opening would create the file.
    if (!inMemory && !existsSync(filename)) throw new DatabaseMissingError(`storage: no database at ${resolve(filename)}; ${MISSING_HINT}`);
  } else if (!inMemory) {
    created = createPrivateFile(filename);
  }
  // busy_timeout is set first, as the library opens: the journal-mode switch
  // below may itself wait for a lock.
  let connection: SqliteConnection;
  try {
    connection = await openSqliteConnection(filename, { busyTimeoutMs: SQLITE_BUSY_TIMEOUT_MS, driver: options.sqliteDriver });
  } catch (error) {
    // The library could not be loaded or open it: take back the empty file made for it.
    if (created && statSync(filename, { throwIfNoEntry: false })?.size === 0) unlinkSync(filename);
    throw error;
  }
  try {
    // Before the pragmas, which would write: WAL mode is kept in the file.
    if (options.mustExist && !sqliteHasMigrationTable(connection)) {
      throw new DatabaseMissingError(
        `storage: ${inMemory ? 'an in-memory database' : resolve(filename)} holds no oc-host database; ${MISSING_HINT}`,
      );
    }
    // WAL lets readers run while one writer commits; NORMAL is durable in WAL
    // except for the last commits before a power cut, which a session store can
    // afford (a lost row means one more sign-in).
    connection.exec('PRAGMA journal_mode = WAL');
    connection.exec('PRAGMA synchronous = NORMAL');
    // SQLite does not enforce REFERENCES unless asked, per connection.
    connection.exec('PRAGMA foreign_keys = ON');
  } catch (error) {
    connection.close();
    throw error;
  }
  if (!inMemory) {
    const report = options.onExposedFile ?? ((file: ExposedFile) => console.error(exposedFileWarning(file)));
    for (const file of exposedFiles(filename)) report(file);
  }
  const fileKey = inMemory ? undefined : realpathSync(filename);
  const cached = withStatementCache(connection);
  const dialect = new SharedFileSqliteDialect({ database: cached }, fileKey);
  const db = new Kysely<DatabaseSchema>({ dialect });
  const runCompiled = (sqlText: string, parameters: readonly unknown[]): Promise<unknown[]> | undefined => {
    const statement = cached.prepare(sqlText);
    return dialect.runIfIdle(() => {
      // As Kysely's own SQLite connection does: rows for readers, a run otherwise.
      if (statement.reader) return Promise.resolve(statement.all(parameters));
      statement.run(parameters);
      return Promise.resolve([]);
    });
  };
  return { engine: 'sqlite', db, schema: undefined, sqliteDriver: connection.driver, runCompiled, close: closeOnce(() => db.destroy()) };
}

/** Distinct SQL texts kept prepared; the store issues a few dozen. */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Kysely prepares every query anew, and preparing costs more than running a
 * short indexed look-up. Statements are reusable in better-sqlite3, and
 * Kysely runs one query at a time on the connection and never streams here,
 * so a statement is never in use twice at once.
 */
function withStatementCache(connection: SqliteConnection): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    prepare(sqlText: string) {
      let statement = statements.get(sqlText);
      if (statement === undefined) {
        statement = connection.prepare(sqlText);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value as string);
        statements.set(sqlText, statement);
      }
      return statement;
    },
    close() {
      statements.clear();
      connection.close();
    },
  };
}

/**
 * int8 (BIGINT, and every count(*)) arrives from PostgreSQL as a string because
 * it can exceed 2^53. This store keeps only epoch milliseconds and counts in
 * BIGINT columns, which stay far below that, so they become plain numbers here
 * and row mapping never has to care; a value that would lose precision is an
 * error rather than a silent rounding.
 */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new Error(`storage: bigint ${text} is outside the safe integer range`);
  return value;
}

async function openPostgres(
  location: Extract<DatabaseLocation, { engine: 'postgres' }>,
  options: OpenDatabaseOptions,
): Promise<OpenDatabase> {
  let connectionString = location.connectionString;
  if (location.schema !== undefined) {
    // With mustExist a missing schema is refused below (no table found), not created.
    if (!options.mustExist) await createSchemaIfMissing(connectionString, location.schema);
    // The search path travels in the startup packet of every pooled connection,
    // so no query can ever run before it is set. The schema name was checked
    // against SCHEMA_NAME, so it needs no quoting.
    const url = new URL(connectionString);
    const existing = url.searchParams.get('options');
    url.searchParams.set('options', `${existing ? `${existing} ` : ''}-c search_path=${location.schema}`);
    connectionString = url.toString();
  }
  const types = new pg.TypeOverrides();
  types.setTypeParser(20, 'text', parseInt8);
  const pool = new pg.Pool({ connectionString, max: options.poolSize ?? 10, types });
  const report =
    options.onBackgroundError ?? ((error: Error) => console.error(`storage: idle PostgreSQL connection failed: ${error.message}`));
  pool.on('error', report);
  if (options.mustExist) await refuseMissingPostgres(pool, location);
  const db = new Kysely<DatabaseSchema>({ dialect: new PostgresDialect({ pool: withNamedStatements(pool) }) });
  // Autocommit queries on any pooled connection: nothing to coordinate with.
  const runCompiled = (sqlText: string, parameters: readonly unknown[]): Promise<unknown[]> =>
    pool.query({ name: statementName(sqlText), text: sqlText, values: parameters as unknown[] }).then((result) => result.rows);
  return { engine: 'postgres', db, schema: location.schema, sqliteDriver: undefined, runCompiled, close: closeOnce(() => db.destroy()) };
}

/** Statements worth preparing once per connection: data queries, not DDL or transaction control. */
const PREPARABLE = /^\s*(select|insert|update|delete|with)\b/i;

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans it each
 * time; for the short indexed look-ups of the session hot path that is most
 * of the cost (measured here: 0.21-0.36 ms unnamed against 0.09 ms named).
 * Naming each distinct SQL text makes node-postgres prepare it once per
 * connection and then only bind and execute.
 */
const statementNames = new Map<string, string>();

/** A stable name per SQL text, so every connection prepares it once. */
function statementName(sqlText: string): string {
  let name = statementNames.get(sqlText);
  if (name === undefined) {
    name = `oc_${createHash('sha256').update(sqlText).digest('hex').slice(0, 24)}`;
    if (statementNames.size < 1024) statementNames.set(sqlText, name);
  }
  return name;
}

function withNamedStatements(pool: pg.Pool): PostgresPool {
  const nameOf = statementName;
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      return {
        query: ((sqlOrCursor: unknown, parameters?: ReadonlyArray<unknown>): unknown => {
          if (typeof sqlOrCursor === 'string' && PREPARABLE.test(sqlOrCursor)) {
            return client.query({ name: nameOf(sqlOrCursor), text: sqlOrCursor, values: parameters as unknown[] });
          }
          return client.query(sqlOrCursor as string, parameters as unknown[]);
        }) as unknown as PostgresPoolClient['query'],
        release: () => client.release(),
      };
    },
    end: () => pool.end(),
  };
}

/** PostgreSQL's code for a database that does not exist (invalid_catalog_name). */
const NO_SUCH_DATABASE = '3D000';

/** For `mustExist`: the database and the schema must exist and hold this service's migration table. */
async function refuseMissingPostgres(pool: pg.Pool, location: Extract<DatabaseLocation, { engine: 'postgres' }>): Promise<void> {
  const where = redactDatabaseUrl(location.connectionString) + (location.schema === undefined ? '' : ` (schema ${location.schema})`);
  let present: boolean;
  try {
    // to_regclass looks along the search path, which names only the schema asked for.
    const result = await pool.query<{ present: boolean }>("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
    present = result.rows[0]?.present === true;
  } catch (error) {
    await pool.end();
    if ((error as { code?: unknown }).code === NO_SUCH_DATABASE)
      throw new DatabaseMissingError(`storage: no database at ${where}; ${MISSING_HINT}`);
    throw error;
  }
  if (!present) {
    await pool.end();
    throw new DatabaseMissingError(`storage: ${where} holds no oc-host database; ${MISSING_HINT}`);
  }
}

async function createSchemaIfMissing(connectionString: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(schema)}`);
  } catch (error) {
    // Two instances creating the schema at the same moment: IF NOT EXISTS is
    // not atomic in PostgreSQL, the loser sees a duplicate, and the schema exists.
    const code = (error as { code?: unknown }).code;
    if (code !== '42P06' && code !== '23505') throw error;
  } finally {
    await client.end();
  }
}

function closeOnce(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= close();
    return closing;
  };
}
