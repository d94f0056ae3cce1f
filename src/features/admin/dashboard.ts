/**
 * The console's dashboard (docs/operations.md "The console"): what this
 * instance counts as requests are answered, kept in memory and added to the
 * day's rows at most every {@link FLUSH_MS} (and when the instance stops),
 * so that no request writes to the database; and the view an operator
 * reads, the last days of every instance's counts with what the tables
 * know. Nothing here names a person: the labels are ways in, error codes,
 * client ids and cache results.
 */
import type { ClientView } from '../oidc/index.js';
import { createEventCounter, type EventCounter } from '../stats/counter.js';
import { DAY_MS, dayOf, type DashboardStore } from './dashboard-store.js';

/** How long a count waits in memory at most before it is written. */
const FLUSH_MS = 10_000;
/** How many days the counts are kept. */
export const DASHBOARD_RETENTION_DAYS = 400;

export type DashboardMetric = 'signin' | 'signin_failed' | 'oidc_signin' | 'check' | 'verify';

export interface DashboardCounterDeps {
  readonly store: Pick<DashboardStore, 'addDailyCounts'>;
  readonly now: () => Date;
  readonly onError: (error: unknown) => void;
}

/**
 * Counts in memory, written in batches by the counter the attestation
 * statistics use (src/features/stats/counter.ts). A count's key holds the
 * day it was counted on, so one still waiting at midnight stays on its day.
 */
export class DashboardCounter {
  readonly #now: () => Date;
  readonly #counter: EventCounter<string>;

  constructor(deps: DashboardCounterDeps) {
    this.#now = deps.now;
    this.#counter = createEventCounter<string>({
      intervalMs: FLUSH_MS,
      now: () => deps.now().getTime(),
      onError: deps.onError,
      record: (key, _at, count) => {
        const [day = '', metric = '', ...label] = key.split('\n');
        return deps.store.addDailyCounts([{ day: Number(day), metric, label: label.join('\n'), count }]);
      },
    });
  }

  count(metric: DashboardMetric, label: string): void {
    this.#counter.count(`${dayOf(this.#now().getTime())}\n${metric}\n${label}`);
  }

  /** Writes what is pending; a flush waits for the one before. */
  flush(): Promise<void> {
    return this.#counter.flush();
  }
}

/** One day of the dashboard. */
interface DashboardDay {
  /** `YYYY-MM-DD` (UTC). */
  readonly day: string;
  /** Sign-ins by way in (`bip322`, `email_otp`, `passkey`, `oauth:<provider>`). */
  readonly signins: Readonly<Record<string, number>>;
  /** Refused sign-ins by `<way> <reason>` (`email_otp invalid_code`). */
  readonly failures: Readonly<Record<string, number>>;
  /** OpenID sign-ins by client id. */
  readonly oidc: Readonly<Record<string, number>>;
  readonly new_accounts: number;
  /** /api/check answers from the cache and worked out. */
  readonly check: { readonly hit: number; readonly miss: number };
  /** /api/verify answers: verified, and refused (a bad attestation or a request the service could not answer). */
  readonly verify: { readonly ok: number; readonly refused: number };
}

export interface DashboardView {
  /** The days, oldest first, today last. */
  readonly days: readonly DashboardDay[];
  /** Sessions live now. */
  readonly active_sessions: number;
  /** Every OpenID client with its name and how many accounts consented to it. */
  readonly clients: ReadonlyArray<{ readonly client_id: string; readonly name: string; readonly consents: number }>;
}

export interface AdminDashboardDeps {
  readonly store: DashboardStore;
  readonly counter: DashboardCounter;
  readonly clients: () => Promise<readonly ClientView[]>;
  readonly now: () => Date;
}

function isoDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

export class AdminDashboard {
  readonly #deps: AdminDashboardDeps;

  constructor(deps: AdminDashboardDeps) {
    this.#deps = deps;
  }

  /** The last `days` days (today included) of every instance's counts: this instance's pending counts are written first. */
  async view(days: number): Promise<DashboardView> {
    await this.#deps.counter.flush();
    const nowMs = this.#deps.now().getTime();
    const today = dayOf(nowMs);
    const from = today - days + 1;
    const [counts, created, active, clients, consents] = await Promise.all([
      this.#deps.store.listDailyCounts(from),
      this.#deps.store.newAccountsByDay(from),
      this.#deps.store.countLiveSessions(nowMs),
      this.#deps.clients(),
      this.#deps.store.consentsByClient(),
    ]);
    const byDay = new Map<
      number,
      { signins: Record<string, number>; failures: Record<string, number>; oidc: Record<string, number> } & {
        check: { hit: number; miss: number };
        verify: { ok: number; refused: number };
        new_accounts: number;
      }
    >();
    for (let day = from; day <= today; day++) {
      byDay.set(day, { signins: {}, failures: {}, oidc: {}, check: { hit: 0, miss: 0 }, verify: { ok: 0, refused: 0 }, new_accounts: 0 });
    }
    for (const row of counts) {
      const entry = byDay.get(row.day);
      if (entry === undefined) continue;
      if (row.metric === 'signin') entry.signins[row.label] = row.count;
      else if (row.metric === 'signin_failed') entry.failures[row.label] = row.count;
      else if (row.metric === 'oidc_signin') entry.oidc[row.label] = row.count;
      else if (row.metric === 'check' && (row.label === 'hit' || row.label === 'miss')) entry.check[row.label] = row.count;
      else if (row.metric === 'verify' && (row.label === 'ok' || row.label === 'refused')) entry.verify[row.label] = row.count;
    }
    for (const { day, count } of created) {
      const entry = byDay.get(day);
      if (entry !== undefined) entry.new_accounts += count;
    }
    return {
      days: [...byDay].map(([day, entry]) => ({ day: isoDay(day), ...entry })),
      active_sessions: active,
      clients: clients.map((client) => ({
        client_id: client.client_id,
        name: typeof client.metadata.client_name === 'string' ? client.metadata.client_name : client.client_id,
        consents: consents.get(client.client_id) ?? 0,
      })),
    };
  }
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** The console's dashboard: this instance's counts, and the view of every instance's. */
    readonly adminDashboard: AdminDashboard;
    readonly dashboardCounter: DashboardCounter;
  }
}
