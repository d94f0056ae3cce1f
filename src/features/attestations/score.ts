/**
 * Score v0 (docs/protocol.md §7 "Chain metrics"):
 * round(ln(1 + sats) × (1 + days / 30), 2), natural log, rounded half away
 * from zero to two places.
 */

/**
 * Score v0 of a bond of `sats` held `days` days. Both must be finite and not
 * negative; anything else is a programmer error (the metrics never produce it).
 */
export function scoreV0(sats: number, days: number): number {
  if (!Number.isFinite(sats) || sats < 0) throw new RangeError(`score: sats must be a finite number >= 0, got ${sats}`);
  if (!Number.isFinite(days) || days < 0) throw new RangeError(`score: days must be a finite number >= 0, got ${days}`);
  return roundHalfAwayFromZero(Math.log(1 + sats) * (1 + days / 30), 2);
}

/**
 * Rounds to `places` decimals, half away from zero, as a person rounding the
 * printed number would. Binary floating point cannot hold most decimal
 * halves (1.005 is stored as 1.00499999999999989…), and scaling adds its own
 * error (1.005 × 100 = 100.49999999999999), so the scaled value is first
 * re-read at 15 significant digits — the precision a double always keeps —
 * which removes that noise before the half is decided. The final division
 * of an integer by a power of ten yields the double nearest the decimal.
 */
export function roundHalfAwayFromZero(value: number, places: number): number {
  if (!Number.isFinite(value)) return value;
  const factor = 10 ** places;
  const scaled = Number((Math.abs(value) * factor).toPrecision(15));
  const rounded = Math.floor(scaled + 0.5) / factor;
  // Avoid returning -0 for tiny negative inputs.
  return value < 0 && rounded !== 0 ? -rounded : rounded;
}
