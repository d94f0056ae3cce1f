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
 * Passkeys (docs/protocol.md §6 "Security keys and passkeys"): where the
 * browser offers passkeys in a field's autofill (conditional mediation), the
 * e-mail field lists them as soon as the page loads; the link asks with the
 * browser's own prompt, and cancels the waiting autofill request first.
 *
 * `return_to` and `add` come from data attributes the server rendered after
 * checking them (src/http/pages.ts); `add=1` is passed on every path so the
 * new account joins this browser's roster instead of replacing it.
 */
import { showAccountMenu, summaryOf } from './account-menu.js';
import './phone-signin.js';
import {
  afterProof,
  accountName,
  api,
  busy,
  challengeCodeOf,
  byId,
  checkField,
  copyText,
  describeError,
  fetchChallenge,
  formatTime,
  h,
  initialOf,
  looksLikeBitcoinAddress,
  looksLikeEmail,
  markInvalid,
  nameInteractionApp,
  oauthErrorText,
  safeReturnTo,
  shortName,
  say,
  clockText,
  countdown,
  submitButtonOf,
  t,
  tNodes,
} from './common.js';
import { emailCodeForm } from './email-code.js';
import { appendWalletButtons, detectWallets, walletErrorText, walletLogo } from './wallets.js';
import { browserErrorText, conditionalSupported, describeKeyError, getAssertion, wasCancelled, webauthnSupported } from './passkeys.js';

const DEFAULT_RETURN_TO = '/account';

const returnTo = safeReturnTo(document.body.dataset.returnTo, DEFAULT_RETURN_TO);
/** Whether a new account joins this browser's roster: `add=1`, or "Use another account" from "Continue as". */
let adding = document.body.dataset.add === '1';
const addQuery = () => (adding ? '?add=1' : '');

const pageError = byId('page-error');
const pageStatus = byId('page-status');
const notice = byId('notice');

/** This browser remembers the way it last signed in, to mark it next time (nothing leaves the browser). */
const LAST_WAY_KEY = 'oc-last-sign-in';

/** @param {string} way `wallet:<id>`, `btc`, `email`, `passkey` or `provider:<id>` */
function remember(way) {
  try {
    localStorage.setItem(LAST_WAY_KEY, way);
  } catch {
    // storage may be off; then nothing is marked
  }
}

/** The way this browser signed in last, or null. */
function lastWay() {
  try {
    return localStorage.getItem(LAST_WAY_KEY);
  } catch {
    return null;
  }
}

/** A "Last used" badge after the way's button. @param {Element | null} element */
function markLastUsed(element) {
  if (element && !element.nextElementSibling?.classList.contains('badge')) {
    element.after(h('span', { class: 'badge', text: t('signin.last_used') }));
  }
}

/** After any successful sign-in: go where the person was going. @param {string} [way] what to mark next time */
function done(way) {
  if (way) remember(way);
  say(pageStatus, t('signin.signed_in'));
  window.location.assign(afterProof(returnTo));
}

// ---- the site, the notices, "Continue as" ----

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

/**
 * A notice above the ways, which stays until the page is left.
 *
 * @param {string} text
 * @param {boolean} [warning] shown as a refusal
 */
function showNotice(text, warning = true) {
  notice.replaceChildren(text);
  notice.classList.toggle('error', warning);
  notice.hidden = false;
}

function setUpNotices() {
  const query = new URLSearchParams(window.location.search);
  if (adding) {
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

const ways = byId('ways');
const continueAs = byId('continue-as');

/**
 * A browser that holds accounts already (GET /api/auth/me) is offered them
 * first: the active one goes on at once, another one is switched to without
 * a new proof (POST /api/auth/switch). `add=1` asks for a new account: then
 * the normal card shows, and the header's menu holds the accounts.
 */
async function offerContinueAs() {
  const offer = !adding;
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
  adding = true;
  continueAs.hidden = true;
  ways.hidden = false;
  renderProviders();
  byId('email-address').focus();
});

// ---- BIP-322 ----

const btcAddressForm = /** @type {HTMLFormElement} */ (byId('btc-address-form'));
const btcSignForm = /** @type {HTMLFormElement} */ (byId('btc-sign-form'));
const btcAddress = /** @type {HTMLInputElement} */ (byId('btc-address'));
const btcMessage = /** @type {HTMLTextAreaElement} */ (byId('btc-message'));
const btcSignature = /** @type {HTMLTextAreaElement} */ (byId('btc-signature'));
const btcError = byId('btc-error');
const btcTools = byId('btc-tools');

/** @type {{address: string, message: string, nonce: string} | null} */
let challenge = null;

function resetBtc() {
  stopBtcCountdown();
  challenge = null;
  btcMessage.value = '';
  btcSignature.value = '';
  markInvalid(btcSignature, false);
  for (const walletButton of btcTools.querySelectorAll('[data-wallet]')) walletButton.remove();
  btcSignForm.hidden = true;
  btcAddressForm.hidden = false;
  say(btcError, '');
}

/**
 * A new way chosen: messages about the other ways are stale now. The page's
 * status and every way's error go; the way being used speaks for itself.
 */
function startingOver() {
  say(pageStatus, '');
  for (const id of ['btc-error', 'email-error', 'passkey-error', 'btc-wallet-status']) say(byId(id), '');
}

// Signing by hand (an address, the message to copy, the signature to paste) is a step of its own, behind a link.
const manualOpen = byId('btc-manual-open');
byId('btc-manual-open').addEventListener('click', () => {
  startingOver();
  ways.hidden = true;
  byId('way-btc').hidden = false;
  manualOpen.setAttribute('aria-expanded', 'true');
  btcAddress.focus();
});
byId('btc-manual-close').addEventListener('click', () => {
  startingOver();
  resetBtc();
  byId('way-btc').hidden = true;
  ways.hidden = false;
  manualOpen.setAttribute('aria-expanded', 'false');
  manualOpen.focus();
});

btcAddressForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  startingOver();
  const address = btcAddress.value.trim();
  if (!checkField(btcAddress, looksLikeBitcoinAddress(address), btcError, t('page.address_invalid'))) return;
  await busy(submitButtonOf(btcAddressForm), async () => {
    const issued = await fetchChallenge(address, 'login');
    if (!issued.ok) {
      markInvalid(btcAddress, issued.code === 'bad_request');
      say(btcError, describeError(issued, { bad_request: t('page.address_refused') }));
      btcAddress.focus();
      return;
    }
    showChallenge(address, issued.body, issued.date);
    say(pageStatus, t('signin.message_ready'));
    btcMessage.focus();
  });
});

/** Stops the message's countdown (a new message, or a reset). */
let stopBtcCountdown = () => {};

/**
 * Shows the message to sign for `address`, with a button per wallet and the paste field.
 *
 * @param {string} address
 * @param {{message: string, nonce: string, expiresAt: string}} issued GET /api/challenge's answer
 * @param {string | null} [serverDate] the answer's HTTP Date
 */
function showChallenge(address, issued, serverDate = null) {
  stopBtcCountdown();
  challenge = { address, message: issued.message, nonce: issued.nonce };
  byId('btc-expired').hidden = true;
  byId('btc-submit-row').hidden = false;
  const clock = byId('btc-countdown');
  clock.classList.remove('expired');
  let warned = false;
  stopBtcCountdown = countdown(
    clock,
    issued.expiresAt,
    (left) => {
      if (left <= 60 && left > 0 && !warned) {
        warned = true;
        say(pageStatus, t('signin.message_one_minute'));
      }
      return left > 0 ? t('signin.message_expires_in', { clock: clockText(left) }) : t('signin.message_expired');
    },
    () => {
      clock.classList.add('expired');
      byId('btc-expired').hidden = false;
      // Only a new message helps now: its button is the one filled button.
      byId('btc-submit-row').hidden = true;
      showBtcError(t('signin.message_expired_unsigned'));
    },
    serverDate,
  );
  btcMessage.value = challenge.message;
  byId('btc-expires').replaceChildren(
    ...tNodes('signin.message_expires_at', { time: h('time', { datetime: issued.expiresAt, text: formatTime(issued.expiresAt) }) }),
  );
  for (const walletButton of btcTools.querySelectorAll('[data-wallet]')) walletButton.remove();
  showWalletButtons(address);
  btcAddressForm.hidden = true;
  btcSignForm.hidden = false;
}

/** Shows a Bitcoin error next to the action (say() brings an alert into view); the wallet's progress line goes. @param {string} text */
function showBtcError(text) {
  say(byId('btc-wallet-status'), '');
  say(btcError, text);
}

/** The wallet that made the signature being submitted, to explain a refusal in its terms; null for a pasted one. */
/** @type {import('./wallets.js').Wallet | null} */
let signedBy = null;

/**
 * Asks `wallet` to sign the current message as `address`, then signs in; errors stay next to the buttons.
 *
 * @param {import('./wallets.js').Wallet} wallet
 * @param {string} address
 */
async function signWith(wallet, address) {
  if (!challenge) return;
  say(btcError, '');
  say(byId('btc-wallet-status'), t('wallet.waiting', { wallet: wallet.label, address }));
  try {
    btcSignature.value = await wallet.sign(challenge.message, address);
  } catch (error) {
    say(byId('btc-wallet-status'), '');
    showBtcError(walletErrorText(error, wallet.label));
    return;
  }
  say(byId('btc-wallet-status'), t('signin.wallet_signed', { wallet: wallet.label, address }));
  signedBy = wallet;
  btcSignForm.requestSubmit();
}

/** @param {string} address */
function showWalletButtons(address) {
  appendWalletButtons(btcTools, (wallet) => signWith(wallet, address));
}

// ---- a browser wallet, in its dialog ----

const walletDialog = /** @type {HTMLDialogElement} */ (byId('wallet-dialog'));
const walletStatus = byId('wallet-dialog-status');
const walletError = byId('wallet-error');
const walletFailed = byId('wallet-dialog-failed');
/** The wallet of the dialog and the button that opened it (focus goes back there). */
/** @type {{wallet: import('./wallets.js').Wallet, opener: HTMLElement} | null} */
let walletTurn = null;
/** Counts the tries: an answer of a try given up (Cancel, Escape, Try again) is ignored. */
let walletTry = 0;

/**
 * One try with the dialog's wallet: its address, a message for it, its
 * signature, the sign-in. A refusal or failure is said next to "Try again".
 */
async function walletSignIn() {
  if (!walletTurn) return;
  const { wallet } = walletTurn;
  const attempt = ++walletTry;
  const current = () => attempt === walletTry && walletDialog.open;
  walletFailed.hidden = true;
  say(walletError, '');
  say(walletStatus, t('signin.wallet_check', { wallet: wallet.label }));
  /** @param {string} text */
  const failed = (text) => {
    if (!current()) return;
    say(walletStatus, '');
    walletFailed.hidden = false;
    say(walletError, text);
    byId('wallet-retry').focus();
  };
  try {
    const addresses = await wallet.connect();
    if (!current()) return;
    const address = addresses.find((candidate) => looksLikeBitcoinAddress(candidate));
    if (address === undefined) return failed(t('signin.wallet_no_address', { wallet: wallet.label }));
    const issued = await fetchChallenge(address, 'login');
    if (!current()) return;
    if (!issued.ok) return failed(describeError(issued, { bad_request: t('wallet.address_refused', { wallet: wallet.label, address }) }));
    const signature = await wallet.sign(issued.body.message, address);
    if (!current()) return;
    say(walletStatus, t('signin.wallet_signed', { wallet: wallet.label, address }));
    const signedIn = await api('POST', `/api/auth/signin${addQuery()}`, {
      address,
      message: issued.body.message,
      signature,
      nonce: issued.body.nonce,
    });
    if (!current()) return;
    if (signedIn.ok) return done(`wallet:${wallet.id}`);
    failed(describeSignatureRefusal(signedIn, wallet));
  } catch (error) {
    failed(walletErrorText(error, wallet.label));
  }
}

/**
 * Opens the dialog for `wallet` from `opener` and starts a try. The dialog is
 * modal: the page behind it is inert while the wallet works.
 *
 * @param {import('./wallets.js').Wallet} wallet
 * @param {HTMLElement} opener
 */
function openWallet(wallet, opener) {
  startingOver();
  walletTurn = { wallet, opener };
  byId('wallet-dialog-title').textContent = wallet.label;
  byId('wallet-dialog-logo').setAttribute('src', walletLogo(wallet));
  walletDialog.showModal();
  byId('wallet-cancel').focus();
  void walletSignIn();
}

// Cancel, Escape (the dialog's cancel event) and any other close give up the try and return focus to the opener.
walletDialog.addEventListener('close', () => {
  walletTry += 1;
  const opener = walletTurn?.opener;
  walletTurn = null;
  opener?.focus();
});
byId('wallet-cancel').addEventListener('click', () => walletDialog.close());
byId('wallet-retry').addEventListener('click', () => {
  byId('wallet-cancel').focus();
  void walletSignIn();
});

/** A button per wallet this page can see, with the wallet's logo, first on the card. */
function showConnectButtons() {
  const wallets = detectWallets();
  const holder = byId('btc-wallet-buttons');
  // The same wallets as before keep their buttons (one may have opened the dialog, and gets focus back).
  if (
    wallets.map((wallet) => wallet.id).join() ===
    [...holder.querySelectorAll('[data-connect]')].map((button) => button.getAttribute('data-connect')).join()
  )
    return;
  const last = lastWay();
  holder.replaceChildren(
    ...wallets.map((wallet) => {
      const button = h(
        'button',
        { type: 'button', class: 'way secondary', 'data-connect': wallet.id },
        h('img', { class: 'way-logo', src: walletLogo(wallet), alt: '', width: '24', height: '24' }),
        h('span', { class: 'way-name', text: t('wallet.connect', { wallet: wallet.label }) }),
      );
      button.addEventListener('click', () => openWallet(wallet, button));
      const item = h('li', {}, button);
      if (last === `wallet:${wallet.id}`) markLastUsed(button);
      return item;
    }),
  );
  byId('btc-wallets').hidden = wallets.length === 0;
}

byId('btc-copy').addEventListener('click', async () => {
  const copied = await copyText(btcMessage.value, btcMessage);
  say(pageStatus, copied ? t('page.message_copied') : t('page.message_selected'));
});

byId('btc-restart').addEventListener('click', () => {
  resetBtc();
  btcAddress.focus();
});

byId('btc-renew').addEventListener('click', (event) =>
  busy(/** @type {HTMLButtonElement} */ (event.currentTarget), async () => {
    if (!challenge) return;
    say(btcError, '');
    const address = challenge.address;
    const issued = await fetchChallenge(address, 'login');
    if (!issued.ok) {
      showBtcError(describeError(issued));
      return;
    }
    btcSignature.value = '';
    showChallenge(address, issued.body, issued.date);
    say(pageStatus, t('signin.new_message_ready'));
    btcMessage.focus();
  }),
);

btcSignForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  say(btcError, '');
  if (!challenge) return;
  if (!byId('btc-expired').hidden) {
    showBtcError(t('signin.message_expired_unsigned'));
    return;
  }
  const signature = btcSignature.value.replace(/\s+/g, '');
  if (!checkField(btcSignature, signature !== '', btcError, t('page.signature_missing'))) return;
  const wallet = signedBy;
  signedBy = null;
  const signed = challenge;
  await busy(/** @type {HTMLButtonElement} */ (byId('btc-submit')), async () => {
    const signedIn = await api('POST', `/api/auth/signin${addQuery()}`, {
      address: signed.address,
      message: signed.message,
      signature,
      nonce: signed.nonce,
    });
    if (signedIn.ok) return done('btc');
    const spent = signedIn.code === 'nonce_reused' || challengeCodeOf(signedIn) === 'expired';
    if (spent) {
      // A used or expired message cannot be signed again: start over with a new one.
      resetBtc();
      btcAddress.focus();
    } else {
      markInvalid(btcSignature, true);
      btcSignature.focus();
    }
    showBtcError(describeSignatureRefusal(signedIn, wallet));
  });
});

/**
 * A refused signature in the terms of what made it: the wallet's own signing options, or the pasted text.
 *
 * @param {import('./common.js').ApiResult} result
 * @param {import('./wallets.js').Wallet | null} wallet
 */
function describeSignatureRefusal(result, wallet) {
  const code = challengeCodeOf(result);
  if (code === 'sig_unsupported_script') {
    return wallet ? t('signin.legacy_wallet', { wallet: wallet.label }) : t('signin.legacy_pasted');
  }
  if (code === 'sig_invalid') {
    return wallet ? t('signin.mismatch_wallet', { wallet: wallet.label }) : t('signin.mismatch_pasted');
  }
  return describeError(result);
}

// ---- e-mail code ----

const emailStartForm = /** @type {HTMLFormElement} */ (byId('email-start-form'));
const emailVerifyForm = /** @type {HTMLFormElement} */ (byId('email-verify-form'));
const emailAddress = /** @type {HTMLInputElement} */ (byId('email-address'));

// An app's `login_hint` (docs/protocol.md §8 "Signing in") fills the field it fits: an e-mail, else a Bitcoin address.
const loginHint = document.body.dataset.loginHint ?? '';
if (looksLikeEmail(loginHint)) emailAddress.value = loginHint;
else if (loginHint !== '' && !loginHint.startsWith('did:')) btcAddress.value = loginHint;
const emailCodeField = /** @type {HTMLInputElement} */ (byId('email-code'));
const emailError = byId('email-error');
const resendButton = /** @type {HTMLButtonElement} */ (byId('email-resend'));

/** The code sent last has expired, or the service says it is used up: only a new one helps. */
let codeExpired = false;
/** A new code may be asked for from this time (ms); the page waits 30 s between codes, longer when the service says so. */
let resendAt = 0;
const RESEND_WAIT_MS = 30_000;
let stopEmailCountdown = () => {};
let resendTimer = 0;

const emailStep = byId('email-step');
const emailSubmit = /** @type {HTMLButtonElement} */ (byId('email-submit'));

/**
 * The code sent and where this browser was going, kept for the mail's link
 * (docs/protocol.md §6 "E-mail codes"): it opens in a new tab, which finds
 * the start's token here and verifies with it. Only this browser has it, so
 * the link signs in nowhere else. Gone once used, replaced or given up.
 */
const PENDING_CODE_KEY = 'oc-email-code';
/** Set when a code was taken in any tab of this browser, so a tab still waiting for it goes on. */
const CODE_TAKEN_KEY = 'oc-email-signed-in';

/** @typedef {{email: string, token: string, returnTo: string, add: boolean, expiresAt: string}} PendingCode */

/** @param {PendingCode | null} pending */
function keepPendingCode(pending) {
  try {
    if (pending === null) localStorage.removeItem(PENDING_CODE_KEY);
    else localStorage.setItem(PENDING_CODE_KEY, JSON.stringify(pending));
  } catch {
    // storage may be off: then the link asks for the code to be typed
  }
}

/** @returns {PendingCode | null} the code this browser asked for last, while it is valid */
function pendingCode() {
  try {
    const kept = JSON.parse(localStorage.getItem(PENDING_CODE_KEY) ?? 'null');
    if (!kept || typeof kept.email !== 'string' || typeof kept.token !== 'string' || !(Date.parse(kept.expiresAt) > Date.now()))
      return null;
    return { ...kept, returnTo: safeReturnTo(kept.returnTo, DEFAULT_RETURN_TO), add: kept.add === true };
  } catch {
    return null;
  }
}

/** Where a code taken in this tab leads: this page's `return_to`, or the one of the start the link belongs to. */
let codeReturnTo = returnTo;

/** A code was taken (in this tab or another one of this browser): signed in, go on. */
function codeTaken() {
  keepPendingCode(null);
  try {
    localStorage.setItem(CODE_TAKEN_KEY, String(Date.now()));
  } catch {
    // the other tabs keep waiting; this one goes on
  }
  remember('email');
  say(pageStatus, t('signin.signed_in'));
  window.location.assign(afterProof(codeReturnTo));
}

// The mail's link was opened in another tab of this browser and signed in there: this tab goes on too.
window.addEventListener('storage', (event) => {
  if (event.key === CODE_TAKEN_KEY && event.newValue !== null && emailCode.sent !== null) {
    say(pageStatus, t('signin.signed_in'));
    window.location.assign(afterProof(codeReturnTo));
  }
});

/** The code sent can no longer be used: the step's main button asks for a new one instead. @param {string} text why */
function codeGone(text) {
  stopEmailCountdown();
  codeExpired = true;
  markInvalid(emailCodeField, false);
  emailSubmit.textContent = t('signin.resend');
  resendButton.hidden = true;
  say(emailError, text);
  emailSubmit.focus();
}

const emailCode = emailCodeForm({
  startForm: emailStartForm,
  codeForm: emailVerifyForm,
  field: emailCodeField,
  error: emailError,
  usable: () => !codeExpired,
  // The main button of a code that is gone sends a new one.
  unusable: () => void resend(emailSubmit),
  async verify(proof) {
    const verified = await api('POST', `/api/auth/email-otp/verify${addQuery()}`, proof);
    if (verified.ok) {
      codeTaken(); // the page is leaving: no second try
      return true;
    }
    if (verified.code === 'code_dead') {
      codeGone(t('signin.code_dead'));
      return false;
    }
    emailCode.refused(verified);
    return false;
  },
});

// An error under the code field replaces what the page said before ("Code sent"): no stale line above a red one.
new MutationObserver(() => {
  if (emailError.textContent !== '') say(pageStatus, '');
}).observe(emailError, { childList: true, characterData: true, subtree: true });

function updateResendButton() {
  const wait = Math.ceil((resendAt - Date.now()) / 1000);
  if (wait > 0) {
    resendButton.setAttribute('aria-disabled', 'true');
    resendButton.textContent = t('signin.resend_in', { seconds: wait });
  } else {
    resendButton.removeAttribute('aria-disabled');
    resendButton.textContent = t('signin.resend');
    clearInterval(resendTimer);
  }
}

/** @param {number} milliseconds */
function holdResend(milliseconds) {
  resendAt = Date.now() + milliseconds;
  clearInterval(resendTimer);
  resendTimer = setInterval(updateResendButton, 1000);
  updateResendButton();
}

/**
 * @param {string} expiresAt
 * @param {string | null} serverDate
 */
function startEmailCountdown(expiresAt, serverDate) {
  stopEmailCountdown();
  const clock = byId('email-countdown');
  clock.classList.remove('expired');
  stopEmailCountdown = countdown(
    clock,
    expiresAt,
    (left) => (left > 0 ? t('page.code_expires_in', { clock: clockText(left) }) : t('page.code_expired_short')),
    () => {
      clock.classList.add('expired');
      codeGone(t('signin.code_expired'));
    },
    serverDate,
  );
}

/**
 * Asks for a code (a resend with the token of the code it replaces), then
 * counts down to its end and holds the next resend back.
 *
 * @param {string} email
 * @param {HTMLButtonElement | null} button
 * @param {string} [token]
 */
async function sendCode(email, button, token) {
  const started = await emailCode.send(email, button, token);
  if (started.code === 'rate_limited') holdResend((Number(started.body?.retry_after_seconds) || 60) * 1000);
  if (!started.ok) return false;
  codeExpired = false;
  emailSubmit.textContent = t('signin.continue');
  resendButton.hidden = false;
  keepPendingCode({ email, token: started.body.token, returnTo, add: adding, expiresAt: started.body.expiresAt });
  startEmailCountdown(started.body.expiresAt, started.date);
  holdResend(RESEND_WAIT_MS);
  return true;
}

/**
 * The step "Check your e-mail" for `email`, in place of the ways; its error
 * sits under the code field.
 *
 * @param {string} email
 */
function showEmailStep(email) {
  byId('email-sent').replaceChildren(...tNodes('signin.code_sent_to', { email: h('strong', { text: email }) }));
  byId('email-code-error-slot').append(emailError);
  ways.hidden = true;
  emailStep.hidden = false;
  emailCode.show();
}

emailStartForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  startingOver();
  say(emailError, '');
  const email = emailAddress.value.trim();
  if (!checkField(emailAddress, looksLikeEmail(email), emailError, t('page.email_invalid'))) return;
  if (!(await sendCode(email, submitButtonOf(emailStartForm)))) {
    emailAddress.focus();
    return;
  }
  showEmailStep(email);
  say(pageStatus, t('signin.code_sent', { email }));
});

/** A new code, with `button` busy: after the wait between codes, with the token of the code it replaces. @param {HTMLButtonElement} button */
async function resend(button) {
  const sent = emailCode.sent;
  if (!sent) return;
  say(emailError, '');
  const wait = Math.ceil((resendAt - Date.now()) / 1000);
  if (wait > 0) {
    say(pageStatus, t('signin.resend_wait', { seconds: wait }));
    return;
  }
  if (await sendCode(sent.email, button, sent.token)) {
    say(pageStatus, t('signin.code_resent', { email: sent.email }));
    emailCode.show();
  }
}

resendButton.addEventListener('click', () => resend(resendButton));

byId('email-restart').addEventListener('click', () => {
  stopEmailCountdown();
  emailCode.reset();
  keepPendingCode(null);
  codeReturnTo = returnTo;
  byId('email-start-error-slot').append(emailError);
  say(emailError, '');
  say(pageStatus, '');
  emailStep.hidden = true;
  ways.hidden = false;
  emailAddress.focus();
});

/**
 * The mail's link: `/signin#link=<secret>&email=<address>` (docs/protocol.md
 * §6 "E-mail codes"). The fragment never reaches a server or a log, and
 * leaves the address bar at once. In the browser that asked for the code
 * (its start's token is kept here) the link's secret is sent with that
 * token, and the service signs in only with both; anywhere else (another
 * browser, a device, a mail scanner) the address is filled in and the
 * person is asked to type the code: nothing is sent.
 */
async function openMailLink() {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const link = fragment.get('link');
  const email = fragment.get('email');
  if (link === null || email === null || !looksLikeEmail(email)) return;
  history.replaceState(null, '', window.location.pathname + window.location.search);
  const pending = pendingCode();
  if (pending === null || pending.email.toLowerCase() !== email.trim().toLowerCase()) {
    emailAddress.value = email;
    showNotice(t('signin.link_elsewhere'), false);
    return;
  }
  codeReturnTo = pending.returnTo;
  adding = pending.add;
  emailCode.resume(pending.email, pending.token);
  showEmailStep(pending.email);
  startEmailCountdown(pending.expiresAt, null);
  const signedIn = await busy(emailSubmit, () =>
    api('POST', `/api/auth/email-otp/link${addQuery()}`, { email: pending.email, link, token: pending.token }),
  );
  if (signedIn.ok) return codeTaken();
  // The code stays usable for typing: the step waits for it, saying why the link did not sign in.
  if (signedIn.code === 'code_dead') return codeGone(t('signin.code_dead'));
  if (signedIn.code === 'link_elsewhere') return say(emailError, t('signin.link_elsewhere'));
  emailCode.refused(signedIn, describeError(signedIn));
}

// ---- identity providers ----

/** Providers with a logo of their own among the assets; the others show their initial. */
const PROVIDER_LOGOS = new Set(['github', 'google']);

/** @type {Array<{id: string, label: string}>} */
let providers = [];

/** The providers' buttons, with `add` as it is now ("Use another account" turns it on). */
function renderProviders() {
  const last = lastWay();
  const list = byId('provider-list');
  list.replaceChildren(
    ...providers.map((provider) => {
      const query = new URLSearchParams({ return_to: returnTo });
      if (adding) query.set('add', '1');
      const logo = PROVIDER_LOGOS.has(provider.id)
        ? h('img', { class: 'way-logo', src: `/assets/${provider.id}.svg`, alt: '', width: '24', height: '24' })
        : h('span', { class: 'way-logo way-initial', 'aria-hidden': 'true', text: initialOf(provider.label) });
      const link = h(
        'a',
        { class: 'button secondary way', href: `/api/auth/${provider.id}/start?${query}` },
        logo,
        h('span', { class: 'way-name', text: t('signin.continue_with', { provider: provider.label }) }),
      );
      link.addEventListener('click', () => remember(`provider:${provider.id}`));
      if (last === `provider:${provider.id}`) markLastUsed(link);
      return h('li', {}, link);
    }),
  );
  byId('providers').hidden = providers.length === 0;
}

async function showProviders() {
  const listed = await api('GET', '/api/auth/providers');
  if (!listed.ok || !listed.body || !Array.isArray(listed.body.providers)) return;
  providers = listed.body.providers.filter(
    /** @param {any} provider */
    (provider) => typeof provider.id === 'string' && /^[a-z0-9][a-z0-9-]{0,31}$/.test(provider.id) && typeof provider.label === 'string',
  );
  renderProviders();
}

// ---- passkeys ----

const passkeyError = byId('passkey-error');
/** @type {AbortController | null} The waiting autofill request, cancelled when the person presses the button. */
let autofill = null;

/**
 * One passkey sign-in: options, the browser's prompt (or its autofill), then
 * POST /api/auth/passkey/signin. True when it signed in.
 *
 * @param {{mediation?: 'conditional', signal?: AbortSignal}} how
 */
async function passkeySignIn(how) {
  const started = await api('POST', '/api/auth/passkey/options');
  if (started.code === 'webauthn_unavailable') {
    // This host's address cannot carry passkeys (docs/protocol.md §6): leave the way out.
    byId('passkey').hidden = true;
    return false;
  }
  if (!started.ok) {
    say(passkeyError, describeKeyError(started));
    return false;
  }
  const response = await getAssertion(started.body.options, how);
  const signedIn = await api('POST', `/api/auth/passkey/signin${addQuery()}`, { challenge_token: started.body.challenge_token, response });
  if (signedIn.ok) {
    done('passkey');
    return true;
  }
  say(passkeyError, describeKeyError(signedIn, { credential_outside_allowlist: t('signin.passkey_not_allowed') }));
  return false;
}

async function waitForAutofill() {
  if (!(await conditionalSupported())) return;
  autofill = new AbortController();
  try {
    await passkeySignIn({ mediation: 'conditional', signal: autofill.signal });
  } catch (failure) {
    // Aborted by the button, or the browser gave up: the other ways stay.
    if (!wasCancelled(failure)) say(passkeyError, browserErrorText(failure));
  }
}

function setUpPasskeys() {
  if (!webauthnSupported()) return;
  byId('passkey').hidden = false;
  const button = /** @type {HTMLButtonElement} */ (byId('passkey-button'));
  button.addEventListener('click', () =>
    busy(button, async () => {
      say(passkeyError, '');
      autofill?.abort();
      autofill = null;
      try {
        await passkeySignIn({});
      } catch (failure) {
        say(passkeyError, browserErrorText(failure));
      }
    }),
  );
  void waitForAutofill();
}

/** Marks the ways of this page's own markup that this browser used last. */
function markLastWay() {
  const last = lastWay();
  byId('email-last-used').hidden = last !== 'email';
  if (last === 'passkey') markLastUsed(byId('passkey-button'));
  if (last === 'btc') markLastUsed(manualOpen);
}

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
