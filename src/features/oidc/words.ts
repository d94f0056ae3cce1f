/**
 * The words of this feature's pages in every language, as the list of the
 * features (src/feature-list.ts) adds them to the catalogs, and their keys
 * added to the page keys (src/platform/i18n/index.ts `PageWords`), so a key
 * is checked wherever it is formatted.
 */
import type { PageWordSet } from '../../platform/i18n/index.js';
import { oidcPagesDe } from './messages/de.js';
import { type OidcPageMessageKey, oidcPagesEn } from './messages/en.js';
import { oidcPagesEs } from './messages/es.js';
import { oidcPagesFr } from './messages/fr.js';

declare module '../../platform/i18n/index.js' {
  interface PageWords extends Readonly<Record<OidcPageMessageKey, string>> {}
}

export const OIDC_WORDS: PageWordSet = { en: oidcPagesEn, de: oidcPagesDe, es: oidcPagesEs, fr: oidcPagesFr };
