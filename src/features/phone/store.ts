/**
 * Phone hand-offs (docs/protocol.md "Signing in from a phone"): a desktop's
 * sign-in waiting for a phone's signature. Every change of state is one
 * conditional update, so of two racing requests exactly one moves a row.
 */
import { rowsAffected, toNumber, type EpochMilliseconds, type StoreExecutor } from '../../platform/storage/index.js';
import type { HandoffsTable } from './store-schema.js';

/** Where a phone hand-off is (docs/protocol.md "Signing in from a phone"). */
type HandoffState = 'pending' | 'approved' | 'declined' | 'claimed';

/** A new hand-off, always `pending`; both secrets as lowercase hex SHA-256. */
export interface NewHandoff {
  readonly id: string;
  readonly token_hash: string;
  readonly key_hash: string;
  readonly code: string;
  /** The desktop's device label (src/identity/session/device.ts). */
  readonly desktop: string | null;
  /** The desktop's coarse network (/24, /48), never its address. */
  readonly network: string | null;
  /** What the phone is told it signs in to: `return_to`'s host, or this service's. */
  readonly site: string | null;
  readonly return_to: string | null;
  readonly created_at: EpochMilliseconds;
  readonly expires_at: EpochMilliseconds;
}

export interface HandoffRecord extends NewHandoff {
  readonly state: HandoffState;
  /** The address the phone proved, once approved. */
  readonly address: string | null;
}

/** One conditional change of state: only from `from`, and only while `expires_at > liveAfter`. */
export interface HandoffTransition {
  readonly from: HandoffState;
  readonly to: HandoffState;
  readonly liveAfter: EpochMilliseconds;
  readonly address?: string;
}

/** Phone hand-offs (docs/protocol.md "Signing in from a phone"). */
export interface HandoffStore {
  putHandoff(handoff: NewHandoff): Promise<void>;
  /** By the desktop's id, or by the hash of the phone's key. */
  findHandoff(by: { readonly id: string } | { readonly keyHash: string }): Promise<HandoffRecord | null>;
  /** True for exactly one of several racing callers: the one whose update moved the row. */
  moveHandoff(id: string, move: HandoffTransition): Promise<boolean>;
}

/**
 * How long past its expiry a hand-off row is kept: longer than the grace in
 * which an approved one may still be claimed (src/features/phone/handoff.ts).
 */
export const HANDOFF_PURGE_DELAY_MS = 60_000;

const STATES: readonly HandoffState[] = ['pending', 'approved', 'declined', 'claimed'];

function toHandoffRecord(row: HandoffsTable): HandoffRecord {
  const state = STATES.find((known) => known === row.state);
  if (state === undefined) throw new Error(`storage: hand-off ${row.id} has an unknown state`);
  return { ...row, state, created_at: toNumber(row.created_at), expires_at: toNumber(row.expires_at) };
}

export class HandoffsArea implements HandoffStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async putHandoff(handoff: NewHandoff): Promise<void> {
    await this.#x.db
      .insertInto('handoffs')
      .values({ ...handoff, state: 'pending', address: null })
      .execute();
  }

  async findHandoff(by: { readonly id: string } | { readonly keyHash: string }): Promise<HandoffRecord | null> {
    const query = this.#x.db.selectFrom('handoffs').selectAll();
    const row = await ('id' in by ? query.where('id', '=', by.id) : query.where('key_hash', '=', by.keyHash)).executeTakeFirst();
    return row ? toHandoffRecord(row) : null;
  }

  async moveHandoff(id: string, move: HandoffTransition): Promise<boolean> {
    const result = await this.#x.db
      .updateTable('handoffs')
      .set({ state: move.to, ...(move.address === undefined ? {} : { address: move.address }) })
      .where('id', '=', id)
      .where('state', '=', move.from)
      .where('expires_at', '>', move.liveAfter)
      .executeTakeFirst();
    return rowsAffected(result.numUpdatedRows) === 1;
  }
}
