/**
 * The words of the console's page in every language, as the list of the
 * features (src/feature-list.ts) adds them to the catalogs, and their keys
 * added to the page keys (src/platform/i18n/index.ts `PageWords`), so a key
 * is checked wherever it is formatted.
 */
import type { PageWordSet } from '../../platform/i18n/index.js';
import { adminPagesDe } from './messages/de.js';
import { type AdminPageMessageKey, adminPagesEn } from './messages/en.js';
import { adminPagesEs } from './messages/es.js';
import { adminPagesFr } from './messages/fr.js';

declare module '../../platform/i18n/index.js' {
  interface PageWords extends Readonly<Record<AdminPageMessageKey, string>> {}
}

export const ADMIN_WORDS: PageWordSet = { en: adminPagesEn, de: adminPagesDe, es: adminPagesEs, fr: adminPagesFr };
