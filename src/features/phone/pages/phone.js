/**
 * The phone's side of signing in from a phone (docs/protocol.md §6 "Signing
 * in from a phone"): the page the desktop's QR code opens, in the wallet's
 * own browser. It reads the phone key from the fragment (which no request
 * carries), says which browser and which site it is about to sign in and the
 * code the desktop shows, and warns when the desktop is on another network;
 * then the wallet signs an ordinary login challenge for this service, or the
 * person says it was not them. The phone itself is never signed in.
 */
import { api, busy, byId, clockText, countdown, describeError, fetchChallenge, focusHeading, h, say, t } from './common.js';
import { detectWallets, walletErrorText } from './wallets.js';

/** How long to wait for a wallet that injects itself after the page loaded. */
const WALLET_WAIT_MS = 600;

const key = window.location.hash.slice(1);
// The key stays in this page's memory only: not in the history, a bookmark or a shared address.
if (key !== '') window.history.replaceState(null, '', window.location.pathname + window.location.search);

const pageError = byId('page-error');
const pageStatus = byId('page-status');
const walletStatus = byId('phone-wallet-status');

/** Sentences for the hand-off's own refusals. @type {Record<string, string>} */
const HANDOFF_ERRORS = {
  invalid_handoff: t('phone.invalid'),
  handoff_used: t('phone.used'),
  handoff_expired: t('phone.expired'),
};

/** @type {() => void} */
let stopCountdown = () => {};

/**
 * The end of the page: the question goes, and a heading says what happened.
 *
 * @param {string} title
 * @param {string} text
 */
function finish(title, text) {
  stopCountdown();
  byId('phone-ask').hidden = true;
  byId('phone-done').hidden = false;
  byId('phone-done-title').textContent = title;
  byId('phone-done-text').textContent = text;
  focusHeading('phone-done-title');
}

/** A refusal of the service: said, and the question goes when the hand-off can no longer be answered. @param {import('./common.js').ApiResult} result */
function refused(result) {
  say(pageError, describeError(result, HANDOFF_ERRORS));
  if (result.code !== null && Object.hasOwn(HANDOFF_ERRORS, result.code)) {
    stopCountdown();
    byId('phone-ask').hidden = true;
  }
}

/**
 * Connects `wallet`, has it sign a login challenge for this service, and approves.
 *
 * @param {import('./wallets.js').Wallet} wallet
 * @param {HTMLButtonElement} button
 */
async function approveWith(wallet, button) {
  say(pageError, '');
  await busy(button, async () => {
    try {
      say(walletStatus, t('wallet.connecting', { wallet: wallet.label }));
      const [address] = await wallet.connect();
      if (address === undefined) throw new Error(t('signin.wallet_no_address', { wallet: wallet.label }));
      const issued = await fetchChallenge(address, 'login');
      if (!issued.ok) {
        say(walletStatus, '');
        refused(issued);
        return;
      }
      say(walletStatus, t('wallet.waiting', { wallet: wallet.label, address }));
      const signature = await wallet.sign(issued.body.message, address);
      const approved = await api('POST', '/api/auth/handoff/approve', { key, message: issued.body.message, signature });
      say(walletStatus, '');
      if (!approved.ok) {
        refused(approved);
        return;
      }
      finish(t('phone.approved_title'), t('phone.approved', { address }));
    } catch (error) {
      say(walletStatus, '');
      say(pageError, walletErrorText(error, wallet.label));
    }
  });
}

/** A button per wallet this browser has; a hint when it has none. */
function showWallets() {
  const holder = byId('phone-wallets');
  const wallets = detectWallets();
  for (const wallet of wallets) {
    const button = h('button', {
      type: 'button',
      class: 'button',
      'data-wallet': wallet.id,
      text: t('phone.sign_with', { wallet: wallet.label }),
    });
    button.addEventListener('click', () => approveWith(wallet, button));
    holder.append(button);
  }
  byId('phone-no-wallet').hidden = wallets.length > 0;
}

byId('phone-decline').addEventListener('click', async (event) => {
  say(pageError, '');
  const button = /** @type {HTMLButtonElement} */ (event.currentTarget);
  const declined = await busy(button, () => api('POST', '/api/auth/handoff/decline', { key }));
  if (declined.ok) finish(t('phone.declined_title'), t('phone.declined'));
  else refused(declined);
});

async function start() {
  if (key === '') {
    say(pageStatus, '');
    say(pageError, t('phone.no_key'));
    return;
  }
  const looked = await api('POST', '/api/auth/handoff/look', { key });
  say(pageStatus, '');
  if (!looked.ok) {
    refused(looked);
    return;
  }
  const view = looked.body;
  const code = `${String(view.code).slice(0, 3)} ${String(view.code).slice(3)}`;
  byId('phone-question').textContent =
    typeof view.desktop_text === 'string'
      ? t('phone.question', { desktop: view.desktop_text, site: String(view.site) })
      : t('phone.question_unknown', { site: String(view.site) });
  byId('phone-caution').textContent = t('phone.caution', { code });
  byId('phone-code').textContent = code;
  byId('phone-network').hidden = view.other_network !== true;
  byId('phone-ask').hidden = false;
  stopCountdown = countdown(
    byId('phone-countdown'),
    String(view.expires_at),
    (left) => t('phone.expires', { clock: clockText(left) }),
    () => {
      byId('phone-ask').hidden = true;
      say(pageError, t('phone.expired'));
    },
    looked.date,
  );
  // Some wallets inject their object a moment after the page loaded.
  if (detectWallets().length === 0) await new Promise((resolve) => setTimeout(resolve, WALLET_WAIT_MS));
  showWallets();
}

void start();
