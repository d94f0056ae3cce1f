/**
 * Proving the active account again (POST /api/auth/sudo, docs/protocol.md §6
 * "Step-up"): one of its security keys or passkeys, a BIP-322 `purpose=sudo`
 * challenge for one of its addresses, signed by a wallet extension or
 * pasted, or an e-mail code for one of its e-mail addresses. The account
 * page shows it in its step-up dialog, the /sudo page as the page itself;
 * both build it here.
 */
import { api, busy, copyText, describeError, fetchChallenge, h, markInvalid, pastedProof, say, submitButtonOf, t } from './common.js';
import { codeRefusalText, emailCodeForm } from './email-code.js';
import { browserErrorText, describeKeyError, getAssertion, webauthnSupported } from './passkeys.js';
import { appendWalletButtons, signIntoForm } from './wallets.js';

/**
 * The account's own verified addresses and e-mails, and whether it has a
 * key: only those can prove it again. An account whose identities are
 * unknown still offers its primary address.
 *
 * @param {import('./common.js').Identity[] | null} identities
 * @param {{primary_btc?: string | null} | null | undefined} account
 * @param {unknown[] | null} [keys] the account's security keys and passkeys
 */
export function proofOptions(identities, account, keys = null) {
  const verified = (identities ?? []).filter((identity) => identity.verified !== false);
  const addresses = verified.filter((identity) => identity.kind === 'btc').map((identity) => identity.value);
  if (addresses.length === 0 && account && account.primary_btc) addresses.push(account.primary_btc);
  const emails = verified.filter((identity) => identity.kind === 'email').map((identity) => identity.value);
  return { addresses, emails, hasKey: webauthnSupported() && Array.isArray(keys) && keys.length > 0 };
}

/** @param {...HTMLButtonElement} buttons */
function actions(...buttons) {
  return h('div', { class: 'actions' }, ...buttons);
}

/**
 * The hidden section of one way to prove, under its heading `title`.
 *
 * @param {string} id
 * @param {string} title
 * @param {...HTMLElement} children
 */
function proofSection(id, title, ...children) {
  return h('section', { id, 'aria-labelledby': `${id}-title`, hidden: true }, h('h3', { id: `${id}-title`, text: title }), ...children);
}

/**
 * A form of one field: the field's label, the field, and the submit button.
 *
 * @param {string} id
 * @param {HTMLElement} field
 * @param {string} label
 * @param {string} submit the button's text
 * @param {boolean} [hidden]
 */
function oneFieldForm(id, field, label, submit, hidden = false) {
  const button = h('button', { type: 'submit', text: submit });
  return /** @type {HTMLFormElement} */ (
    h('form', { id, novalidate: true, hidden }, h('label', { for: field.id, text: label }), field, actions(button))
  );
}

/**
 * Builds the proof forms into `root`.
 *
 * @param {HTMLElement} root
 * `keyStepUp`: a key proves through the key step-up (POST
 * /api/auth/webauthn/assertion/verify, which sets `step_up_at`) instead of
 * /api/auth/sudo: what an app's demand for a security key needs
 * (docs/protocol.md §8 "How the person signed in").
 *
 * @param {HTMLElement} root
 * @param {{
 *   onProved: () => void,
 *   onSessionLost: (result: import('./common.js').ApiResult) => boolean,
 *   keyStepUp?: boolean,
 * }} options
 */
export function createProofPanel(root, options) {
  const error = h('p', { id: 'sudo-error', class: 'form-error', role: 'alert' });

  const keyButton = h('button', { type: 'button', id: 'sudo-key-button', text: t('stepup.key_button') });
  const key = proofSection('sudo-key', t('stepup.key_title'), h('p', { class: 'hint', text: t('stepup.key_hint') }), actions(keyButton));

  const address = /** @type {HTMLSelectElement} */ (h('select', { id: 'sudo-address', name: 'address' }));
  const addressForm = oneFieldForm('sudo-btc-address-form', address, t('page.btc_address'), t('page.get_message'));
  const message = /** @type {HTMLTextAreaElement} */ (
    h('textarea', { id: 'sudo-message', rows: '8', readonly: true, 'aria-describedby': 'sudo-message-hint' })
  );
  const copy = h('button', { type: 'button', id: 'sudo-copy', class: 'secondary', text: t('page.copy_message') });
  const tools = h('div', { class: 'actions', id: 'sudo-tools' }, copy);
  const signature = /** @type {HTMLTextAreaElement} */ (
    h('textarea', { id: 'sudo-signature', name: 'signature', rows: '4', autocapitalize: 'none', autocorrect: 'off', spellcheck: 'false' })
  );
  const signForm = /** @type {HTMLFormElement} */ (
    h(
      'form',
      { id: 'sudo-btc-sign-form', novalidate: true, hidden: true },
      h('label', { for: 'sudo-message', text: t('page.message_to_sign') }),
      message,
      h('p', { id: 'sudo-message-hint', class: 'hint', text: t('signin.btc_message_hint') }),
      tools,
      h('label', { for: 'sudo-signature', text: t('page.signature') }),
      signature,
      actions(h('button', { type: 'submit', text: t('stepup.confirm') })),
    )
  );
  const btc = proofSection('sudo-btc', t('stepup.btc_title'), addressForm, signForm);

  const emailAddress = /** @type {HTMLSelectElement} */ (h('select', { id: 'sudo-email-address', name: 'email' }));
  const emailStartForm = oneFieldForm('sudo-email-start-form', emailAddress, t('page.email_address'), t('page.send_code'));
  const code = /** @type {HTMLInputElement} */ (
    h('input', {
      id: 'sudo-code',
      name: 'code',
      class: 'code-input',
      type: 'text',
      inputmode: 'numeric',
      autocomplete: 'one-time-code',
      maxlength: '9',
    })
  );
  const emailVerifyForm = oneFieldForm('sudo-email-verify-form', code, t('page.code_label'), t('stepup.confirm'), true);
  const email = proofSection('sudo-email', t('signin.email_title'), emailStartForm, emailVerifyForm);

  const none = h('p', {
    id: 'sudo-none',
    hidden: true,
    text: t('stepup.none'),
  });
  root.replaceChildren(error, key, btc, email, none);

  /** @type {{address: string, message: string, nonce: string} | null} */
  let challenge = null;

  /**
   * Sends a proof to POST /api/auth/sudo; when it is taken, the panel's owner is told.
   *
   * @param {Record<string, unknown>} body
   * @param {string} [route]
   * @returns {Promise<import('./common.js').ApiResult | null>} the refusal, or null when the proof was taken (or the session is gone)
   */
  async function prove(body, route = '/api/auth/sudo') {
    const proved = await api('POST', route, body);
    if (options.onSessionLost(proved)) return null;
    if (!proved.ok) return proved;
    options.onProved();
    return null;
  }

  keyButton.addEventListener('click', () =>
    busy(keyButton, async () => {
      say(error, '');
      const started = await api('POST', '/api/auth/webauthn/assertion/options', { purpose: 'sudo' });
      if (options.onSessionLost(started)) return;
      if (!started.ok) {
        say(error, describeKeyError(started));
        return;
      }
      let response;
      try {
        response = await getAssertion(started.body.options);
      } catch (failure) {
        say(error, browserErrorText(failure));
        return;
      }
      const route = options.keyStepUp === true ? '/api/auth/webauthn/assertion/verify' : '/api/auth/sudo';
      const refused = await prove({ challenge_token: started.body.challenge_token, response }, route);
      if (refused) say(error, describeKeyError(refused));
    }),
  );

  addressForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    const chosen = address.value;
    await busy(submitButtonOf(addressForm), async () => {
      const issued = await fetchChallenge(chosen, 'sudo');
      if (!issued.ok) {
        say(error, describeError(issued));
        return;
      }
      challenge = { address: chosen, message: issued.body.message, nonce: issued.body.nonce };
      message.value = challenge.message;
      appendWalletButtons(tools, async (wallet) => {
        if (!challenge) return;
        await signIntoForm(wallet, challenge, signature, signForm, error);
      });
      addressForm.hidden = true;
      signForm.hidden = false;
      message.focus();
    });
  });

  copy.addEventListener('click', async () => {
    const copied = await copyText(message.value, message);
    say(error, copied ? '' : t('page.message_selected'));
  });

  signForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const proof = pastedProof(challenge, signature, error);
    if (!proof) return;
    await busy(submitButtonOf(signForm), async () => {
      const refused = await prove(proof);
      if (refused) say(error, describeError(refused));
    });
  });

  const emailCode = emailCodeForm({
    startForm: emailStartForm,
    codeForm: emailVerifyForm,
    field: code,
    error,
    async verify(proof) {
      const refused = await prove(proof);
      if (refused) emailCode.refused(refused, codeRefusalText(refused, { code_dead: t('stepup.code_dead') }));
      return refused === null;
    },
  });

  emailStartForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    if ((await emailCode.send(emailAddress.value, submitButtonOf(emailStartForm))).ok) emailCode.show();
  });

  return {
    /**
     * Shows the ways this account can prove itself, back at their first step.
     *
     * @param {{addresses: string[], emails: string[], hasKey: boolean}} offered
     */
    reset(offered) {
      challenge = null;
      emailCode.reset();
      say(error, '');
      address.replaceChildren(...offered.addresses.map((value) => h('option', { value, text: value })));
      emailAddress.replaceChildren(...offered.emails.map((value) => h('option', { value, text: value })));
      btc.hidden = offered.addresses.length === 0;
      email.hidden = offered.emails.length === 0;
      key.hidden = !offered.hasKey;
      none.hidden = offered.hasKey || offered.addresses.length > 0 || offered.emails.length > 0;
      addressForm.hidden = false;
      signForm.hidden = true;
      message.value = '';
      signature.value = '';
      markInvalid(signature, false);
      code.value = '';
      markInvalid(code, false);
      for (const walletButton of tools.querySelectorAll('[data-wallet]')) walletButton.remove();
    },
  };
}
