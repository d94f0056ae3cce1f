/**
 * An owner of tables (docs/architecture.md "A storage area"): the identity
 * core, and every feature that keeps rows, hands the store its migrations,
 * the hooks it fills, and, over the one shared executor, its areas and its
 * purge. The list of the features (src/feature-list.ts) names each
 * feature's owner once; src/store.ts joins them. The types a store is read
 * through grow the same way the table types do (schema.ts): each owner adds
 * its area's methods to {@link StoreAreas} and its retention settings to
 * {@link Retention} from its own folder, so this file names no feature.
 */
import { sql } from 'kysely';
import type { DatabaseEngine } from './database.js';
import type { StoreExecutor } from './executor.js';
import type { StoreHooks } from './hooks.js';
import type { Migration } from './migrations.js';
import { methodsOf } from './open.js';
import type { EpochMilliseconds } from './records.js';
import type { AccountStore, ActivityStore, KeyStore, NonceStore, SessionStore } from './store.js';

/**
 * The methods the features' areas add to the store. Each owner of tables
 * extends it from its folder (`declare module`), beside its table types.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by each owner's declaration merging.
export interface StoreAreas {}

/**
 * How long the rows that are kept for a set time stay, in milliseconds; a
 * member left out takes its owner's default. Each owner that keeps such rows
 * adds its member from its folder (`declare module`).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by each owner's declaration merging.
export interface Retention {}

/** A retention in milliseconds, or the owner's default; a negative one is a caller's mistake. */
export function retentionMs(value: number | undefined, fallback: number, name: string): number {
  const chosen = value ?? fallback;
  if (!(chosen >= 0)) throw new Error(`storage: ${name} must be a non-negative number`);
  return chosen;
}

/** Rows deleted by a purge, by table (or by what they are, where one name says it better). */
export type PurgeCounts = Readonly<Record<string, number>>;

/** What an owner opens over the shared executor. */
export interface OwnedTables {
  /** Objects whose methods become the store's: the owner's areas. */
  readonly areas: readonly object[];
  /** Deletes the owner's rows past their time, as of `now`; the counts by table. */
  purge?(now: EpochMilliseconds, retention: Retention): Promise<PurgeCounts>;
}

/** One owner of tables: the identity core, or a feature. */
export interface TableOwner {
  /** Its parts of the migrations; a version several owners share runs their parts in the order of the owners. */
  readonly migrations: readonly Migration[];
  /** What it does when the core's rows change (hooks.ts); a hook no owner fills does nothing. */
  readonly hooks?: Partial<StoreHooks>;
  /** Its areas over the shared executor, opened once per store. */
  open(executor: StoreExecutor): OwnedTables;
}

/**
 * The whole storage: the identity core's areas and every feature's, on one
 * database, with what spans them (purging, readiness, closing). Services
 * take only the area they need.
 */
export interface Store extends AccountStore, SessionStore, NonceStore, KeyStore, ActivityStore, StoreAreas {
  readonly engine: DatabaseEngine;

  /**
   * Deletes, owner by owner in the order of the owners, the rows past their
   * time, each by its owner's rule.
   */
  purgeExpired(now: EpochMilliseconds, retention?: Retention): Promise<PurgeCounts>;

  /** Resolves when the database answers a trivial query (readiness). */
  ping(): Promise<void>;

  /** Closes the connection or pool. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * The store over one open database: every owner's areas, opened in the
 * order of the owners, their methods on one object (a name two areas both
 * claim is refused), and the purge run owner by owner in the same order.
 */
export function composeStore(executor: StoreExecutor, owners: readonly TableOwner[]): Store {
  const opened = owners.map((owner) => owner.open(executor));
  const methods: Record<string, unknown> = {};
  for (const area of opened.flatMap((tables) => tables.areas)) {
    for (const [name, method] of Object.entries(methodsOf(area))) {
      if (name in methods) throw new Error(`storage: two areas of the store both have a method ${name}`);
      methods[name] = method;
    }
  }
  const maintenance: Pick<Store, 'engine' | 'purgeExpired' | 'ping' | 'close'> = {
    engine: executor.engine,
    async purgeExpired(now, retention = {}) {
      const counts: Record<string, number> = {};
      for (const tables of opened) if (tables.purge !== undefined) Object.assign(counts, await tables.purge(now, retention));
      return counts;
    },
    async ping() {
      await sql`SELECT 1`.execute(executor.db);
    },
    close: () => executor.database.close(),
  };
  return { ...methods, ...maintenance } as unknown as Store;
}
