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
  /** Rows attempted at once. */
  readonly parallel: number;
  /** A pass that failed (the database away): the next kick or tick tries again. */
  readonly onError: (error: unknown) => void;
}

/** A worker of one outbox: it says how to claim its rows and attempt one. */
export abstract class OutboxWorker<Row> {
  readonly #options: OutboxWorkerOptions;
  /** This worker's name on the leases it takes. */
  readonly owner = randomBytes(12).toString('hex');
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  protected constructor(options: OutboxWorkerOptions) {
    this.#options = options;
  }

  /** Leases up to `limit` due rows to `owner`. */
  protected abstract claim(owner: string, limit: number): Promise<readonly Row[]>;

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
      const claimed = await this.claim(this.owner, this.#options.parallel);
      if (claimed.length === 0) return sent;
      await Promise.all(claimed.map((row) => this.attempt(row, this.owner)));
      sent += claimed.length;
      if (this.#stopped) return sent;
    }
  }
}
