/**
 * A clock that tests move by hand (docs/architecture.md: "freeze time"). The app reads it
 * through `deps.now`; nothing else advances it, so every time-dependent
 * outcome (challenge expiry, 30-day session rows, `iat`) is exact.
 */
import { vi } from 'vitest';

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/** A fixed, arbitrary start: 2026-03-01T12:34:56.789Z (a fraction, so "cut to the second" shows). */
export const CLOCK_START = Date.UTC(2026, 2, 1, 12, 34, 56, 789);

export class TestClock {
  #ms: number;

  constructor(startMs: number = CLOCK_START) {
    this.#ms = startMs;
  }

  /** Milliseconds since the epoch. */
  get ms(): number {
    return this.#ms;
  }

  /** Unix seconds, as JWT claims carry them. */
  get seconds(): number {
    return Math.floor(this.#ms / 1000);
  }

  /** The `deps.now` of the app: bound, so it can be passed around. */
  readonly now = (): Date => new Date(this.#ms);

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`test clock: cannot move back or by ${ms} ms`);
    this.#ms += ms;
  }

  set(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError(`test clock: ${ms} is not a time`);
    this.#ms = ms;
  }
}

/**
 * The test clock that is also `Date` (with vitest's fake Date on), so a
 * library that reads the wall clock (the OpenID provider) and the host read
 * one time.
 */
export class WallClock extends TestClock {
  constructor(startMs: number) {
    super(startMs);
    vi.setSystemTime(startMs);
  }

  override advance(ms: number): void {
    super.advance(ms);
    vi.setSystemTime(this.ms);
  }

  override set(ms: number): void {
    super.set(ms);
    vi.setSystemTime(this.ms);
  }
}
