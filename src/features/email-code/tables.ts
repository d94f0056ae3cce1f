/** The e-mail codes' tables as one owner of the store (src/platform/storage/tables.ts). */
import { rowsAffected, type TableOwner } from '../../platform/storage/index.js';
import { EmailCodesArea, forgetEmailCodes, type EmailCodeStore } from './store.js';
import { EMAIL_CODE_MIGRATIONS } from './store-schema.js';

declare module '../../platform/storage/tables.js' {
  interface StoreAreas extends EmailCodeStore {}
}

export const EMAIL_CODE_TABLES: TableOwner = {
  migrations: EMAIL_CODE_MIGRATIONS,
  // A deletion forgets the codes in flight to the account's addresses.
  hooks: { forgetEmails: forgetEmailCodes },
  open: (executor) => ({
    areas: [new EmailCodesArea(executor)],
    async purge(now) {
      const deleted = await executor.db.deleteFrom('email_codes').where('expires_at', '<=', now).executeTakeFirst();
      return { email_codes: rowsAffected(deleted.numDeletedRows) };
    },
  }),
};
