/**
 * The OpenID provider's pages (src/pages/consent.html, src/pages/notice.html,
 * docs/protocol.md §8 "Consent"): they work without scripts (plain forms);
 * this shows the app's logo when it has one and keeps a form from being
 * sent twice while the browser goes on to the app.
 */
import { startAccountMenu } from './account-menu.js';
import './i18n.js';

const logo = document.body.dataset.logo ?? '';
const holder = document.getElementById('app-logo');
if (holder !== null && /^https:\/\//.test(logo)) {
  const image = document.createElement('img');
  image.src = logo;
  image.alt = '';
  image.width = 56;
  image.height = 56;
  image.addEventListener('error', () => {
    holder.hidden = true;
  });
  holder.append(image);
  holder.hidden = false;
}

for (const form of document.querySelectorAll('form[method="post"]')) {
  form.addEventListener('submit', () => {
    // After this tick, so the pressed button's name and value still go with the form.
    setTimeout(() => {
      for (const button of form.querySelectorAll('button')) button.disabled = true;
      for (const button of document.querySelectorAll(`button[form="${form.id}"]`)) {
        if (button instanceof HTMLButtonElement) button.disabled = true;
      }
    });
  });
}

// The consent question, not the provider's notices (which share this script), shows the header's account menu.
if (document.getElementById('consent-form') !== null) await startAccountMenu();
