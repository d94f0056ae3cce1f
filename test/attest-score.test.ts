/**
 * Score v0 (docs/protocol.md §7 "Chain metrics"): round(ln(1 + sats) × (1 + days / 30), 2),
 * half away from zero.
 */
import { describe, expect, it } from 'vitest';
import { roundHalfAwayFromZero, scoreV0 } from '../src/features/attestations/score.js';

describe('scoreV0', () => {
  // The four fixed points of docs/protocol.md §7.
  const points: [number, number, number][] = [
    [0, 0, 0],
    [100_000, 30, 23.03],
    [1_000_000, 365, 181.9],
    [100_000_000, 90, 73.68],
  ];
  for (const [sats, days, score] of points) {
    it(`(${sats}, ${days}) → ${score}`, () => {
      expect(scoreV0(sats, days)).toBe(score);
    });
  }

  it('grows with sats and with days', () => {
    expect(scoreV0(1, 0)).toBe(0.69);
    expect(scoreV0(2_100_000_000_000_000, 0)).toBe(35.28);
    expect(scoreV0(100_000, 31)).toBeGreaterThan(scoreV0(100_000, 30));
    expect(scoreV0(100_001, 30)).toBeGreaterThanOrEqual(scoreV0(100_000, 30));
  });

  it('ignores days when sats are 0', () => {
    expect(scoreV0(0, 10_000)).toBe(0);
  });

  it('refuses negative and non-finite input', () => {
    expect(() => scoreV0(-1, 0)).toThrow(/^score: /);
    expect(() => scoreV0(0, -1)).toThrow(/^score: /);
    expect(() => scoreV0(Number.NaN, 0)).toThrow(/^score: /);
    expect(() => scoreV0(0, Number.POSITIVE_INFINITY)).toThrow(/^score: /);
  });

  it('always returns at most two decimals', () => {
    for (let sats = 0; sats < 3_000_000; sats += 99_991) {
      for (let days = 0; days < 1000; days += 37) {
        const score = scoreV0(sats, days);
        expect(Number((score * 100).toFixed(6)) % 1).toBe(0);
        expect(Math.abs(score - Math.log(1 + sats) * (1 + days / 30))).toBeLessThanOrEqual(0.005 + 1e-9);
      }
    }
  });
});

describe('roundHalfAwayFromZero', () => {
  // Decimal halves that binary floating point stores just below the half.
  const halves: [number, number][] = [
    [1.005, 1.01],
    [1.015, 1.02],
    [1.025, 1.03],
    [2.675, 2.68],
    [8.345, 8.35],
    [10.235, 10.24],
    [1234.565, 1234.57],
    [0.125, 0.13],
    [0.005, 0.01],
    [181.895, 181.9],
  ];
  for (const [value, rounded] of halves) {
    it(`${value} → ${rounded}`, () => {
      expect(roundHalfAwayFromZero(value, 2)).toBe(rounded);
      expect(roundHalfAwayFromZero(-value, 2)).toBe(-rounded);
    });
  }

  it('rounds values just below a half down and keeps exact values', () => {
    expect(roundHalfAwayFromZero(1.00499, 2)).toBe(1);
    expect(roundHalfAwayFromZero(1.0049999999, 2)).toBe(1);
    expect(roundHalfAwayFromZero(23.03, 2)).toBe(23.03);
    expect(roundHalfAwayFromZero(0, 2)).toBe(0);
    expect(Object.is(roundHalfAwayFromZero(-0.001, 2), 0)).toBe(true);
    expect(roundHalfAwayFromZero(2.5, 0)).toBe(3);
    expect(roundHalfAwayFromZero(-2.5, 0)).toBe(-3);
  });
});
