/**
 * The last step of `npm run build` (`node dist/src/build-pages.js`): the
 * page scripts the templates name, bundled into `dist/pages/`, where the
 * compiled service reads them (src/http/page-bundle.ts).
 */
import { writePageBundles } from './http/page-bundle.js';
import { findPagesDir, pageScripts } from './http/pages.js';

const dir = findPagesDir();
writePageBundles(dir, pageScripts(dir));
