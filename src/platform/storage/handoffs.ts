/**
 * Phone hand-offs (docs/protocol.md "Signing in from a phone"): a desktop's
 * sign-in waiting for a phone's signature. Every change of state is one
 * conditional update, so of two racing requests exactly one moves a row.
 */
import { rowsAffected, type StoreExecutor } from './executor.js';
import { toNumber } from './row-mapping.js';
import type { HandoffStore, HandoffRecord, HandoffState, HandoffTransition, NewHandoff } from './store.js';
import type { HandoffsTable } from './schema.js';

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
