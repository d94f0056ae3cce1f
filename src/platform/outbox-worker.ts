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
const LEASE_MARGIN_MS = 5000;

/** A row of an outbox: its id and the attempts it has had. */
export interface OutboxRow {
  readonly id: string;
  readonly attempts: number;
}

/** How one send went: the answer's status, and a short error code (`timeout`, `http_500`, …) or null on success. */
export interface SendResult {
  readonly status: number | null;
  readonly error: string | null;
  /** A failure no retry can mend (no endpoint, a refused client): the row fails now. */
  readonly final?: boolean;
}

/** How one attempt ended, as the outbox records it. */
export interface OutboxAttempt {
  readonly at: number;
  readonly status: number | null;
  readonly error: string | null;
  /** `delivered`; `retry` at `next_attempt_at`; `failed` for good. */
  readonly outcome: 'delivered' | 'retry' | 'failed';
  readonly next_attempt_at?: number;
}

/** Where one outbox's rows are leased and their attempts recorded, and how often a row is tried. */
export interface OutboxPlan<Row> {
  /** Leases up to `limit` rows due at `now` to `owner` for `leaseMs`. */
  readonly claim: (owner: string, now: number, leaseMs: number, limit: number) => Promise<readonly Row[]>;
  /** Records an attempt of a row while `owner` still holds its lease. */
  readonly finish: (id: string, owner: string, attempt: OutboxAttempt) => Promise<unknown>;
  /** Rows attempted at once. */
  readonly parallel: number;
  /** Attempts before a row fails for good. */
  readonly maxAttempts: number;
  /** Backoff before attempt `attempts + 1`, after `attempts` failed ones. */
  readonly backoffMs: (attempts: number) => number;
}

/** A worker of one outbox: it says how to send one row; the loop, the outcome and the backoff are the same for all. */
export abstract class OutboxWorker<Row extends OutboxRow> {
  readonly #options: OutboxWorkerOptions;
  readonly #plan: OutboxPlan<Row>;
  /** This worker's name on the leases it takes. */
  readonly owner = randomBytes(12).toString('hex');
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = false;

  protected constructor(options: OutboxWorkerOptions, plan: OutboxPlan<Row>) {
    this.#options = options;
    this.#plan = plan;
  }

  /** Sends one claimed row once. */
  protected abstract send(row: Row): Promise<SendResult>;

  /** Told of every finished attempt (a log line: never a payload, token or URL). */
  protected abstract attempted(row: Row, attempt: OutboxAttempt & { readonly attempts: number }): void;

  /** Sends one claimed row and records the outcome under `owner`'s lease. */
  async #attempt(row: Row, owner: string): Promise<void> {
    const result = await this.send(row);
    const at = this.#options.now().getTime();
    const attempts = row.attempts + 1;
    const outcome = result.error === null ? 'delivered' : result.final === true || attempts >= this.#plan.maxAttempts ? 'failed' : 'retry';
    const attempt: OutboxAttempt = {
      at,
      status: result.status,
      error: result.error,
      outcome,
      ...(outcome === 'retry' ? { next_attempt_at: at + this.#plan.backoffMs(attempts) } : {}),
    };
    await this.#plan.finish(row.id, owner, attempt);
    this.attempted(row, { ...attempt, attempts });
  }

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
      const claimed = await this.#plan.claim(this.owner, now().getTime(), timeoutMs + LEASE_MARGIN_MS, this.#plan.parallel);
      if (claimed.length === 0) return sent;
      await Promise.all(claimed.map((row) => this.#attempt(row, this.owner)));
      sent += claimed.length;
      if (this.#stopped) return sent;
    }
  }
}
