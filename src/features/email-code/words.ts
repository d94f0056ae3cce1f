/**
 * The words of this feature's pages in every language, as the list of the
 * features (src/feature-list.ts) adds them to the catalogs, and their keys
 * added to the page keys (src/platform/i18n/index.ts `PageWords`), so a key
 * is checked wherever it is formatted.
 */
import type { PageWordSet } from '../../platform/i18n/index.js';
import { emailCodePagesDe } from './messages/de.js';
import { type EmailCodePageMessageKey, emailCodePagesEn } from './messages/en.js';
import { emailCodePagesEs } from './messages/es.js';
import { emailCodePagesFr } from './messages/fr.js';

declare module '../../platform/i18n/index.js' {
  interface PageWords extends Readonly<Record<EmailCodePageMessageKey, string>> {}
}

export const EMAIL_CODE_WORDS: PageWordSet = { en: emailCodePagesEn, de: emailCodePagesDe, es: emailCodePagesEs, fr: emailCodePagesFr };
