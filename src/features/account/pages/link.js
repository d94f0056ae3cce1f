/**
 * "Link another way to sign in" on the account page (docs/protocol.md §6,
 * linking; §2 "Merging"): a Bitcoin address, proven through a browser wallet
 * or a pasted BIP-322 signature of a `purpose=link` challenge, or an e-mail
 * address, proven by a mailed code.
 *
 * - Linking needs a fresh step-up: the caller's `withStepUp` asks for it and
 *   sends the same proof again, which the service has not used up.
 * - An identity another account holds is refused with 409, that account
 *   named and what it holds listed (`holder`). The confirmation shows that
 *   list: the proven identity moves; its other identities and Connect apps
 *   move only when ticked; its keys are removed. The same proof then goes
 *   again with `confirm_transfer` naming what was ticked, and the answer's
 *   `merged` says what arrived and what went.
 */
import {
  api,
  busy,
  checkField,
  copyText,
  describeError,
  describeIdentity,
  fetchChallenge,
  formatList,
  h,
  looksLikeBitcoinAddress,
  looksLikeEmail,
  markInvalid,
  onSubmit,
  pastedProof,
  say,
  submitButtonOf,
  t,
  tNodes,
} from './common.js';
import { codeRefusalText, emailCodeForm } from './email-code.js';
import { appendWalletButtons, detectWallets, signIntoForm, walletErrorText } from './wallets.js';

/** @typedef {import('./common.js').ApiResult} ApiResult */
/** @typedef {import('./common.js').Identity} Identity */

/**
 * The account that holds an identity, as a 409 `address_linked_elsewhere` or
 * `email_linked_elsewhere` names it in `holder`, with what it holds.
 *
 * @typedef {object} Holder
 * @property {string} did_oc
 * @property {string | null} [display_name]
 * @property {Identity[]} [identities]
 * @property {{id: string, name: string}[]} [apps]
 * @property {{name: string}[]} [security_keys]
 */

/**
 * What a merge did: the answer's `merged`.
 *
 * @typedef {object} Merged
 * @property {string} did_oc the account merged into this one
 * @property {{identities?: Identity[], apps?: {name: string}[]}} [moved]
 * @property {{identities?: Identity[], security_keys?: {name: string}[], apps?: {name: string}[]}} [removed]
 */

/**
 * An answer's list, or none where an older host left it out.
 *
 * @template T
 * @param {T[] | null | undefined} value
 * @returns {T[]}
 */
const listOf = (value) => (Array.isArray(value) ? value : []);

/**
 * Whether `identity` is the one just proven (e-mails are stored lowercased, docs/protocol.md §2).
 *
 * @param {Identity} identity
 * @param {string} shown
 */
function isProven(identity, shown) {
  return typeof identity.value === 'string' && identity.value.toLowerCase() === shown.toLowerCase();
}

/**
 * One checkbox of the merge dialog, unticked: nothing of the other account
 * comes along unless the person recognises it (docs/protocol.md §2 "Merging").
 *
 * @param {string} id the element id
 * @param {string} value the holder's id of the item, sent back in `confirm_transfer`
 * @param {string} title
 * @param {string} sub
 * @param {boolean} mono an address or an e-mail, shown whole in a fixed-width font so each character can be checked
 */
function choice(id, value, title, sub, mono) {
  const box = /** @type {HTMLInputElement} */ (h('input', { id, type: 'checkbox', value }));
  const row = h(
    'div',
    { class: 'check' },
    box,
    h(
      'label',
      { for: id },
      h('span', { class: mono ? 'choice-title mono' : 'choice-title', text: title }),
      ' ',
      h('span', { class: 'item-sub', text: sub }),
    ),
  );
  return { row, box };
}

/**
 * The lists of the merge dialog: the other account's identities and Connect
 * apps, each with an unticked checkbox, and its keys, which never move. A
 * holder without lists (an older host) gives none, and `true` is sent.
 *
 * @param {Holder | null | undefined} holder the 409's `holder`
 * @param {string} shown the identity just proven
 */
function mergeChoices(holder, shown) {
  const nodes = [];
  /** @type {HTMLInputElement[]} */
  const identityBoxes = [];
  /** @type {HTMLInputElement[]} */
  const appBoxes = [];
  const identities = listOf(holder?.identities).filter((identity) => !isProven(identity, shown));
  const apps = listOf(holder?.apps);
  const keys = listOf(holder?.security_keys);
  /**
   * @param {string} id
   * @param {string} legend
   * @param {string} hint
   * @param {HTMLElement[]} rows
   */
  const group = (id, legend, hint, rows) =>
    h(
      'fieldset',
      { class: 'choices', 'aria-describedby': `${id}-hint` },
      h('legend', { text: legend }),
      h('p', { id: `${id}-hint`, class: 'hint', text: hint }),
      ...rows,
    );
  if (identities.length > 0) {
    const rows = identities.map((identity, index) => {
      const { title, sub } = describeIdentity(identity);
      const made = choice(`merge-identity-${index}`, String(identity.id), title, sub, identity.kind !== 'oauth');
      identityBoxes.push(made.box);
      return made.row;
    });
    nodes.push(group('merge-identities', t('link.move_identities'), t('link.move_identities_hint'), rows));
  }
  if (apps.length > 0) {
    const rows = apps.map((app, index) => {
      const made = choice(`merge-app-${index}`, String(app.id), String(app.name), t('kind.connect'), false);
      appBoxes.push(made.box);
      return made.row;
    });
    nodes.push(group('merge-apps', t('link.move_apps'), t('link.move_apps_hint'), rows));
  }
  if (keys.length > 0) {
    nodes.push(
      h(
        'section',
        { class: 'choices', 'aria-labelledby': 'merge-keys-title' },
        h('h3', { id: 'merge-keys-title', text: t('link.move_keys') }),
        h('p', { class: 'hint', text: t('link.move_keys_hint') }),
        h(
          'ul',
          { class: 'removed-list' },
          ...keys.map((key) =>
            h('li', {}, h('strong', { text: String(key.name) }), ' ', h('span', { class: 'badge', text: t('link.will_be_removed') })),
          ),
        ),
      ),
    );
  }
  /** `confirm_transfer`: the ticked ids, or `true` for the proven identity alone. */
  const acceptance = () => {
    /** @param {HTMLInputElement[]} boxes */
    const ticked = (boxes) => boxes.filter((box) => box.checked).map((box) => box.value);
    const accepted = { identities: ticked(identityBoxes), apps: ticked(appBoxes) };
    return accepted.identities.length + accepted.apps.length === 0 ? true : accepted;
  };
  return { nodes, acceptance };
}

/**
 * What a merge did, from the answer's `merged` (docs/protocol.md §2
 * "Merging"): the proven identity is linked, what else arrived, and what was
 * removed with the other account.
 *
 * @param {string} shown
 * @param {Merged} merged
 */
function mergedSentence(shown, merged) {
  /** @param {Identity} identity */
  const identityText = (identity) => describeIdentity(identity).title;
  const moved = [
    ...listOf(merged.moved?.identities)
      .filter((identity) => !isProven(identity, shown))
      .map(identityText),
    ...listOf(merged.moved?.apps).map((app) => t('link.app_named', { name: String(app.name) })),
  ];
  const removed = merged.removed || {};
  const removedIdentities = listOf(removed.identities).map(identityText);
  const removedKeys = listOf(removed.security_keys).map((key) => String(key.name));
  const removedApps = listOf(removed.apps).map((app) => String(app.name));
  const sentences = [t('link.merged', { identity: shown, merged: merged.did_oc })];
  if (moved.length > 0) sentences.push(t('link.merged_moved', { items: formatList(moved) }));
  if (removedIdentities.length > 0)
    sentences.push(t('link.merged_removed_identities', { count: removedIdentities.length, items: formatList(removedIdentities) }));
  if (removedKeys.length > 0) sentences.push(t('link.merged_removed_keys', { count: removedKeys.length, names: formatList(removedKeys) }));
  if (removedApps.length > 0) sentences.push(t('link.merged_removed_apps', { count: removedApps.length, names: formatList(removedApps) }));
  if (removedIdentities.length + removedKeys.length + removedApps.length === 0) sentences.push(t('link.merged_nothing_removed'));
  return sentences.join(' ');
}

/**
 * @param {{
 *   withStepUp: import('./account.js').WithStepUp,
 *   confirmAction: (question: {title: string, text: string, confirm: string, details?: Node[]}) => Promise<boolean>,
 *   onLinked: (sentence: string) => Promise<void>,
 * }} options
 */
export function setUpLinking(options) {
  /** @param {string} id */
  const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
  const error = byId('link-error');
  const status = byId('link-status');

  const againActions = byId('link-again-actions');
  /** @type {(() => void) | null} */
  let restart = null;

  /** Offers "Look again": `start` begins the same link anew, with a fresh proof. @param {() => void} start */
  function offerAgain(start) {
    restart = start;
    againActions.hidden = false;
  }

  function withdrawAgain() {
    restart = null;
    againActions.hidden = true;
  }

  byId('link-again').addEventListener('click', () => {
    const start = restart;
    withdrawAgain();
    say(error, '');
    if (start) start();
  });

  /**
   * Submitting a form that starts a link: the section's error and the offer
   * to look again go, then `start` runs with the field's trimmed value once
   * it looks right (else the field says `wrong`).
   *
   * @param {HTMLFormElement} form
   * @param {HTMLInputElement} field
   * @param {(value: string) => boolean} looksRight
   * @param {string} wrong
   * @param {(chosen: string) => Promise<void>} start
   */
  function onStart(form, field, looksRight, wrong, start) {
    onSubmit(form, error, async () => {
      withdrawAgain();
      const chosen = field.value.trim();
      if (checkField(field, looksRight(chosen), error, wrong)) await start(chosen);
    });
  }

  /**
   * Sends a proof to `path`: through a step-up when one is due, and again
   * with `confirm_transfer` when the person agrees to move the identity here,
   * naming what they ticked of the other account. `start` begins the link
   * anew; it is offered when the other account changed meanwhile (409
   * `transfer_changed`: the proof is used up and nothing moved).
   *
   * @param {string} path
   * @param {Record<string, string>} proof
   * @param {string} shown the identity as the person knows it
   * @param {() => void} start
   * @param {(answer: ApiResult, text: string) => void} [refused] shows a refusal: its sentence in the section's alert, unless the proof's own form shows it
   */
  async function link(path, proof, shown, start, refused = (_answer, text) => say(error, text)) {
    withdrawAgain();
    const cancelled = () => say(status, t('link.cancelled'));
    const action = t('action.link', { identity: shown });
    let answer = await options.withStepUp(() => api('POST', path, proof), action, cancelled);
    if (answer === null) return false;
    if (answer.code === 'address_linked_elsewhere' || answer.code === 'email_linked_elsewhere') {
      const holder = answer.body?.holder;
      const holderName = holder ? holder.display_name || holder.did_oc : t('link.another_account');
      const choices = mergeChoices(holder, shown);
      const move = await options.confirmAction({
        title: t('link.move_title', { identity: shown }),
        text: t('link.move_text', { identity: shown, holder: holderName }),
        confirm: t('link.move_confirm'),
        details: choices.nodes,
      });
      if (!move) {
        say(status, t('link.move_declined', { identity: shown, holder: holderName }));
        return false;
      }
      const confirmTransfer = choices.acceptance();
      answer = await options.withStepUp(() => api('POST', path, { ...proof, confirm_transfer: confirmTransfer }), action, cancelled);
      if (answer === null) return false;
    }
    if (!answer.ok) {
      // The operator's hold here is on the account that holds the identity (docs/protocol.md §2 "Merging").
      refused(answer, codeRefusalText(answer, { account_disabled: t('link.holder_disabled', { identity: shown }) }));
      if (answer.code === 'transfer_changed') offerAgain(start);
      return false;
    }
    /** @type {Merged | undefined} */
    const merged = answer.body?.merged;
    await options.onLinked(merged ? mergedSentence(shown, merged) : t('link.linked', { identity: shown }));
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

  /** @param {string} chosen */
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
    appendWalletButtons(tools, signWith);
    addressForm.hidden = true;
    signForm.hidden = false;
    return true;
  }

  /** @param {import('./wallets.js').Wallet} wallet */
  async function signWith(wallet) {
    if (!challenge) return;
    say(error, '');
    await signIntoForm(wallet, challenge, signature, signForm, error);
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

  onStart(addressForm, address, looksLikeBitcoinAddress, t('page.address_invalid'), (chosen) =>
    busy(submitButtonOf(addressForm), async () => {
      if (await prepare(chosen)) message.focus();
    }),
  );

  byId('link-btc-copy').addEventListener('click', async () => {
    const copied = await copyText(message.value, message);
    say(status, copied ? t('page.message_copied') : t('page.message_selected'));
  });

  byId('link-btc-restart').addEventListener('click', () => {
    withdrawAgain();
    resetBtc();
    address.focus();
  });

  signForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const proof = pastedProof(challenge, signature, error);
    if (!proof) return;
    await busy(submitButtonOf(signForm), async () => {
      const lookAgain = () => {
        resetBtc();
        address.value = proof.address;
        addressForm.requestSubmit();
      };
      if (await link('/api/auth/link/btc', proof, proof.address, lookAgain)) {
        resetBtc();
        address.value = '';
      }
    });
  });

  // ---- an e-mail address ----

  const emailForm = /** @type {HTMLFormElement} */ (byId('link-email-form'));
  const email = /** @type {HTMLInputElement} */ (byId('link-email-address'));

  const emailCode = emailCodeForm({
    startForm: emailForm,
    codeForm: /** @type {HTMLFormElement} */ (byId('link-email-code-form')),
    field: /** @type {HTMLInputElement} */ (byId('link-email-code')),
    error,
    async verify(proof) {
      const lookAgain = () => {
        emailCode.reset();
        email.value = proof.email;
        emailForm.requestSubmit();
      };
      if (!(await link('/api/auth/link/email', proof, proof.email, lookAgain, emailCode.refused))) return false;
      emailCode.reset();
      email.value = '';
      return true;
    },
  });

  onStart(emailForm, email, looksLikeEmail, t('page.email_invalid'), async (chosen) => {
    if (!(await emailCode.send(chosen, submitButtonOf(emailForm))).ok) return;
    byId('link-email-sent').replaceChildren(...tNodes('link.code_sent_to', { email: h('strong', { text: chosen }) }));
    say(status, t('signin.code_sent', { email: chosen }));
    emailCode.show();
  });

  byId('link-email-restart').addEventListener('click', () => {
    withdrawAgain();
    emailCode.reset();
    email.focus();
  });
}
