/**
 * What the console's dashboard reads (docs/operations.md "The console"):
 * counts per UTC day that every instance adds to (sign-ins by way in,
 * refused sign-ins by way and reason, OpenID sign-ins by client, /api/check
 * by cache result, /api/verify), and what the other tables already know
 * (accounts created per day, live sessions, consents per client).
 *
 * The counts are written in batches (dashboard.ts), each batch one upsert
 * per row that adds to the day's count, so instances never overwrite each
 * other. Like every migration, a part here is never edited once released.
 */
import { sql } from 'kysely';
import type { Migration, StoreExecutor } from '../../platform/storage/index.js';

/** One day's count of one thing, added to by every instance. */
interface DailyCountsTable {
  /** Days since 1970-01-01 (UTC). */
  day: number;
  /** What is counted: `signin`, `signin_failed`, `oidc_signin`, `check`, `verify`. */
  metric: string;
  /** Which of it: the way in, `<way> <reason>`, a client id, `hit` or `miss`, `ok` or `refused`. */
  label: string;
  count: number;
}

declare module '../../platform/storage/schema.js' {
  interface DatabaseSchema {
    daily_counts: DailyCountsTable;
  }
}

export const DAY_MS = 24 * 60 * 60 * 1000;

/** The day number of a time. */
export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/**
 * The dashboard's counts per day, and an index on the accounts' creation
 * time, so that "new accounts per day" is a range of an index, not a scan of
 * every account.
 */
const dailyCounts: Migration = {
  version: 25,
  name: 'daily_counts',
  async up(db) {
    await db.schema
      .createTable('daily_counts')
      .addColumn('day', 'integer', (column) => column.notNull())
      .addColumn('metric', 'text', (column) => column.notNull())
      .addColumn('label', 'text', (column) => column.notNull())
      .addColumn('count', 'bigint', (column) => column.notNull())
      .addPrimaryKeyConstraint('daily_counts_pkey', ['day', 'metric', 'label'])
      .execute();
    await db.schema.createIndex('accounts_created_at').on('accounts').column('created_at').execute();
  },
};

export const DASHBOARD_MIGRATIONS: readonly Migration[] = [dailyCounts];

/** One row to add. */
export interface DailyCount {
  readonly day: number;
  readonly metric: string;
  readonly label: string;
  readonly count: number;
}

export interface DashboardStore {
  /** Adds each count to its day's row (made when missing). */
  addDailyCounts(counts: readonly DailyCount[]): Promise<void>;
  /** Every count from `fromDay` on, in day order. */
  listDailyCounts(fromDay: number): Promise<DailyCount[]>;
  /** Accounts created per day from `fromDay` on (merged and deleted ones included: they were new that day). */
  newAccountsByDay(fromDay: number): Promise<Array<{ readonly day: number; readonly count: number }>>;
  /** Sessions neither revoked nor expired at `now`. */
  countLiveSessions(now: number): Promise<number>;
  /** How many accounts have consented to each client. */
  consentsByClient(): Promise<Map<string, number>>;
  /** Removes the counts of days before `beforeDay`. */
  purgeDailyCounts(beforeDay: number): Promise<number>;
}

export class DashboardArea implements DashboardStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async addDailyCounts(counts: readonly DailyCount[]): Promise<void> {
    for (const row of counts) {
      if (!Number.isSafeInteger(row.count) || row.count < 1)
        throw new Error(`storage: a daily count must be a positive integer, got ${row.count}`);
      await this.#x.db
        .insertInto('daily_counts')
        .values(row)
        .onConflict((conflict) =>
          conflict.columns(['day', 'metric', 'label']).doUpdateSet({ count: sql<number>`daily_counts.count + excluded.count` }),
        )
        .execute();
    }
  }

  async listDailyCounts(fromDay: number): Promise<DailyCount[]> {
    const rows = await this.#x.db
      .selectFrom('daily_counts')
      .select(['day', 'metric', 'label', 'count'])
      .where('day', '>=', fromDay)
      .orderBy('day')
      .orderBy('metric')
      .orderBy('label')
      .execute();
    return rows.map((row) => ({ day: Number(row.day), metric: row.metric, label: row.label, count: Number(row.count) }));
  }

  async newAccountsByDay(fromDay: number): Promise<Array<{ readonly day: number; readonly count: number }>> {
    // A literal: bound as a parameter, the divisor would be a real on SQLite and the day a fraction.
    const day = sql<number>`(created_at / ${sql.lit(DAY_MS)})`;
    const rows = await this.#x.db
      .selectFrom('accounts')
      .select([day.as('day'), (eb) => eb.fn.countAll<number>().as('count')])
      .where('created_at', '>=', fromDay * DAY_MS)
      .groupBy(day)
      .orderBy(day)
      .execute();
    return rows.map((row) => ({ day: Math.floor(Number(row.day)), count: Number(row.count) }));
  }

  async countLiveSessions(now: number): Promise<number> {
    const row = await this.#x.db
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('expires_at', '>', now)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(row?.count ?? 0);
  }

  async consentsByClient(): Promise<Map<string, number>> {
    const rows = await this.#x.db
      .selectFrom('oidc_consents')
      .select(['client_id', (eb) => eb.fn.countAll<number>().as('count')])
      .groupBy('client_id')
      .execute();
    return new Map(rows.map((row) => [row.client_id, Number(row.count)]));
  }

  async purgeDailyCounts(beforeDay: number): Promise<number> {
    const result = await this.#x.db.deleteFrom('daily_counts').where('day', '<', beforeDay).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
