/**
 * src/pages/i18n.js imports `./intl-messageformat.js`, the package's own
 * ES module build that src/http/pages.ts serves as `/assets/intl-messageformat.js`;
 * tsconfig.pages.json (`rootDirs`) finds this file in its place, so the page
 * scripts are checked against the package's types.
 */
export { IntlMessageFormat } from 'intl-messageformat';
