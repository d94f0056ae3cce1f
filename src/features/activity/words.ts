/**
 * The words of this feature's pages in every language, as the list of the
 * features (src/feature-list.ts) adds them to the catalogs, and their keys
 * added to the page keys (src/platform/i18n/index.ts `PageWords`), so a key
 * is checked wherever it is formatted.
 */
import type { PageWordSet } from '../../platform/i18n/index.js';
import { activityPagesDe } from './messages/de.js';
import { type ActivityPageMessageKey, activityPagesEn } from './messages/en.js';
import { activityPagesEs } from './messages/es.js';
import { activityPagesFr } from './messages/fr.js';

declare module '../../platform/i18n/index.js' {
  interface PageWords extends Readonly<Record<ActivityPageMessageKey, string>> {}
}

export const ACTIVITY_WORDS: PageWordSet = { en: activityPagesEn, de: activityPagesDe, es: activityPagesEs, fr: activityPagesFr };
