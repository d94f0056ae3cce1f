/**
 * Signing in with a Bitcoin wallet (src/pages/signin.js): a browser
 * wallet in its modal dialog (its address, a message for it, its signature,
 * the sign-in; Escape or Cancel gives up and a late answer is ignored), and
 * signing a message by hand (an address, the message to copy, the signature
 * to paste), a step of its own behind a link.
 */
import {
  api,
  busy,
  byId,
  challengeCodeOf,
  checkField,
  clockText,
  copyText,
  countdown,
  describeError,
  fetchChallenge,
  formatTime,
  h,
  looksLikeBitcoinAddress,
  markInvalid,
  say,
  submitButtonOf,
  t,
  tNodes,
} from './common.js';
import { addQuery, done, lastWay, markLastUsed, pageStatus, startingOver, ways } from './signin-state.js';
import { appendWalletButtons, detectWallets, walletErrorText, walletLogo } from './wallets.js';

const btcAddressForm = /** @type {HTMLFormElement} */ (byId('btc-address-form'));
const btcSignForm = /** @type {HTMLFormElement} */ (byId('btc-sign-form'));
export const btcAddress = /** @type {HTMLInputElement} */ (byId('btc-address'));
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

// Signing by hand (an address, the message to copy, the signature to paste) is a step of its own, behind a link.
export const manualOpen = byId('btc-manual-open');
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
  // Queued by a closing that a reopening has already followed: the new try goes on.
  if (walletDialog.open) return;
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
export function showConnectButtons() {
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
