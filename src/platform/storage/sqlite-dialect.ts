/**
 * Kysely's SQLite dialect with two changes that make several stores on one
 * database file behave like one:
 *
 * 1. Transactions start with `BEGIN IMMEDIATE`. A plain `BEGIN` takes the write
 *    lock only at the first write, and in WAL mode a reader that then tries to
 *    write can fail with SQLITE_BUSY at once, without waiting `busy_timeout`.
 *    Every transaction of this store writes, so it takes the write lock up
 *    front and other processes wait their turn (busy_timeout, database.ts).
 *
 * 2. Stores in the same process that open the same file share one connection
 *    lock. better-sqlite3 is synchronous: when a second connection waits for
 *    the write lock, `busy_timeout` sleeps on the event loop itself, so the
 *    first connection can never finish its transaction and the second fails
 *    after five seconds. Queueing on a shared in-process lock instead lets them
 *    take turns (this is what "two instances start at once" looks like in a
 *    test or a single-process deployment that opens the database twice).
 */
import { CompiledQuery, SqliteDialect } from 'kysely';
import type { DatabaseConnection, Driver, QueryCompiler, SqliteDialectConfig, TransactionSettings } from 'kysely';

/** A first-come, first-served lock for async code. */
class AsyncLock {
  #held = false;

  /** True while a query or transaction of any store on this file holds the connection. */
  get held(): boolean {
    return this.#held;
  }
  readonly #waiting: Array<() => void> = [];

  async acquire(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    // Hand the lock straight to the next waiter so nobody can barge in between.
    if (next) next();
    else this.#held = false;
  }
}

interface SharedLock {
  readonly lock: AsyncLock;
  users: number;
}

const locksByFile = new Map<string, SharedLock>();

function retainLock(fileKey: string | undefined): { lock: AsyncLock; release: () => void } {
  if (fileKey === undefined) return { lock: new AsyncLock(), release: () => {} };
  let shared = locksByFile.get(fileKey);
  if (!shared) {
    shared = { lock: new AsyncLock(), users: 0 };
    locksByFile.set(fileKey, shared);
  }
  shared.users += 1;
  const entry = shared;
  let released = false;
  return {
    lock: entry.lock,
    release: () => {
      if (released) return;
      released = true;
      entry.users -= 1;
      if (entry.users === 0 && locksByFile.get(fileKey) === entry) locksByFile.delete(fileKey);
    },
  };
}

class SharedFileSqliteDriver implements Driver {
  readonly #inner: Driver;
  readonly #lock: AsyncLock;
  readonly #releaseLock: () => void;

  constructor(inner: Driver, fileKey: string | undefined) {
    this.#inner = inner;
    const retained = retainLock(fileKey);
    this.#lock = retained.lock;
    this.#releaseLock = retained.release;
  }

  init(): Promise<void> {
    return this.#inner.init();
  }

  get busy(): boolean {
    return this.#lock.held;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#lock.acquire();
    try {
      return await this.#inner.acquireConnection();
    } catch (error) {
      this.#lock.release();
      throw error;
    }
  }

  async beginTransaction(connection: DatabaseConnection, _settings: TransactionSettings): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#inner.rollbackTransaction(connection);
  }

  savepoint(connection: DatabaseConnection, savepointName: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    return this.#savepointStep('savepoint', connection, savepointName, compileQuery);
  }

  rollbackToSavepoint(connection: DatabaseConnection, savepointName: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    return this.#savepointStep('rollbackToSavepoint', connection, savepointName, compileQuery);
  }

  releaseSavepoint(connection: DatabaseConnection, savepointName: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    return this.#savepointStep('releaseSavepoint', connection, savepointName, compileQuery);
  }

  async #savepointStep(
    step: 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint',
    connection: DatabaseConnection,
    savepointName: string,
    compileQuery: QueryCompiler['compileQuery'],
  ): Promise<void> {
    const run = this.#inner[step];
    if (!run) throw new Error('storage: the SQLite driver has no savepoints');
    await run.call(this.#inner, connection, savepointName, compileQuery);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.#inner.releaseConnection(connection);
    } finally {
      this.#lock.release();
    }
  }

  async destroy(): Promise<void> {
    try {
      await this.#inner.destroy();
    } finally {
      this.#releaseLock();
    }
  }
}

/**
 * @param fileKey the canonical path of the database file, shared by every
 *   store of this process on that file; undefined for `:memory:`, which no
 *   other connection can see.
 */
export class SharedFileSqliteDialect extends SqliteDialect {
  readonly #fileKey: string | undefined;
  #driver: SharedFileSqliteDriver | undefined;

  constructor(config: SqliteDialectConfig, fileKey: string | undefined) {
    super(config);
    this.#fileKey = fileKey;
  }

  override createDriver(): Driver {
    this.#driver = new SharedFileSqliteDriver(super.createDriver(), this.#fileKey);
    return this.#driver;
  }

  /**
   * Runs `work` at once when no query or transaction holds the connection,
   * and answers undefined otherwise (the caller then queues through Kysely).
   * better-sqlite3 is synchronous, so `work` completes before anything else
   * can take the connection: it never sees another transaction half done.
   */
  runIfIdle<T>(work: () => T): T | undefined {
    if (this.#driver === undefined || this.#driver.busy) return undefined;
    return work();
  }
}
