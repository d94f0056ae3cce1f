/**
 * Single-use challenge nonces (docs/protocol.md §5).
 */
import { rowsAffected, type StoreExecutor } from './executor.js';
import type { NonceStore } from './store.js';

export class NoncesArea implements NonceStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async consumeNonce(nonce: string, expiresAt: number, now: number): Promise<boolean> {
    if (nonce.length === 0) throw new Error('storage: empty nonce');
    // An expired challenge is refused anyway (docs/protocol.md §5, `expired`); its
    // row may already be purged, so "first use" could no longer be told apart.
    if (expiresAt <= now) return false;
    const result = await this.#x.db
      .insertInto('used_nonces')
      .values({ nonce, expires_at: expiresAt })
      .onConflict((conflict) => conflict.column('nonce').doNothing())
      .executeTakeFirst();
    return rowsAffected(result.numInsertedOrUpdatedRows) === 1;
  }
}
