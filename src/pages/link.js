/**
 * "Link another way to sign in" on the account page (docs/protocol.md §6,
 * linking; §2 "Merging"): a Bitcoin address, proven through a browser wallet
 * or a pasted BIP-322 signature of a `purpose=link` challenge, or an e-mail
 * address, proven by a mailed code.
 *
 * - Linking needs a fresh step-up: the caller's `withStepUp` asks for it and
 *   sends the same proof again, which the service has not used up.
 * - An identity another account holds is refused with 409 and that account
 *   named (`holder`); the person is asked whether to move it here, which
 *   merges that account into this one, and the same proof goes again with
 *   `confirm_transfer: true`.
 */
import {
  api,
  busy,
  codeDigits,
  copyText,
  describeError,
  fetchChallenge,
  h,
  looksLikeBitcoinAddress,
  looksLikeEmail,
  markInvalid,
  say,
  submitAtSixDigits,
  submitButtonOf,
  t,
  tNodes,
} from './common.js';
import { detectWallets, walletErrorText } from './wallets.js';

/**
 * @param {{
 *   withStepUp: (request: () => Promise<any>, action: string, onCancel: () => void) => Promise<any>,
 *   confirmAction: (question: {title: string, text: string, confirm: string}) => Promise<boolean>,
 *   onLinked: (sentence: string) => Promise<void>,
 * }} options
 */
export function setUpLinking(options) {
  const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
  const error = byId('link-error');
  const status = byId('link-status');

  /**
   * Sends a proof to `path`: through a step-up when one is due, and again
   * with `confirm_transfer` when the person agrees to move the identity here.
   */
  async function link(path, proof, shown) {
    const cancelled = () => say(status, t('link.cancelled'));
    const action = t('action.link', { identity: shown });
    let answer = await options.withStepUp(() => api('POST', path, proof), action, cancelled);
    if (answer === null) return false;
    if (answer.code === 'address_linked_elsewhere' || answer.code === 'email_linked_elsewhere') {
      const holder = answer.body && answer.body.holder;
      const holderName = holder ? holder.display_name || holder.did_oc : t('link.another_account');
      const move = await options.confirmAction({
        title: t('link.move_title', { identity: shown }),
        text: t('link.move_text', { identity: shown, holder: holderName }),
        confirm: t('link.move_confirm'),
      });
      if (!move) {
        say(status, t('link.move_declined', { identity: shown, holder: holderName }));
        return false;
      }
      answer = await options.withStepUp(() => api('POST', path, { ...proof, confirm_transfer: true }), action, cancelled);
      if (answer === null) return false;
    }
    if (!answer.ok) {
      say(error, describeError(answer));
      return false;
    }
    const merged = answer.body && answer.body.merged;
    await options.onLinked(merged ? t('link.merged', { identity: shown, merged: merged.did_oc }) : t('link.linked', { identity: shown }));
    return true;
  }

  // ---- a Bitcoin address ----

  const addressForm = /** @type {HTMLFormElement} */ (byId('link-btc-form'));
  const signForm = /** @type {HTMLFormElement} */ (byId('link-btc-sign-form'));
  const address = /** @type {HTMLInputElement} */ (byId('link-btc-address'));
  const message = /** @type {HTMLTextAreaElement} */ (byId('link-btc-message'));
  const signature = /** @type {HTMLTextAreaElement} */ (byId('link-btc-signature'));
  const tools = byId('link-btc-tools');
  /** @type {{address: string, message: string, nonce: string} | null} */
  let challenge = null;

  function resetBtc() {
    challenge = null;
    message.value = '';
    signature.value = '';
    for (const button of tools.querySelectorAll('[data-wallet]')) button.remove();
    signForm.hidden = true;
    addressForm.hidden = false;
  }

  async function prepare(chosen) {
    const issued = await fetchChallenge(chosen, 'link');
    if (!issued.ok) {
      markInvalid(address, issued.code === 'bad_request');
      say(error, describeError(issued, { bad_request: t('link.address_refused') }));
      return false;
    }
    challenge = { address: chosen, message: issued.body.message, nonce: issued.body.nonce };
    message.value = challenge.message;
    for (const button of tools.querySelectorAll('[data-wallet]')) button.remove();
    for (const wallet of detectWallets()) {
      const button = h('button', { type: 'button', class: 'secondary', 'data-wallet': wallet.id, text: t('wallet.sign_with', { wallet: wallet.label }) });
      button.addEventListener('click', () => busy(button, () => signWith(wallet)));
      tools.append(button);
    }
    addressForm.hidden = true;
    signForm.hidden = false;
    return true;
  }

  async function signWith(wallet) {
    if (!challenge) return;
    say(error, '');
    try {
      signature.value = await wallet.sign(challenge.message, challenge.address);
    } catch (failure) {
      say(error, walletErrorText(failure, wallet.label));
      return;
    }
    signForm.requestSubmit();
  }

  const connectHolder = byId('link-btc-wallets');
  const wallets = detectWallets();
  connectHolder.replaceChildren(
    ...wallets.map((wallet) => {
      const button = h('button', { type: 'button', class: 'secondary', text: t('link.with_wallet', { wallet: wallet.label }) });
      button.addEventListener('click', () =>
        busy(button, async () => {
          say(error, '');
          let addresses;
          try {
            addresses = await wallet.connect();
          } catch (failure) {
            say(error, walletErrorText(failure, wallet.label));
            return;
          }
          const chosen = addresses.find((candidate) => looksLikeBitcoinAddress(candidate));
          if (chosen === undefined) {
            say(error, t('link.wallet_no_address', { wallet: wallet.label }));
            return;
          }
          address.value = chosen;
          say(status, t('wallet.will_sign', { wallet: wallet.label, address: chosen }));
          if (await prepare(chosen)) await signWith(wallet);
        }),
      );
      return button;
    }),
  );
  connectHolder.hidden = wallets.length === 0;

  addressForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    const chosen = address.value.trim();
    if (!looksLikeBitcoinAddress(chosen)) {
      markInvalid(address, true);
      say(error, t('page.address_invalid'));
      address.focus();
      return;
    }
    markInvalid(address, false);
    await busy(submitButtonOf(addressForm), async () => {
      if (await prepare(chosen)) message.focus();
    });
  });

  byId('link-btc-copy').addEventListener('click', async () => {
    const copied = await copyText(message.value, message);
    say(status, copied ? t('page.message_copied') : t('page.message_selected'));
  });

  byId('link-btc-restart').addEventListener('click', () => {
    resetBtc();
    address.focus();
  });

  signForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    if (!challenge) return;
    const pasted = signature.value.replace(/\s+/g, '');
    if (pasted === '') {
      markInvalid(signature, true);
      say(error, t('page.signature_missing'));
      signature.focus();
      return;
    }
    markInvalid(signature, false);
    const proof = { address: challenge.address, message: challenge.message, signature: pasted, nonce: challenge.nonce };
    await busy(submitButtonOf(signForm), async () => {
      if (await link('/api/auth/link/btc', proof, challenge.address)) {
        resetBtc();
        address.value = '';
      }
    });
  });

  // ---- an e-mail address ----

  const emailForm = /** @type {HTMLFormElement} */ (byId('link-email-form'));
  const codeForm = /** @type {HTMLFormElement} */ (byId('link-email-code-form'));
  const email = /** @type {HTMLInputElement} */ (byId('link-email-address'));
  const code = /** @type {HTMLInputElement} */ (byId('link-email-code'));
  /** @type {{email: string, token: string} | null} */
  let started = null;

  emailForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    const chosen = email.value.trim();
    if (!looksLikeEmail(chosen)) {
      markInvalid(email, true);
      say(error, t('page.email_invalid'));
      email.focus();
      return;
    }
    markInvalid(email, false);
    await busy(submitButtonOf(emailForm), async () => {
      const answer = await api('POST', '/api/auth/email-otp/start', { email: chosen });
      if (!answer.ok) {
        say(error, describeError(answer));
        return;
      }
      started = { email: chosen, token: answer.body.token };
      byId('link-email-sent').replaceChildren(...tNodes('link.code_sent_to', { email: h('strong', { text: chosen }) }));
      emailForm.hidden = true;
      codeForm.hidden = false;
      code.value = '';
      say(status, t('signin.code_sent', { email: chosen }));
      code.focus();
    });
  });

  submitAtSixDigits(code, codeForm, () => started !== null);

  codeForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    if (!started) return;
    const digits = codeDigits(code.value);
    if (digits.length !== 6) {
      markInvalid(code, true);
      say(error, t('page.code_digits'));
      code.focus();
      return;
    }
    markInvalid(code, false);
    const proof = { email: started.email, code: digits, token: started.token };
    await busy(submitButtonOf(codeForm), async () => {
      if (await link('/api/auth/link/email', proof, started.email)) {
        started = null;
        codeForm.hidden = true;
        emailForm.hidden = false;
        email.value = '';
        delete code.dataset.sent;
      }
    });
  });

  byId('link-email-restart').addEventListener('click', () => {
    started = null;
    codeForm.hidden = true;
    emailForm.hidden = false;
    delete code.dataset.sent;
    email.focus();
  });
}
