/**
 * Attestation call counts and the public statistics (docs/protocol.md §6 /api/family-stats).
 */
import { toCount, type EpochMilliseconds, type StoreExecutor } from '../../platform/storage/index.js';
import type { AttestEventKind } from './store-schema.js';

export type { AttestEventKind } from './store-schema.js';

/** Attestation events are kept 48 hours: twice the 24-hour window they are counted in. */
export const ATTEST_EVENT_RETENTION_MS = 48 * 60 * 60 * 1000;

/** docs/protocol.md §6 `/api/family-stats`, without `ok` and `generated_at`. */
export interface FamilyStats {
  /** Canonical accounts only: merged ones are not counted twice. */
  readonly accounts: { readonly total: number; readonly btc: number; readonly federated: number };
  /** Unrevoked, unexpired session rows. */
  readonly sessions: { readonly active: number };
  /** Rosters holding two or more live rows. */
  readonly rosters: { readonly multi_account: number };
  readonly attest: { readonly checks_24h: number; readonly verifies_24h: number };
}

/** Attestation call counts and the public statistics (docs/protocol.md §6 /api/family-stats). */
export interface StatsStore {
  /** Records `count` calls (default 1) of `kind` at `at`; callers batch them. */
  recordAttestEvent(kind: AttestEventKind, at: EpochMilliseconds, count?: number): Promise<void>;

  familyStats(now: EpochMilliseconds): Promise<FamilyStats>;
}

/** /api/family-stats counts attestation calls of the last 24 hours (docs/protocol.md §6). */
const ATTEST_COUNT_WINDOW_MS = 24 * 60 * 60 * 1000;

export class StatsArea implements StatsStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async recordAttestEvent(kind: AttestEventKind, at: number, count = 1): Promise<void> {
    if (!Number.isSafeInteger(count) || count < 1) throw new Error(`storage: an event count must be a positive integer, got ${count}`);
    await this.#x.db.insertInto('attest_events').values({ kind, at, count }).execute();
  }

  async familyStats(now: number): Promise<FamilyStats> {
    const [accountRows, activeRow, multiRow, attestRows] = await Promise.all([
      this.#x.db
        .selectFrom('accounts')
        .select((eb) => ['kind', eb.fn.countAll<number>().as('count')])
        .where('merged_into', 'is', null)
        .groupBy('kind')
        .execute(),
      this.#x.db
        .selectFrom('sessions')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst(),
      this.#x.db
        .selectFrom((eb) =>
          eb
            .selectFrom('sessions')
            .select('roster_id')
            .where('roster_id', 'is not', null)
            .where('revoked_at', 'is', null)
            .where('expires_at', '>', now)
            .groupBy('roster_id')
            .having((having) => having.fn.countAll(), '>=', 2)
            .as('multi_account_rosters'),
        )
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirst(),
      this.#x.db
        .selectFrom('attest_events')
        .select((eb) => ['kind', eb.fn.sum<number>('count').as('count')])
        .where('at', '>', now - ATTEST_COUNT_WINDOW_MS)
        .where('at', '<=', now)
        .groupBy('kind')
        .execute(),
    ]);
    const accountsOf = (kind: string) => toCount(accountRows.find((row) => row.kind === kind)?.count);
    const eventsOf = (kind: string) => toCount(attestRows.find((row) => row.kind === kind)?.count);
    const btc = accountsOf('btc');
    const federated = accountsOf('federated');
    return {
      accounts: { total: btc + federated, btc, federated },
      sessions: { active: toCount(activeRow?.count) },
      rosters: { multi_account: toCount(multiRow?.count) },
      attest: { checks_24h: eventsOf('check'), verifies_24h: eventsOf('verify') },
    };
  }
}
