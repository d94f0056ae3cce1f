/**
 * The words of every feature's pages joined to the shared ones of the
 * platform (docs/architecture.md "Words on a page"): each feature keeps its
 * pages' words in its own `features/<name>/messages/`, names them in its
 * `words.ts` (which also adds their keys to `PageMessageKey`, so a key is
 * checked wherever it is formatted), and its entry of the list of the
 * features (src/feature-list.ts) carries them. This module adds them to the
 * language catalogs (src/platform/i18n/index.ts `addPageWords`) when it is
 * loaded, before a page is made or a message of theirs formatted:
 * src/app.ts and src/build-pages.ts import it first, as the tests that make
 * pages without the app do. The platform and the HTTP edge name no feature.
 */
import { addPageWords } from './platform/i18n/index.js';
import { FEATURES } from './feature-list.js';

for (const entry of FEATURES) if (entry.words !== undefined) addPageWords(entry.words);
