/**
 * The OpenID provider's notices (notice.html, docs/protocol.md §8):
 * the app's logo and forms sent once; no account menu, so none of its code.
 */
import { sendFormsOnce, showAppLogo } from './oidc-page.js';

showAppLogo();
sendFormsOnce();
