/**
 * The words of this feature's pages in every language, as the list of the
 * features (src/feature-list.ts) adds them to the catalogs, and their keys
 * added to the page keys (src/platform/i18n/index.ts `PageWords`), so a key
 * is checked wherever it is formatted.
 */
import type { PageWordSet } from '../../platform/i18n/index.js';
import { phonePagesDe } from './messages/de.js';
import { type PhonePageMessageKey, phonePagesEn } from './messages/en.js';
import { phonePagesEs } from './messages/es.js';
import { phonePagesFr } from './messages/fr.js';

declare module '../../platform/i18n/index.js' {
  interface PageWords extends Readonly<Record<PhonePageMessageKey, string>> {}
}

export const PHONE_WORDS: PageWordSet = { en: phonePagesEn, de: phonePagesDe, es: phonePagesEs, fr: phonePagesFr };
