/**
 * The sign-in page (/signin): one card with one first step (docs/api.md
 * "Sign-in paths"). At its top the site the person is signing in to: the
 * OpenID app an authorization names, else the host of `return_to`, else the
 * brand. Then the browser wallets this page can see, one e-mail field, the
 * identity providers, and two quiet links: a passkey, and signing a message by
 * hand (today's address, message and signature forms). A browser whose roster
 * already holds accounts is offered "Continue as" first: one click switches
 * (POST /api/auth/switch) and goes on.
 *
 * A wallet works in a modal dialog: the page behind it cannot be used while
 * the wallet is asked, Escape or Cancel gives up (a late answer is ignored),
 * and focus returns to the wallet's button.
 *
 * Each way in is a module of its own: signin-wallet.js (a browser wallet,
 * signing by hand), signin-email.js (an e-mail code and its link),
 * signin-providers.js, signin-passkeys.js; what they share is in
 * signin-state.js. This module names the site, offers "Continue as" and
 * starts the ways.
 *
 * `return_to` and `add` come from data attributes the server rendered after
 * checking them (src/web/pages.ts); `add=1` is passed on every path so the
 * new account joins this browser's roster instead of replacing it.
 */
import { showAccountMenu, summaryOf } from './account-menu.js';
import './phone-signin.js';
import {
  accountName,
  api,
  busy,
  byId,
  describeError,
  h,
  initialOf,
  looksLikeEmail,
  nameInteractionApp,
  oauthErrorText,
  say,
  shortName,
  t,
  tNodes,
} from './common.js';
import { emailAddress, openMailLink } from './signin-email.js';
import { setUpPasskeys } from './signin-passkeys.js';
import { renderProviders, showProviders } from './signin-providers.js';
import { done, isAdding, lastWay, markLastUsed, pageError, pageStatus, returnTo, setAdding, showNotice, ways } from './signin-state.js';
import { btcAddress, manualOpen, showConnectButtons } from './signin-wallet.js';

/**
 * The name of the site the person signs in to, above the ways: the app of
 * an authorization (nameInteractionApp), else `return_to`'s host when it is
 * another site of the family, else the brand with its logo.
 */
async function nameSite() {
  const banner = byId('app-banner');
  await nameInteractionApp(returnTo, banner, 'signin.continue_to');
  // An authorization names its app to the browser that started it alone; anywhere else the page names nothing.
  if (!banner.hidden || returnTo.startsWith('/oidc/interaction/')) return;
  let name = document.body.dataset.brand || 'oc-host';
  /** @type {HTMLElement} */
  let badge = h('span', { class: 'app-avatar', 'aria-hidden': 'true', text: initialOf(name) });
  const brandLogo = document.querySelector('.site-header .brand-logo');
  if (/^https?:\/\//.test(returnTo) && new URL(returnTo).origin !== window.location.origin) {
    name = new URL(returnTo).hostname;
    badge = h('span', { class: 'app-avatar', 'aria-hidden': 'true', text: initialOf(name) });
  } else if (brandLogo instanceof HTMLImageElement) {
    badge = h('img', { class: 'app-logo-small', src: brandLogo.src, alt: '', width: '40', height: '40' });
  }
  banner.replaceChildren(badge, h('p', {}, ...tNodes('signin.continue_to', { app: h('strong', { text: name }) })));
  banner.hidden = false;
}

function setUpNotices() {
  const query = new URLSearchParams(window.location.search);
  if (isAdding()) {
    byId('page-title').textContent = t('signin.add_title');
    document.title = `${t('signin.add_title')} · ${document.body.dataset.brand || 'oc-host'}`;
    byId('lead').textContent = t('signin.add_lead');
    byId('lead').hidden = false;
  }
  const oauthError = query.get('oauth_error');
  if (oauthError !== null) {
    // An alert region announces it; the code itself is never shown as HTML.
    say(pageError, oauthErrorText(oauthError));
  }
  if (document.body.dataset.returnToRefused === '1') showNotice(t('signin.return_to_refused'));
  if (query.get('signed_out') === '1') say(pageStatus, t('signin.signed_out'));
  if (query.get('deleted') === '1') say(pageStatus, t('signin.deleted'));
}

const continueAs = byId('continue-as');

/**
 * A browser that holds accounts already (GET /api/auth/me) is offered them
 * first: the active one goes on at once, another one is switched to without
 * a new proof (POST /api/auth/switch). `add=1` asks for a new account: then
 * the normal card shows, and the header's menu holds the accounts.
 */
async function offerContinueAs() {
  const offer = !isAdding();
  const me = await api('GET', '/api/auth/me');
  if (!me.ok || !me.body?.account) return;
  showAccountMenu(summaryOf(me.body));
  if (offer) showContinueAs(me.body);
}

/**
 * "Continue as" the active account of `me`, and each other account of its roster.
 *
 * @param {{account: import('./common.js').AccountSummary, roster?: unknown}} me GET /api/auth/me's answer
 */
function showContinueAs(me) {
  const error = byId('continue-error');
  /** @param {import('./common.js').AccountSummary} account @param {boolean} active */
  const item = (account, active) => {
    const name = shortName(account);
    const button = h(
      'button',
      { type: 'button', class: active ? 'way' : 'way secondary', 'data-did': account.did_oc, title: accountName(account) },
      h('span', { class: 'app-avatar', 'aria-hidden': 'true', text: initialOf(name) }),
      h('span', { class: 'way-name' }, ...tNodes('signin.continue_as', { name: h('strong', { text: name }) })),
    );
    button.addEventListener('click', () =>
      busy(button, async () => {
        say(error, '');
        if (!active) {
          const switched = await api('POST', '/api/auth/switch', { did_oc: account.did_oc });
          if (!switched.ok) {
            say(error, describeError(switched));
            return;
          }
        }
        done();
      }),
    );
    return h('li', {}, button);
  };
  const roster = Array.isArray(me.roster) ? me.roster : [];
  byId('continue-list').replaceChildren(item(me.account, true), ...roster.map(/** @param {any} entry */ (entry) => item(entry, false)));
  continueAs.hidden = false;
  ways.hidden = true;
  byId('way-btc').hidden = true;
}

byId('use-another').addEventListener('click', () => {
  setAdding(true);
  continueAs.hidden = true;
  ways.hidden = false;
  renderProviders();
  byId('email-address').focus();
});

/** Marks the ways of this page's own markup that this browser used last. */
function markLastWay() {
  const last = lastWay();
  byId('email-last-used').hidden = last !== 'email';
  if (last === 'passkey') markLastUsed(byId('passkey-button'));
  if (last === 'btc') markLastUsed(manualOpen);
}

// An app's `login_hint` (docs/protocol.md §8 "Signing in") fills the field it fits: an e-mail, else a Bitcoin address.
function fillLoginHint() {
  const loginHint = document.body.dataset.loginHint ?? '';
  if (looksLikeEmail(loginHint)) emailAddress.value = loginHint;
  else if (loginHint !== '' && !loginHint.startsWith('did:')) btcAddress.value = loginHint;
}

fillLoginHint();
setUpNotices();
// Busy until the page knows whether this browser holds accounts ("Continue as") or shows the ways.
const main = byId('main');
main.setAttribute('aria-busy', 'true');
void offerContinueAs().finally(() => main.setAttribute('aria-busy', 'false'));
void nameSite();
// Wallet extensions may inject their objects after the page's own scripts ran: look again once loaded.
showConnectButtons();
window.addEventListener('load', () => showConnectButtons());
setTimeout(showConnectButtons, 1000);
void showProviders();
setUpPasskeys();
markLastWay();
void openMailLink();
