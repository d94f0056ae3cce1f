/** The security keys' table as one owner of the store (src/platform/storage/tables.ts). */
import type { TableOwner } from '../../platform/storage/index.js';
import { passkeyAccountHooks, WebAuthnArea, type WebAuthnStore } from './store.js';
import { PASSKEY_MIGRATIONS } from './store-schema.js';

declare module '../../platform/storage/tables.js' {
  interface StoreAreas extends WebAuthnStore {}
}

export const PASSKEY_TABLES: TableOwner = {
  migrations: PASSKEY_MIGRATIONS,
  // A merge lists and removes the keys of the account it ends; a deletion removes them.
  hooks: { keys: passkeyAccountHooks },
  open: (executor) => ({ areas: [new WebAuthnArea(executor)] }),
};
