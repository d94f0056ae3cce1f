/**
 * Counts of attestation calls for /api/family-stats (docs/protocol.md §6), kept
 * in memory and written in one row per kind at most once per interval, so a
 * busy /api/check (a cache hit serves tens of thousands of requests a second)
 * never writes to the database per request. The console's dashboard counts
 * its own kinds the same way (src/features/admin/dashboard.ts).
 */
import type { AttestEventKind, StatsStore } from './store.js';

export interface EventCounter<Kind extends string = AttestEventKind> {
  count(kind: Kind): void;
  /** Writes what is pending now (before reading the totals, and at shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface EventCounterOptions<Kind extends string = AttestEventKind> {
  readonly record: (kind: Kind, at: number, count: number) => Promise<void>;
  readonly now: () => number;
  /** Longest a count waits before it is written; default 1 s. */
  readonly intervalMs?: number;
  readonly onError: (error: unknown) => void;
}

export function createEventCounter<Kind extends string = AttestEventKind>(options: EventCounterOptions<Kind>): EventCounter<Kind> {
  const intervalMs = options.intervalMs ?? 1000;
  let pending = new Map<Kind, number>();
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();

  const flush = (): Promise<void> => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    const batch = pending;
    pending = new Map();
    const at = options.now();
    // Chained, so writes land in order and a flush waits for the one before.
    writing = writing.then(async () => {
      for (const [kind, count] of batch) {
        try {
          await options.record(kind, at, count);
        } catch (error) {
          options.onError(error);
        }
      }
    });
    return writing;
  };

  return {
    count(kind) {
      pending.set(kind, (pending.get(kind) ?? 0) + 1);
      if (timer === undefined) {
        timer = setTimeout(() => void flush(), intervalMs);
        timer.unref();
      }
    },
    flush,
    close: flush,
  };
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** The statistics area of storage, for /api/family-stats. */
    readonly stats: StatsStore;
    /** Counts /api/check and /api/verify calls for /api/family-stats, written in batches. */
    readonly attestCounter: EventCounter;
  }
}
