/**
 * The words of this feature's pages in every language, as the list of the
 * features (src/feature-list.ts) adds them to the catalogs, and their keys
 * added to the page keys (src/platform/i18n/index.ts `PageWords`), so a key
 * is checked wherever it is formatted.
 */
import type { PageWordSet } from '../../platform/i18n/index.js';
import { providersPagesDe } from './messages/de.js';
import { type ProvidersPageMessageKey, providersPagesEn } from './messages/en.js';
import { providersPagesEs } from './messages/es.js';
import { providersPagesFr } from './messages/fr.js';

declare module '../../platform/i18n/index.js' {
  interface PageWords extends Readonly<Record<ProvidersPageMessageKey, string>> {}
}

export const PROVIDERS_WORDS: PageWordSet = { en: providersPagesEn, de: providersPagesDe, es: providersPagesEs, fr: providersPagesFr };
