/**
 * Bond metrics from an address's UTXO set (docs/protocol.md §7 "Chain metrics"):
 * which outputs count, how many sats are bonded and for how many days.
 * Pure: the UTXOs, the tip and the clock are handed in.
 */
import type { Utxo } from '../../chain/index.js';
import type { VerifyCode } from './codes.js';

export interface BondMetricsInput {
  readonly utxos: readonly Utxo[];
  readonly tipHeight: number;
  /** `MIN_CONFIRMATIONS` (docs/protocol.md §1). */
  readonly minConfirmations: number;
  /** The `bond:` extension in sats, when the message has one. */
  readonly bond?: number | undefined;
  readonly now: Date;
}

type BondCode = Extract<VerifyCode, 'bond_confirmed' | 'bond_zero' | 'bond_pending' | 'bond_insufficient'>;

export interface BondMetrics {
  readonly sats: number;
  readonly days: number;
  readonly codes: readonly BondCode[];
}

const SECONDS_PER_DAY = 86_400;

/** Confirmations of an output mined at `height`: the tip itself is one (docs/protocol.md §7). */
function confirmationsAt(height: number, tipHeight: number): number {
  return tipHeight - height + 1;
}

/** Whole days from `blockTime` (unix seconds) to `now`, rounded down and never negative (docs/protocol.md §7). */
export function daysSince(blockTime: number, now: Date): number {
  const days = Math.floor((now.getTime() / 1000 - blockTime) / SECONDS_PER_DAY);
  return Math.max(days, 0);
}

/** Oldest first: by height, then txid, then vout (docs/protocol.md §7, the bond rule). */
function compareAge(left: CountedUtxo, right: CountedUtxo): number {
  if (left.height !== right.height) return left.height - right.height;
  if (left.txid !== right.txid) return left.txid < right.txid ? -1 : 1;
  return left.vout - right.vout;
}

interface CountedUtxo {
  readonly txid: string;
  readonly vout: number;
  readonly value: number;
  readonly height: number;
  readonly time: number;
}

/**
 * Applies docs/protocol.md §7:
 * - a UTXO counts only when confirmed with at least `minConfirmations`;
 * - without a bond, sats = the counted balance and days run from the OLDEST
 *   counted `block_time`;
 * - with `bond: B`, a balance below B is `bond_insufficient`; otherwise
 *   sats = B and days run from the YOUNGEST `block_time` among the counted
 *   UTXOs taken oldest first until they reach B;
 * - nothing counted is `bond_zero`, plus `bond_pending` when some UTXO is
 *   waiting for confirmations; otherwise `bond_confirmed`.
 *
 * Decisions where the protocol is silent: a UTXO confirmed but still short
 * of `minConfirmations` is "pending" like an unconfirmed one (it will count
 * later); an insufficient bond reports sats = days = 0, since the signed
 * claim does not hold and must not pass any threshold; a bond of 0 selects no
 * UTXO, so its days are 0.
 */
export function computeBondMetrics(input: BondMetricsInput): BondMetrics {
  const counted: CountedUtxo[] = [];
  let waiting = 0;
  for (const utxo of input.utxos) {
    const { confirmed, block_height: height, block_time: time } = utxo.status;
    if (
      confirmed &&
      height !== undefined &&
      confirmationsAt(height, input.tipHeight) >= input.minConfirmations &&
      confirmationsAt(height, input.tipHeight) >= 1
    ) {
      // A confirmed output without a block time cannot be aged; it counts
      // from now (0 days) rather than from the epoch.
      counted.push({ txid: utxo.txid, vout: utxo.vout, value: utxo.value, height, time: time ?? input.now.getTime() / 1000 });
    } else {
      waiting++;
    }
  }
  counted.sort(compareAge);
  const balance = counted.reduce((sum, utxo) => sum + utxo.value, 0);

  const codes: BondCode[] = [];
  if (counted.length === 0) {
    codes.push('bond_zero');
    if (waiting > 0) codes.push('bond_pending');
  }
  if (input.bond !== undefined && balance < input.bond) {
    codes.push('bond_insufficient');
    return { sats: 0, days: 0, codes };
  }
  if (counted.length === 0) return { sats: 0, days: 0, codes };
  codes.push('bond_confirmed');

  if (input.bond === undefined) {
    const oldest = counted.reduce((min, utxo) => Math.min(min, utxo.time), Number.POSITIVE_INFINITY);
    return { sats: balance, days: daysSince(oldest, input.now), codes };
  }

  let sum = 0;
  let youngest: number | undefined;
  for (const utxo of counted) {
    if (sum >= input.bond) break;
    sum += utxo.value;
    youngest = youngest === undefined ? utxo.time : Math.max(youngest, utxo.time);
  }
  return { sats: input.bond, days: youngest === undefined ? 0 : daysSince(youngest, input.now), codes };
}
