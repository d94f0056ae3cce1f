/**
 * E-mail one-time codes (docs/protocol.md §6): one per address, tries counted atomically, consumed once.
 */
import { assertLowercaseEmail, rowsAffected, type StoreExecutor } from './executor.js';
import { toCount, toEmailCodeRecord } from './row-mapping.js';
import type { EmailCodeRecord, NewEmailCode, EmailCodeStore } from './store.js';

/** The column's text: hashes comma-separated, NULL for none. A hash is lowercase hex, so it holds no comma. */
function replacedCodeHashesColumn(hashes: readonly string[] | undefined): string | null {
  if (hashes === undefined || hashes.length === 0) return null;
  for (const hash of hashes) {
    if (!/^[0-9a-f]+$/.test(hash)) throw new TypeError('storage: a replaced code hash must be lowercase hex');
  }
  return hashes.join(',');
}

export class EmailCodesArea implements EmailCodeStore {
  readonly #x: StoreExecutor;

  constructor(executor: StoreExecutor) {
    this.#x = executor;
  }

  async putEmailCode(code: NewEmailCode): Promise<void> {
    assertLowercaseEmail(code.email);
    // docs/protocol.md §6: "A new start for the same address kills the older code."
    const fields = {
      code_hash: code.code_hash,
      token: code.token,
      expires_at: code.expires_at,
      attempts: 0,
      tokenless_attempts: 0,
      created_at: code.created_at,
      // Written on every put, so an ordinary start never inherits the older row's list.
      replaced_code_hashes: replacedCodeHashesColumn(code.replaced_code_hashes),
      // Written on every put too: a newer code never keeps the older one's link.
      link_hash: code.link_hash ?? null,
    };
    await this.#x.db
      .insertInto('email_codes')
      .values({ email: code.email, ...fields })
      .onConflict((conflict) => conflict.column('email').doUpdateSet(fields))
      .execute();
  }

  async findEmailCode(email: string): Promise<EmailCodeRecord | null> {
    assertLowercaseEmail(email);
    const row = await this.#x.db.selectFrom('email_codes').selectAll().where('email', '=', email).executeTakeFirst();
    return row ? toEmailCodeRecord(row) : null;
  }

  async incrementEmailCodeAttempts(email: string, token: string, kind: 'token' | 'tokenless'): Promise<number | null> {
    assertLowercaseEmail(email);
    const column = kind === 'token' ? 'attempts' : 'tokenless_attempts';
    // One statement, so parallel wrong guesses each count (docs/protocol.md §6, at most 5).
    const row = await this.#x.db
      .updateTable('email_codes')
      .set((eb) => ({ [column]: eb(column, '+', 1) }))
      .where('email', '=', email)
      .where('token', '=', token)
      .returning(column)
      .executeTakeFirst();
    return row ? toCount((row as Record<typeof column, number>)[column]) : null;
  }

  async deleteEmailCode(email: string, codeHash?: string): Promise<boolean> {
    assertLowercaseEmail(email);
    let query = this.#x.db.deleteFrom('email_codes').where('email', '=', email);
    if (codeHash !== undefined) query = query.where('code_hash', '=', codeHash);
    const result = await query.executeTakeFirst();
    return rowsAffected(result.numDeletedRows) > 0;
  }
}
