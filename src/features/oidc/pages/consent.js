/**
 * The OpenID provider's consent page (consent.html,
 * docs/protocol.md §8 "Consent"): the app's logo, forms sent once, and the
 * header's account menu, since the question is asked of one account.
 */
import { startAccountMenu } from './account-menu.js';
import './i18n.js';
import { sendFormsOnce, showAppLogo } from './oidc-page.js';

showAppLogo();
sendFormsOnce();
await startAccountMenu();
