/**
 * The words of this feature's pages in every language, as the list of the
 * features (src/feature-list.ts) adds them to the catalogs, and their keys
 * added to the page keys (src/platform/i18n/index.ts `PageWords`), so a key
 * is checked wherever it is formatted.
 */
import type { PageWordSet } from '../../platform/i18n/index.js';
import { walletPagesDe } from './messages/de.js';
import { type WalletPageMessageKey, walletPagesEn } from './messages/en.js';
import { walletPagesEs } from './messages/es.js';
import { walletPagesFr } from './messages/fr.js';

declare module '../../platform/i18n/index.js' {
  interface PageWords extends Readonly<Record<WalletPageMessageKey, string>> {}
}

export const WALLET_WORDS: PageWordSet = { en: walletPagesEn, de: walletPagesDe, es: walletPagesEs, fr: walletPagesFr };
