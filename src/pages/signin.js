/**
 * The sign-in page (/signin): BIP-322 signed challenge, e-mail code, a
 * passkey, and one button per configured identity provider (docs/api.md
 * "Sign-in paths").
 *
 * Passkeys (docs/protocol.md §6 "Security keys and passkeys"): where the
 * browser offers passkeys in a field's autofill (conditional mediation), the
 * e-mail field lists them as soon as the page loads; the button asks with the
 * browser's own prompt, and cancels the waiting autofill request first.
 *
 * `return_to` and `add` come from data attributes the server rendered after
 * checking them (src/http/pages.ts); `add=1` is passed on every path so the
 * new account joins this browser's roster instead of replacing it.
 */
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
  looksLikeBitcoinAddress,
  looksLikeEmail,
  markInvalid,
  nameInteractionApp,
  oauthErrorText,
  safeReturnTo,
  say,
  clockText,
  countdown,
  submitButtonOf,
  t,
  tNodes,
} from './common.js';
import { emailCodeForm } from './email-code.js';
import { appendWalletButtons, detectWallets, walletErrorText } from './wallets.js';
import { browserErrorText, conditionalSupported, describeKeyError, getAssertion, wasCancelled, webauthnSupported } from './passkeys.js';

const DEFAULT_RETURN_TO = '/account';

const returnTo = safeReturnTo(document.body.dataset.returnTo, DEFAULT_RETURN_TO);
const adding = document.body.dataset.add === '1';
const addQuery = adding ? '?add=1' : '';

const pageError = byId('page-error');
const pageStatus = byId('page-status');
const notice = byId('notice');

/** This browser remembers the way it last signed in, to offer it first next time (nothing leaves the browser). */
const LAST_WAY_KEY = 'oc-last-sign-in';

const main = byId('main');

/** @param {string} way `btc`, `email`, `passkey` or `provider:<id>` */
function remember(way) {
  try {
    localStorage.setItem(LAST_WAY_KEY, way);
  } catch {
    // storage may be off; then nothing is offered first
  }
}

/** Puts the way last used first, marked "Last used". */
function offerLastUsed() {
  let way = null;
  try {
    way = localStorage.getItem(LAST_WAY_KEY);
  } catch {
    return;
  }
  /** @type {Readonly<Record<string, string>>} */
  const ids = { btc: 'way-btc', email: 'way-email', passkey: 'passkey' };
  const sectionId = way === null ? undefined : way.startsWith('provider:') ? 'providers' : ids[way];
  if (!sectionId) return;
  const section = document.getElementById(sectionId);
  const first = main.querySelector('section.card');
  if (!section || !first || section.hidden) return;
  if (section !== first) first.before(section);
  const heading = section.querySelector('h2');
  if (heading && !heading.querySelector('.badge')) heading.append(' ', h('span', { class: 'badge', text: t('signin.last_used') }));
}

/** After any successful sign-in: go where the person was going. @param {string} [way] what to offer first next time */
function done(way) {
  if (way) remember(way);
  say(pageStatus, t('signin.signed_in'));
  window.location.assign(afterProof(returnTo));
}

// ---- page notices: adding, provider errors, refused return_to, signed out ----

/**
 * @param {HTMLElement} region
 * @param {Array<string | Node>} parts
 */
function showNotice(region, parts) {
  region.replaceChildren(...parts);
  region.hidden = false;
}

function setUpNotices() {
  const query = new URLSearchParams(window.location.search);
  if (adding) {
    byId('page-title').textContent = t('signin.add_title');
    document.title = `${t('signin.add_title')} · ${document.body.dataset.brand || 'oc-host'}`;
    byId('lead').textContent = t('signin.add_lead');
  }
  const oauthError = query.get('oauth_error');
  if (oauthError !== null) {
    // An alert region announces it; the code itself is never shown as HTML.
    say(pageError, oauthErrorText(oauthError));
  }
  if (document.body.dataset.returnToRefused === '1') {
    showNotice(notice, [t('signin.return_to_refused')]);
  }
  if (query.get('signed_out') === '1') say(pageStatus, t('signin.signed_out'));
  if (query.get('deleted') === '1') say(pageStatus, t('signin.deleted'));
}

/** Someone already signed in who opens /signin without `add` is told what a new sign-in does. */
async function checkExistingSession() {
  if (adding) return;
  const me = await api('GET', '/api/auth/me');
  if (!me.ok || !me.body?.account) return;
  const addHref = `/signin?add=1&return_to=${encodeURIComponent(returnTo)}`;
  showNotice(
    byId('session-notice'),
    tNodes('signin.already', {
      name: h('strong', { text: accountName(me.body.account) }),
      account: h('a', { href: '/account', text: t('signin.already_account') }),
      add: h('a', { href: addHref, text: t('signin.already_add') }),
    }),
  );
}

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
  byId('btc-paste-title').hidden = false;
  say(btcError, '');
}

/**
 * A new way chosen: messages about the other ways are stale now. The page's
 * status and every card's error go; the card being used speaks for itself.
 */
function startingOver() {
  say(pageStatus, '');
  for (const id of ['btc-error', 'email-error', 'passkey-error', 'btc-wallet-status']) say(byId(id), '');
}

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
  byId('btc-paste-title').hidden = true;
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

/**
 * "Connect <wallet>": the wallet gives the address, the page fetches the message, the wallet signs it.
 *
 * @param {import('./wallets.js').Wallet} wallet
 * @param {HTMLButtonElement} button
 */
async function connectAndSign(wallet, button) {
  startingOver();
  await busy(button, async () => {
    say(btcError, '');
    const status = byId('btc-wallet-status');
    say(status, t('wallet.connecting', { wallet: wallet.label }));
    /** @type {string[]} */
    let addresses;
    try {
      addresses = await wallet.connect();
    } catch (error) {
      say(status, '');
      showBtcError(walletErrorText(error, wallet.label));
      return;
    }
    const address = addresses.find((candidate) => looksLikeBitcoinAddress(candidate));
    if (address === undefined) {
      say(status, '');
      showBtcError(t('signin.wallet_no_address', { wallet: wallet.label }));
      return;
    }
    resetBtc();
    btcAddress.value = address;
    say(status, t('wallet.will_sign', { wallet: wallet.label, address }));
    const issued = await fetchChallenge(address, 'login');
    if (!issued.ok) {
      showBtcError(describeError(issued, { bad_request: t('wallet.address_refused', { wallet: wallet.label, address }) }));
      return;
    }
    showChallenge(address, issued.body, issued.date);
    await signWith(wallet, address);
  });
}

function showConnectButtons() {
  const wallets = detectWallets();
  const holder = byId('btc-wallet-buttons');
  holder.replaceChildren(
    ...wallets.map((wallet) => {
      const button = h('button', { type: 'button', 'data-connect': wallet.id, text: t('wallet.connect', { wallet: wallet.label }) });
      button.addEventListener('click', () => connectAndSign(wallet, button));
      return button;
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
    const signedIn = await api('POST', `/api/auth/signin${addQuery}`, {
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

const emailCode = emailCodeForm({
  startForm: emailStartForm,
  codeForm: emailVerifyForm,
  field: emailCodeField,
  error: emailError,
  usable: () => !codeExpired,
  unusable() {
    say(emailError, t('signin.code_expired'));
    resendButton.focus();
  },
  async verify(proof) {
    const verified = await api('POST', `/api/auth/email-otp/verify${addQuery}`, proof);
    if (verified.ok) {
      done('email'); // the page is leaving: no second try
      return true;
    }
    if (verified.code === 'code_dead') {
      stopEmailCountdown();
      codeExpired = true;
      markInvalid(emailCodeField, false);
      say(emailError, t('signin.code_dead'));
      resendButton.focus();
      return false;
    }
    emailCode.refused(verified);
    return false;
  },
});

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
      codeExpired = true;
      say(emailError, t('signin.code_expired'));
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
  startEmailCountdown(started.body.expiresAt, started.date);
  holdResend(RESEND_WAIT_MS);
  return true;
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
  byId('email-sent').replaceChildren(...tNodes('signin.code_sent_to', { email: h('strong', { text: email }) }));
  say(pageStatus, t('signin.code_sent', { email }));
  emailCode.show();
});

resendButton.addEventListener('click', async () => {
  const sent = emailCode.sent;
  if (!sent) return;
  say(emailError, '');
  const wait = Math.ceil((resendAt - Date.now()) / 1000);
  if (wait > 0) {
    say(pageStatus, t('signin.resend_wait', { seconds: wait }));
    return;
  }
  if (await sendCode(sent.email, resendButton, sent.token)) {
    say(pageStatus, t('signin.code_resent', { email: sent.email }));
    emailCode.show();
  }
});

byId('email-restart').addEventListener('click', () => {
  stopEmailCountdown();
  emailCode.reset();
  say(emailError, '');
  emailAddress.focus();
});

// ---- identity providers ----

async function showProviders() {
  const listed = await api('GET', '/api/auth/providers');
  if (!listed.ok || !listed.body || !Array.isArray(listed.body.providers) || listed.body.providers.length === 0) return;
  const list = byId('provider-list');
  for (const provider of listed.body.providers) {
    if (typeof provider.id !== 'string' || !/^[a-z0-9][a-z0-9-]{0,31}$/.test(provider.id)) continue;
    const query = new URLSearchParams({ return_to: returnTo });
    if (adding) query.set('add', '1');
    const link = h('a', {
      class: 'button secondary',
      href: `/api/auth/${provider.id}/start?${query}`,
      text: t('signin.continue_with', { provider: provider.label }),
    });
    link.addEventListener('click', () => remember(`provider:${provider.id}`));
    list.append(h('li', {}, link));
  }
  byId('providers').hidden = list.children.length === 0;
  offerLastUsed();
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
  const signedIn = await api('POST', `/api/auth/passkey/signin${addQuery}`, { challenge_token: started.body.challenge_token, response });
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
  offerLastUsed();
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

setUpNotices();
void checkExistingSession();
void nameInteractionApp(returnTo, byId('app-banner'), 'signin.continue_to');
// Wallet extensions may inject their objects after the page's own scripts ran: look again once loaded.
showConnectButtons();
offerLastUsed();
window.addEventListener('load', () => showConnectButtons());
setTimeout(showConnectButtons, 1000);
void showProviders();
setUpPasskeys();
