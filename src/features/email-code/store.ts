/**
 * E-mail one-time codes (docs/protocol.md §6): one per address, tries counted atomically, consumed once.
 */
import {
  assertLowercaseEmail,
  rowsAffected,
  toCount,
  toNumber,
  type DatabaseSchema,
  type EpochMilliseconds,
  type StoreExecutor,
} from '../../platform/storage/index.js';
import type { Transaction } from 'kysely';
import type { EmailCodesTable } from './store-schema.js';

export interface EmailCodeRecord {
  /** Lowercased. */
  readonly email: string;
  /** Keyed hash of the 6-digit code; the code itself is never stored (docs/protocol.md §6). */
  readonly code_hash: string;
  readonly token: string;
  readonly expires_at: EpochMilliseconds;
  /** Tries so far that carried this code's `token` (the browser that started it). */
  readonly attempts: number;
  /** Tries so far without a token: a budget of their own, so they cannot use up `attempts`. */
  readonly tokenless_attempts: number;
  readonly created_at: EpochMilliseconds;
  /**
   * Keyed hashes (as `code_hash`) of the codes of earlier mails that the
   * resends leading to this code replaced, newest first, at most 5 (the
   * caller cuts the list); empty for a code of an ordinary start.
   */
  readonly replaced_code_hashes: readonly string[];
  /**
   * Keyed hash of the secret the mail's link carries (docs/protocol.md §6
   * "E-mail codes"); null for a code stored without one, whose link then
   * signs in nowhere.
   */
  readonly link_hash: string | null;
}

export interface NewEmailCode {
  readonly email: string;
  readonly code_hash: string;
  readonly token: string;
  readonly expires_at: EpochMilliseconds;
  readonly created_at: EpochMilliseconds;
  /** See {@link EmailCodeRecord.replaced_code_hashes}; absent or empty for an ordinary start. */
  readonly replaced_code_hashes?: readonly string[] | undefined;
  /** See {@link EmailCodeRecord.link_hash}. */
  readonly link_hash?: string | undefined;
}

/** E-mail one-time codes (docs/protocol.md §6). */
export interface EmailCodeStore {
  /**
   * Stores the code for its address, replacing (killing) an older one; both
   * try counts start at 0. The row's list of replaced codes becomes
   * `replaced_code_hashes` (empty when absent), whatever the older row held:
   * the caller, on a resend, passes the replaced code's hash followed by that
   * code's own list, cut to 5 (src/features/email-code/email-code.ts).
   */
  putEmailCode(code: NewEmailCode): Promise<void>;

  findEmailCode(email: string): Promise<EmailCodeRecord | null>;

  /**
   * Counts one try atomically, in `attempts` (`kind: 'token'`) or in
   * `tokenless_attempts`, and only on the code whose token is `token` (the
   * one the caller read), so a try never lands on a newer code that replaced
   * it. Returns the new count of that kind, or null when no such code exists.
   */
  incrementEmailCodeAttempts(email: string, token: string, kind: 'token' | 'tokenless'): Promise<number | null>;

  /**
   * Deletes the address's code. With `codeHash`, only if the stored code is
   * that one. True for exactly one caller: the verifier that gets true has
   * consumed the code (single use, docs/protocol.md §6).
   */
  deleteEmailCode(email: string, codeHash?: string): Promise<boolean>;
}

function toEmailCodeRecord(row: EmailCodesTable): EmailCodeRecord {
  return {
    email: row.email,
    code_hash: row.code_hash,
    token: row.token,
    expires_at: toNumber(row.expires_at),
    attempts: toNumber(row.attempts),
    tokenless_attempts: toNumber(row.tokenless_attempts),
    created_at: toNumber(row.created_at),
    replaced_code_hashes: row.replaced_code_hashes === null || row.replaced_code_hashes === '' ? [] : row.replaced_code_hashes.split(','),
    link_hash: row.link_hash ?? null,
  };
}

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

/** A deletion forgets the codes in flight to the account's addresses (src/platform/storage/hooks.ts). */
export async function forgetEmailCodes(trx: Transaction<DatabaseSchema>, emails: readonly string[]): Promise<void> {
  await trx.deleteFrom('email_codes').where('email', 'in', emails).execute();
}
