/**
 * Bond metrics (docs/protocol.md §7 "Chain metrics"): which UTXOs count, the
 * no-bond and bond rules, the bond codes, and day counting.
 */
import { describe, expect, it } from 'vitest';
import { computeBondMetrics, daysSince } from '../src/features/attestations/metrics.js';
import type { Utxo } from '../src/chain/index.js';
import { loadEsploraFixture } from './support/esplora-fake.js';

const NOW = new Date('2026-04-22T12:00:00Z');
const NOW_SECONDS = NOW.getTime() / 1000;
const DAY = 86_400;

function confirmed(txid: string, vout: number, value: number, height: number, time: number): Utxo {
  return { txid: txid.repeat(64 / txid.length), vout, value, status: { confirmed: true, block_height: height, block_time: time } };
}
function unconfirmed(txid: string, value: number): Utxo {
  return { txid: txid.repeat(64 / txid.length), vout: 0, value, status: { confirmed: false } };
}

const fixture = loadEsploraFixture();
const mixed: Utxo[] = fixture.utxoSets.mixed!.map((utxo) => ({
  txid: utxo.txid,
  vout: utxo.vout,
  value: utxo.value,
  status: utxo.status.confirmed
    ? { confirmed: true, block_height: utxo.status.block_height!, block_time: utxo.status.block_time! }
    : { confirmed: false },
}));
const base = { utxos: mixed, tipHeight: fixture.tipHeight, minConfirmations: 1, now: NOW };

describe('computeBondMetrics without a bond', () => {
  it('counts every confirmed UTXO and ages from the OLDEST one (fixture "mixed")', () => {
    // Heights 900000 (315 days), 930000 (107), 944990 (3), 945000 (3); one unconfirmed.
    expect(computeBondMetrics(base)).toEqual({ sats: 410_000, days: 315, codes: ['bond_confirmed'] });
  });

  it('leaves out UTXOs short of MIN_CONFIRMATIONS (confirmations = tip − height + 1)', () => {
    // 945000 has 1 confirmation, 944990 has 11.
    expect(computeBondMetrics({ ...base, minConfirmations: 2 }).sats).toBe(400_000);
    expect(computeBondMetrics({ ...base, minConfirmations: 11 }).sats).toBe(400_000);
    expect(computeBondMetrics({ ...base, minConfirmations: 12 }).sats).toBe(200_000);
    expect(computeBondMetrics({ ...base, minConfirmations: 15_001 }).sats).toBe(200_000);
    expect(computeBondMetrics({ ...base, minConfirmations: 15_002 }).sats).toBe(50_000);
    expect(computeBondMetrics({ ...base, minConfirmations: 45_001 }).sats).toBe(50_000);
    expect(computeBondMetrics({ ...base, minConfirmations: 45_002 })).toEqual({ sats: 0, days: 0, codes: ['bond_zero', 'bond_pending'] });
  });

  it('uses the oldest block_time even when heights and times disagree in order', () => {
    const utxos = [confirmed('a', 0, 10, 100, NOW_SECONDS - 10 * DAY), confirmed('b', 0, 10, 101, NOW_SECONDS - 11 * DAY)];
    expect(computeBondMetrics({ utxos, tipHeight: 101, minConfirmations: 1, now: NOW }).days).toBe(11);
  });

  it('gives bond_zero for an empty set, and bond_pending too when unconfirmed UTXOs wait', () => {
    expect(computeBondMetrics({ ...base, utxos: [] })).toEqual({ sats: 0, days: 0, codes: ['bond_zero'] });
    expect(computeBondMetrics({ ...base, utxos: [unconfirmed('c', 5000)] })).toEqual({
      sats: 0,
      days: 0,
      codes: ['bond_zero', 'bond_pending'],
    });
  });

  it('does not report bond_pending beside counted UTXOs', () => {
    expect(computeBondMetrics(base).codes).toEqual(['bond_confirmed']);
  });

  it('counts with MIN_CONFIRMATIONS 0 only what is confirmed', () => {
    expect(computeBondMetrics({ ...base, minConfirmations: 0 }).sats).toBe(410_000);
  });
});

describe('computeBondMetrics with a bond', () => {
  it('takes UTXOs oldest first until they reach B and ages from the YOUNGEST taken', () => {
    // 900000 (50,000 sats, 315 days) then 930000 (150,000, 107 days) reach 100,000.
    expect(computeBondMetrics({ ...base, bond: 100_000 })).toEqual({ sats: 100_000, days: 107, codes: ['bond_confirmed'] });
    expect(computeBondMetrics({ ...base, bond: 50_000 })).toEqual({ sats: 50_000, days: 315, codes: ['bond_confirmed'] });
    expect(computeBondMetrics({ ...base, bond: 200_001 }).days).toBe(3);
    expect(computeBondMetrics({ ...base, bond: 410_000 })).toEqual({ sats: 410_000, days: 3, codes: ['bond_confirmed'] });
  });

  it('orders by height, then txid, then vout', () => {
    const old = NOW_SECONDS - 100 * DAY;
    const utxos = [
      confirmed('b', 0, 50, 10, old + 3 * DAY),
      confirmed('a', 1, 50, 10, old + 2 * DAY),
      confirmed('a', 0, 50, 10, old + 1 * DAY),
      confirmed('0', 0, 50, 9, old),
    ];
    const metrics = (bond: number) => computeBondMetrics({ utxos, tipHeight: 10, minConfirmations: 1, bond, now: NOW });
    expect(metrics(50).days).toBe(100); // height 9
    expect(metrics(100).days).toBe(99); // + a:0
    expect(metrics(150).days).toBe(98); // + a:1
    expect(metrics(200).days).toBe(97); // + b:0
  });

  it('gives bond_insufficient when the counted balance is below B, counting nothing', () => {
    expect(computeBondMetrics({ ...base, bond: 410_001 })).toEqual({ sats: 0, days: 0, codes: ['bond_insufficient'] });
    // Unconfirmed and shallow UTXOs do not make up the difference.
    expect(computeBondMetrics({ ...base, bond: 400_001, minConfirmations: 2 }).codes).toEqual(['bond_insufficient']);
  });

  it('reports bond_zero with bond_insufficient when nothing counts', () => {
    expect(computeBondMetrics({ ...base, utxos: [unconfirmed('c', 5000)], bond: 1 })).toEqual({
      sats: 0,
      days: 0,
      codes: ['bond_zero', 'bond_pending', 'bond_insufficient'],
    });
  });

  it('treats bond 0 as met by no UTXO at all', () => {
    expect(computeBondMetrics({ ...base, bond: 0 })).toEqual({ sats: 0, days: 0, codes: ['bond_confirmed'] });
    expect(computeBondMetrics({ ...base, utxos: [], bond: 0 })).toEqual({ sats: 0, days: 0, codes: ['bond_zero'] });
  });
});

describe('daysSince', () => {
  it('floors whole days and never goes negative', () => {
    expect(daysSince(NOW_SECONDS, NOW)).toBe(0);
    expect(daysSince(NOW_SECONDS - DAY + 1, NOW)).toBe(0);
    expect(daysSince(NOW_SECONDS - DAY, NOW)).toBe(1);
    expect(daysSince(NOW_SECONDS - 30 * DAY - 1, NOW)).toBe(30);
    expect(daysSince(NOW_SECONDS + 5 * DAY, NOW)).toBe(0);
  });
});
