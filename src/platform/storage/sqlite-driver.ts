/**
 * The SQLite library under the store: Node's built-in `node:sqlite` where the
 * running Node has it unflagged (22.13 and later), else better-sqlite3, an
 * optional dependency loaded only when it is the one chosen. better-sqlite3
 * 12 aborts the process on Node 24 (its statement destructor runs after the
 * environment is gone), so on such a Node it must never be loaded at all,
 * and `node:sqlite` needs no native build.
 *
 * Both libraries are shaped here into the one interface Kysely's SQLite
 * dialect expects (`SqliteDatabase`): positional parameters as an array,
 * `reader` telling whether a statement returns rows, `run` answering
 * `{changes, lastInsertRowid}`.
 */
import type { SqliteDatabase, SqliteStatement } from 'kysely';

export type SqliteDriverName = 'node' | 'better-sqlite3';
/** `SQLITE_DRIVER`: `auto` picks `node` where it is available. */
export type SqliteDriverChoice = 'auto' | SqliteDriverName;

/** The first release line where `node:sqlite` loads without a flag. */
const NODE_SQLITE_SINCE: readonly [number, number] = [22, 13];

export interface SqliteConnection extends SqliteDatabase {
  readonly driver: SqliteDriverName;
  /** Runs statements that take no parameters and return nothing (pragmas). */
  exec(sqlText: string): void;
}

export interface OpenSqliteOptions {
  /** How long a writer waits for another connection's lock, ms. */
  readonly busyTimeoutMs: number;
  readonly driver?: SqliteDriverChoice | undefined;
}

/** Whether this Node has `node:sqlite` without a flag. */
export function nodeSqliteSupported(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > NODE_SQLITE_SINCE[0] || (major === NODE_SQLITE_SINCE[0] && minor >= NODE_SQLITE_SINCE[1]);
}

/** The driver `choice` resolves to on this Node, before anything is loaded. */
export function resolveSqliteDriver(choice: SqliteDriverChoice = 'auto'): SqliteDriverName {
  if (choice !== 'auto') return choice;
  return nodeSqliteSupported() ? 'node' : 'better-sqlite3';
}

export async function openSqliteConnection(filename: string, options: OpenSqliteOptions): Promise<SqliteConnection> {
  const driver = resolveSqliteDriver(options.driver);
  if (driver === 'node') {
    if (!nodeSqliteSupported()) {
      throw new Error(`storage: SQLITE_DRIVER=node needs Node ${NODE_SQLITE_SINCE.join('.')} or later (this is ${process.versions.node})`);
    }
    return openWithNodeSqlite(filename, options.busyTimeoutMs);
  }
  return openWithBetterSqlite3(filename, options.busyTimeoutMs);
}

/**
 * The part of `node:sqlite` used here, declared locally: the type package
 * matches the oldest supported Node (20), which has no such module.
 */
type SqliteValue = null | number | bigint | string | Uint8Array;
interface NodeSqliteStatement {
  all(...parameters: SqliteValue[]): unknown[];
  run(...parameters: SqliteValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  iterate(...parameters: SqliteValue[]): IterableIterator<unknown>;
  /** Since Node 22.16. */
  columns?(): unknown[];
}
interface NodeSqliteModule {
  DatabaseSync: new (
    filename: string,
  ) => {
    exec(sqlText: string): void;
    prepare(sqlText: string): NodeSqliteStatement;
    close(): void;
  };
}

/** A variable, so the compiler does not look for the module's types. */
const NODE_SQLITE = 'node:sqlite';

let nodeSqlite: Promise<NodeSqliteModule> | undefined;

/**
 * Loads `node:sqlite` once. Node 22 announces it with an ExperimentalWarning
 * on first load; that one warning, and only it, is kept out of the log: the
 * module is the deliberate choice here, and every other warning still shows.
 */
function loadNodeSqlite(): Promise<NodeSqliteModule> {
  nodeSqlite ??= (async () => {
    const emitWarning = process.emitWarning;
    process.emitWarning = function filtered(this: NodeJS.Process, warning: string | Error, ...rest: unknown[]): void {
      const text = typeof warning === 'string' ? warning : warning.message;
      const type =
        typeof rest[0] === 'string'
          ? rest[0]
          : ((rest[0] as { type?: string } | undefined)?.type ?? (warning instanceof Error ? warning.name : undefined));
      if (type === 'ExperimentalWarning' && text.startsWith('SQLite is an experimental feature')) return;
      (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
    } as typeof process.emitWarning;
    try {
      return (await import(NODE_SQLITE)) as NodeSqliteModule;
    } finally {
      process.emitWarning = emitWarning;
    }
  })();
  return nodeSqlite;
}

/**
 * node:sqlite reports every SQLite failure as `ERR_SQLITE_ERROR` with the
 * numeric extended result code in `errcode`; better-sqlite3 names it in
 * `code`. The store tells a lost race from a failure by that name, so
 * node:sqlite's errors get the same names here (SQLite's result codes).
 */
const RESULT_CODE_NAMES: ReadonlyMap<number, string> = new Map([
  [5, 'SQLITE_BUSY'],
  [6, 'SQLITE_LOCKED'],
  [19, 'SQLITE_CONSTRAINT'],
  [275, 'SQLITE_CONSTRAINT_CHECK'],
  [787, 'SQLITE_CONSTRAINT_FOREIGNKEY'],
  [1299, 'SQLITE_CONSTRAINT_NOTNULL'],
  [1555, 'SQLITE_CONSTRAINT_PRIMARYKEY'],
  [2067, 'SQLITE_CONSTRAINT_UNIQUE'],
]);

function named<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    const errcode = (error as { errcode?: unknown } | null)?.errcode;
    const name = typeof errcode === 'number' ? RESULT_CODE_NAMES.get(errcode) : undefined;
    if (name !== undefined) Object.defineProperty(error, 'code', { value: name, configurable: true, enumerable: true, writable: true });
    throw error;
  }
}

/** Statements that return rows, for a Node whose `StatementSync` cannot list its columns (before 22.16). */
const RETURNS_ROWS = /^\s*(select|with|pragma|values|explain)\b|\breturning\b/i;

async function openWithNodeSqlite(filename: string, busyTimeoutMs: number): Promise<SqliteConnection> {
  const { DatabaseSync } = await loadNodeSqlite();
  const database = new DatabaseSync(filename);
  database.exec(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  return {
    driver: 'node',
    exec: (sqlText) => named(() => database.exec(sqlText)),
    close: () => database.close(),
    prepare(sqlText: string): SqliteStatement {
      const statement = named(() => database.prepare(sqlText));
      const reader = typeof statement.columns === 'function' ? statement.columns().length > 0 : RETURNS_ROWS.test(sqlText);
      return {
        reader,
        all: (parameters) => named(() => statement.all(...(parameters as SqliteValue[]))),
        run: (parameters) => named(() => statement.run(...(parameters as SqliteValue[]))),
        iterate: (parameters) => named(() => statement.iterate(...(parameters as SqliteValue[]))),
      };
    },
  };
}

async function openWithBetterSqlite3(filename: string, busyTimeoutMs: number): Promise<SqliteConnection> {
  let BetterSqlite3: typeof import('better-sqlite3');
  try {
    BetterSqlite3 = (await import('better-sqlite3')).default;
  } catch (error) {
    throw new Error(
      `storage: better-sqlite3 could not be loaded (${error instanceof Error ? error.message : String(error)}); ` +
        `on Node ${NODE_SQLITE_SINCE.join('.')} or later the built-in node:sqlite needs nothing installed`,
    );
  }
  const database = new BetterSqlite3(filename, { timeout: busyTimeoutMs });
  return {
    driver: 'better-sqlite3',
    exec: (sqlText) => {
      database.exec(sqlText);
    },
    close: () => {
      database.close();
    },
    // better-sqlite3's statements already have the shape Kysely expects.
    prepare: (sqlText) => database.prepare(sqlText),
  };
}
