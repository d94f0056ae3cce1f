/**
 * The security keys and passkeys table, as this owner's parts of the migrations (docs/architecture.md "A
 * storage area"): the runner (src/platform/storage/migrations.ts) merges every
 * owner's parts by version, so each version keeps the number and name it was
 * released with, and applies them in a fixed order of owners (src/store.ts).
 * Like every migration, a part is never edited once released.
 */
import { sql } from 'kysely';
import { booleanColumnType, type DatabaseBoolean, type Migration } from '../../platform/storage/index.js';

/** How the browser reported the authenticator: built in, or a key that travels (WebAuthn `authenticatorAttachment`). */
export type WebAuthnAuthenticatorType = 'platform' | 'cross-platform' | 'unknown';

/** WebAuthn Level 3 backup eligibility: `multiDevice` credentials may be synced (the BE flag). */
export type WebAuthnDeviceType = 'singleDevice' | 'multiDevice';

/** Registered WebAuthn credentials (migration 7, docs/protocol.md §6): public keys only. */
export interface WebAuthnCredentialsTable {
  /** The credential id, base64url. */
  id: string;
  account_id: string;
  /** The COSE public key, base64url. */
  public_key: string;
  counter: number;
  /** Comma-separated transports the browser reported (`usb,nfc`), or empty. */
  transports: string;
  label: string;
  authenticator_type: WebAuthnAuthenticatorType;
  device_type: WebAuthnDeviceType;
  backed_up: DatabaseBoolean;
  user_verified: DatabaseBoolean;
  /** Chosen as a sign-in passkey (discoverable, user-verifying); otherwise step-up only. */
  sign_in: DatabaseBoolean;
  /** The WebAuthn user handle the credential was created for, base64url. */
  user_handle: string;
  aaguid: string;
  created_at: number;
  last_used_at: number | null;
}

declare module '../../platform/storage/schema.js' {
  interface DatabaseSchema {
    webauthn_credentials: WebAuthnCredentialsTable;
  }
}

const webauthnCredentials: Migration = {
  version: 7,
  name: 'webauthn_credentials',
  async up(db, engine) {
    // docs/protocol.md §6 "Security keys and passkeys": the public part of
    // each registered WebAuthn credential. The credential id is the primary
    // key, so one credential belongs to one account on this host.
    const bool = booleanColumnType(engine);
    await db.schema
      .createTable('webauthn_credentials')
      .addColumn('id', 'text', (column) => column.primaryKey())
      .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
      .addColumn('public_key', 'text', (column) => column.notNull())
      .addColumn('counter', 'bigint', (column) => column.notNull().defaultTo(0))
      .addColumn('transports', 'text', (column) => column.notNull().defaultTo(''))
      .addColumn('label', 'text', (column) => column.notNull())
      .addColumn('authenticator_type', 'text', (column) => column.notNull())
      .addColumn('device_type', 'text', (column) => column.notNull())
      .addColumn('backed_up', bool, (column) => column.notNull())
      .addColumn('user_verified', bool, (column) => column.notNull())
      .addColumn('sign_in', bool, (column) => column.notNull())
      .addColumn('user_handle', 'text', (column) => column.notNull())
      .addColumn('aaguid', 'text', (column) => column.notNull())
      .addColumn('created_at', 'bigint', (column) => column.notNull())
      .addColumn('last_used_at', 'bigint')
      .addCheckConstraint('webauthn_credentials_id_format', sql`length(id) BETWEEN 1 AND 1400`)
      .addCheckConstraint('webauthn_credentials_counter', sql`counter >= 0`)
      .addCheckConstraint('webauthn_credentials_type', sql`authenticator_type IN ('platform', 'cross-platform', 'unknown')`)
      .addCheckConstraint('webauthn_credentials_device_type', sql`device_type IN ('singleDevice', 'multiDevice')`)
      .execute();
    await db.schema.createIndex('webauthn_credentials_account').on('webauthn_credentials').columns(['account_id', 'created_at']).execute();
  },
};

/** This owner's parts, in version order. */
export const PASSKEY_MIGRATIONS: readonly Migration[] = [webauthnCredentials];
