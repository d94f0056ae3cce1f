/**
 * The e-mail codes table, as this owner's parts of the migrations (docs/architecture.md "A
 * storage area"): the runner (src/platform/storage/migrations.ts) merges every
 * owner's parts by version, so each version keeps the number and name it was
 * released with, and applies them in a fixed order of owners (src/store.ts).
 * Like every migration, a part is never edited once released.
 */
import { sql } from 'kysely';
import type { Migration } from '../../platform/storage/index.js';

export interface EmailCodesTable {
  email: string;
  code_hash: string;
  token: string;
  expires_at: number;
  attempts: number;
  tokenless_attempts: number;
  created_at: number;
  /** Comma-separated keyed hashes of the codes this one's resends replaced, newest first; NULL when none. */
  replaced_code_hashes: string | null;
  /** Keyed hash of the mail's link secret (docs/protocol.md §6 "E-mail codes"); NULL for a code stored before links had one. */
  link_hash: string | null;
}

declare module '../../platform/storage/schema.js' {
  interface DatabaseSchema {
    email_codes: EmailCodesTable;
  }
}

const emailCodes: Migration = {
  version: 2,
  name: 'email_codes_connect_apps_attest_events',
  async up(db) {
    // docs/protocol.md §6: one live code per address, stored only as a keyed hash.
    await db.schema
      .createTable('email_codes')
      .addColumn('email', 'text', (column) => column.primaryKey())
      .addColumn('code_hash', 'text', (column) => column.notNull())
      .addColumn('token', 'text', (column) => column.notNull())
      .addColumn('expires_at', 'bigint', (column) => column.notNull())
      .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addCheckConstraint('email_codes_email_lowercase', sql`email = lower(email)`)
      .execute();
    await db.schema.createIndex('email_codes_expires_at').on('email_codes').column('expires_at').execute();
  },
};

const emailCodeTokenlessTries: Migration = {
  version: 5,
  name: 'email_codes_tokenless_attempts',
  async up(db) {
    // Tries that carry no token get a budget of their own, so that whoever
    // knows only the address cannot use up the tries of the browser that
    // started the code (src/features/email-code/email-code.ts).
    await db.schema
      .alterTable('email_codes')
      .addColumn('tokenless_attempts', 'integer', (column) => column.notNull().defaultTo(0))
      .execute();
  },
};

const emailCodeReplacedHashes: Migration = {
  version: 18,
  name: 'email_codes_replaced_code_hashes',
  async up(db) {
    // docs/protocol.md §6 "E-mail codes": the keyed hashes of the codes that
    // the resends leading to this code replaced, newest first, at most 5,
    // comma-separated; NULL when none (an ordinary start). Never a code.
    // While an older server still writes codes during a rolling deploy, a
    // code it stores keeps the column of the row it replaces: those are still
    // codes of earlier mails to the address, so `code_replaced` stays true.
    await db.schema.alterTable('email_codes').addColumn('replaced_code_hashes', 'text').execute();
  },
};

const emailCodeLinkHash: Migration = {
  version: 20,
  name: 'email_codes_link_hash',
  async up(db) {
    // docs/protocol.md §6 "E-mail codes": the keyed hash of the secret that
    // the mail's link carries instead of the code. NULL for a code stored
    // before (its link named the code), so such a link signs in nowhere.
    await db.schema.alterTable('email_codes').addColumn('link_hash', 'text').execute();
  },
};

/** This owner's parts, in version order. */
export const EMAIL_CODE_MIGRATIONS: readonly Migration[] = [
  emailCodes,
  emailCodeTokenlessTries,
  emailCodeReplacedHashes,
  emailCodeLinkHash,
];
