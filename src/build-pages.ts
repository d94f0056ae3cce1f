/**
 * The last step of `npm run build` (`node dist/src/build-pages.js`): the
 * page scripts the templates name, bundled into `dist/pages/`, where the
 * compiled service reads them (src/platform/http/page-bundle.ts).
 */
import './page-words.js';
import { writePageBundles } from './platform/http/page-bundle.js';
import { findPageRoot, pageFilesOf, pageScripts } from './web/pages.js';

const files = pageFilesOf(findPageRoot());
writePageBundles(files, pageScripts(files));
