/**
 * The phone hand-offs table, as this owner's parts of the migrations (docs/architecture.md "A
 * storage area"): the runner (src/platform/storage/migrations.ts) merges every
 * owner's parts by version, so each version keeps the number and name it was
 * released with, and applies them in a fixed order of owners (src/store.ts).
 * Like every migration, a part is never edited once released.
 */
import type { Migration } from '../../platform/storage/index.js';

/** docs/protocol.md "Signing in from a phone": `state` is pending, approved, declined or claimed. */
export interface HandoffsTable {
  id: string;
  token_hash: string;
  key_hash: string;
  code: string;
  desktop: string | null;
  network: string | null;
  site: string | null;
  return_to: string | null;
  state: string;
  address: string | null;
  created_at: number;
  expires_at: number;
}

declare module '../../platform/storage/schema.js' {
  interface DatabaseSchema {
    handoffs: HandoffsTable;
  }
}

/** The columns of `handoffs` after its id: name, type, and whether a value is required. */
const HANDOFF_COLUMNS: ReadonlyArray<readonly [string, 'text' | 'bigint', boolean]> = [
  ['token_hash', 'text', true],
  ['key_hash', 'text', true],
  ['code', 'text', true],
  ['desktop', 'text', false],
  ['network', 'text', false],
  ['site', 'text', false],
  ['return_to', 'text', false],
  ['state', 'text', true],
  ['address', 'text', false],
  ['created_at', 'bigint', true],
  ['expires_at', 'bigint', true],
];

const phoneHandoffs: Migration = {
  version: 17,
  name: 'handoffs',
  async up(db) {
    // docs/protocol.md "Signing in from a phone": a desktop's sign-in that a
    // phone approves. Both secrets are stored as SHA-256 only; the desktop's
    // network is coarse (/24, /48), never its address.
    let table = db.schema.createTable('handoffs').addColumn('id', 'text', (column) => column.primaryKey());
    for (const [name, type, required] of HANDOFF_COLUMNS) {
      table = table.addColumn(name, type, (column) => (required ? column.notNull() : column));
    }
    await table.execute();
    // The phone key finds its row by its hash: one row per hash.
    await db.schema.createIndex('handoffs_key_hash').on('handoffs').column('key_hash').unique().execute();
    await db.schema.createIndex('handoffs_expires_at').on('handoffs').column('expires_at').execute();
  },
};

/** This owner's parts, in version order. */
export const PHONE_MIGRATIONS: readonly Migration[] = [phoneHandoffs];
