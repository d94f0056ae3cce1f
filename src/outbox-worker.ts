/**
 * The loop every outbox worker runs (the webhook deliveries, docs/protocol.md
 * §6 "Webhooks"; the back-channel logouts, §8 "Logout"): on a timer, and
 * when kicked after a row was queued, it claims due rows by a lease under a
 * name of its own and attempts them a few at a time until none is due. One
 * pass runs at a time; a kick during a pass runs another after it. Stopping
 * waits for the pass in flight.
 */
import { randomBytes } from 'node:crypto';

export interface OutboxWorkerOptions {
  readonly pollMs: number;
  /** How long one attempt may take; a claim lasts that and a margin. */
  readonly timeoutMs: number;
  readonly now: () => Date;
  /** A pass that failed (the database away): the next kick or tick tries again. */
  readonly onError: (error: unknown) => void;
}

/** How long past the attempt's timeout a claim stays with its worker. */
export const LEASE_MARGIN_MS = 5000;

/** Leases up to `limit` rows due at `now` to `owner` for `leaseMs` (the store's claim of one outbox). */
export type OutboxClaim<Row> = (owner: string, now: number, leaseMs: number, limit: number) => Promise<readonly Row[]>;

/** A worker of one outbox: it says how to claim its rows and attempt one. */
export abstract class OutboxWorker<Row> {
  readonly #options: OutboxWorkerOptions;
  readonly #parallel: number;
  readonly #claim: OutboxClaim<Row>;
  /** This worker's name on the leases it takes. */
  readonly owner = randomBytes(12).toString('hex');
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  /** `parallel`: rows attempted at once. */
  protected constructor(options: OutboxWorkerOptions, parallel: number, claim: OutboxClaim<Row>) {
    this.#options = options;
    this.#parallel = parallel;
    this.#claim = claim;
  }

  /** Attempts one claimed row and records the outcome under `owner`'s lease. */
  protected abstract attempt(row: Row, owner: string): Promise<void>;

  start(): void {
    if (this.#timer !== undefined || this.#stopped) return;
    this.#timer = setInterval(() => this.kick(), this.#options.pollMs);
    this.#timer.unref();
    this.kick();
  }

  /** Looks for due rows now; one pass at a time, another after it when asked meanwhile. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running !== undefined) {
      this.#again = true;
      return;
    }
    this.#running = this.runOnce()
      .then(() => undefined, this.#options.onError)
      .finally(() => {
        this.#running = undefined;
        if (this.#again) {
          this.#again = false;
          this.kick();
        }
      });
  }

  /** Stops the timer and waits for the pass in flight (its attempts end within their timeout). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    await this.#running;
  }

  /** One pass: claims due rows and attempts them until none is due; how many it attempted. */
  async runOnce(): Promise<number> {
    let sent = 0;
    for (;;) {
      const { now, timeoutMs } = this.#options;
      const claimed = await this.#claim(this.owner, now().getTime(), timeoutMs + LEASE_MARGIN_MS, this.#parallel);
      if (claimed.length === 0) return sent;
      await Promise.all(claimed.map((row) => this.attempt(row, this.owner)));
      sent += claimed.length;
      if (this.#stopped) return sent;
    }
  }
}
