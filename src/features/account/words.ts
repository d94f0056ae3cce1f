/**
 * The words of this feature's pages in every language, as the list of the
 * features (src/feature-list.ts) adds them to the catalogs, and their keys
 * added to the page keys (src/platform/i18n/index.ts `PageWords`), so a key
 * is checked wherever it is formatted.
 */
import type { PageWordSet } from '../../platform/i18n/index.js';
import { accountPagesDe } from './messages/de.js';
import { type AccountPageMessageKey, accountPagesEn } from './messages/en.js';
import { accountPagesEs } from './messages/es.js';
import { accountPagesFr } from './messages/fr.js';

declare module '../../platform/i18n/index.js' {
  interface PageWords extends Readonly<Record<AccountPageMessageKey, string>> {}
}

export const ACCOUNT_WORDS: PageWordSet = { en: accountPagesEn, de: accountPagesDe, es: accountPagesEs, fr: accountPagesFr };
