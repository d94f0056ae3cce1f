/**
 * The words of this feature's pages in every language, as the list of the
 * features (src/feature-list.ts) adds them to the catalogs, and their keys
 * added to the page keys (src/platform/i18n/index.ts `PageWords`), so a key
 * is checked wherever it is formatted.
 */
import type { PageWordSet } from '../../platform/i18n/index.js';
import { passkeysPagesDe } from './messages/de.js';
import { type PasskeysPageMessageKey, passkeysPagesEn } from './messages/en.js';
import { passkeysPagesEs } from './messages/es.js';
import { passkeysPagesFr } from './messages/fr.js';

declare module '../../platform/i18n/index.js' {
  interface PageWords extends Readonly<Record<PasskeysPageMessageKey, string>> {}
}

export const PASSKEYS_WORDS: PageWordSet = { en: passkeysPagesEn, de: passkeysPagesDe, es: passkeysPagesEs, fr: passkeysPagesFr };
