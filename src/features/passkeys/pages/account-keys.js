/**
 * The account page's "Security keys and passkeys" section (docs/protocol.md
 * §6 "Security keys and passkeys"): the keys listed with when they were
 * added and last used, renamed in place, removed after a step-up, and added
 * with the browser's prompt (a passkey when "Also sign in with it" is
 * ticked).
 */
import { api, busy, byId, focusHeading, formatDate, formatDateTime, h, markInvalid, onSubmit, say, submitButtonOf, t } from './common.js';
import { browserErrorText, createCredential, describeKeyError, wasCancelled, webauthnSupported } from './passkeys.js';

/**
 * A security key or passkey (GET /api/auth/webauthn/credentials).
 *
 * @typedef {object} Key
 * @property {string} id
 * @property {string} label
 * @property {boolean} sign_in a passkey, which also signs in
 * @property {string} created_at
 * @property {string | null} [last_used_at]
 */

/** @param {Key} key */
function describeKey(key) {
  const kind = key.sign_in ? t('account.key_kind_passkey') : t('account.key_kind_security');
  const added = t('account.key_added_on', { date: formatDate(key.created_at) });
  const used = key.last_used_at ? t('account.key_last_used', { date: formatDateTime(key.last_used_at) }) : t('account.key_unused');
  return `${kind} · ${added} · ${used}`;
}

/**
 * Wires the section; the account page loads it with the rest.
 *
 * @param {object} page what the account page lends it
 * @param {(result: import('./common.js').ApiResult) => boolean} page.sessionLost
 * @param {import('./account.js').WithStepUp} page.withStepUp
 * @param {import('./account.js').SteppedUp} page.steppedUp
 * @param {() => Promise<void>} page.loadActivity shows the account's activity anew
 * @param {() => void} page.closeForm closes the form of a new key, once the key is added
 */
export function setUpKeys({ sessionLost, withStepUp, steppedUp, loadActivity, closeForm }) {
  const pageStatus = byId('page-status');
  /** @type {Key[] | null} null while unknown, or where keys are not available */
  let keys = null;

  /** Lists the keys, or leaves the section out where this browser or this host cannot use them. */
  async function loadKeys() {
    const section = byId('keys-section');
    if (!webauthnSupported()) {
      keys = null;
      section.hidden = true;
      return;
    }
    const answer = await api('GET', '/api/auth/webauthn/credentials');
    if (sessionLost(answer)) return;
    // An older host without the routes, or one whose address WebAuthn cannot use: leave the section out.
    if (answer.status === 404 || answer.code === 'webauthn_unavailable') {
      keys = null;
      section.hidden = true;
      return;
    }
    section.hidden = false;
    if (!answer.ok) {
      keys = null;
      byId('keys').replaceChildren();
      say(byId('keys-error'), describeKeyError(answer));
      return;
    }
    /** @type {Key[]} */
    const listed = Array.isArray(answer.body.credentials) ? answer.body.credentials : [];
    keys = listed;
    renderKeys(listed);
  }

  /** @param {Key[]} list */
  function renderKeys(list) {
    byId('keys').replaceChildren(
      ...list.map((key) => {
        const rename = h('button', {
          type: 'button',
          class: 'secondary',
          'aria-label': t('account.rename_named', { name: key.label }),
          text: t('account.rename'),
        });
        const remove = h('button', {
          type: 'button',
          class: 'danger',
          'aria-label': t('account.remove_named', { name: key.label }),
          text: t('account.remove'),
        });
        const main = h(
          'div',
          { class: 'item-main' },
          h('span', { class: 'item-title', text: key.label }),
          h('span', { class: 'item-sub', text: describeKey(key) }),
        );
        const item = h('li', { 'data-key': key.id }, main, h('div', { class: 'actions' }, rename, remove));
        rename.addEventListener('click', () => startRename(key, item, main));
        remove.addEventListener('click', () => removeKey(key, remove));
        return item;
      }),
    );
    byId('keys-empty').hidden = list.length > 0;
  }

  /**
   * Swaps the key's title for a small form in place; Escape or Cancel puts it back.
   *
   * @param {Key} key
   * @param {HTMLElement} item the key's list item
   * @param {HTMLElement} main the part of the item the form stands in for
   */
  function startRename(key, item, main) {
    const inputId = `key-rename-${key.id.slice(0, 16)}`;
    const input = /** @type {HTMLInputElement} */ (
      h('input', { id: inputId, type: 'text', maxlength: '64', value: key.label, autocomplete: 'off' })
    );
    const cancel = h('button', { type: 'button', class: 'link', text: t('page.cancel') });
    const form = /** @type {HTMLFormElement} */ (
      h(
        'form',
        { class: 'item-main', novalidate: true },
        h('label', { for: inputId, text: t('account.rename_label', { name: key.label }) }),
        input,
        h('div', { class: 'actions' }, h('button', { type: 'submit', text: t('account.save') }), cancel),
      )
    );
    const restore = () => {
      form.replaceWith(main);
      item.querySelector('button')?.focus();
    };
    cancel.addEventListener('click', restore);
    form.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') restore();
    });
    onSubmit(form, byId('keys-error'), (error) =>
      busy(submitButtonOf(form), async () => {
        const saved = await api('PATCH', `/api/auth/webauthn/credentials/${encodeURIComponent(key.id)}`, { label: input.value });
        if (sessionLost(saved)) return;
        if (!saved.ok) {
          markInvalid(input, saved.code === 'bad_request');
          say(error, saved.code === 'bad_request' ? t('account.key_name_invalid') : describeKeyError(saved));
          input.focus();
          return;
        }
        await loadKeys();
        say(pageStatus, t('account.key_renamed', { name: saved.body.credential.label }));
        focusHeading('keys-title');
      }),
    );
    main.replaceWith(form);
    input.focus();
    input.select();
  }

  /**
   * @param {Key} key
   * @param {HTMLButtonElement} button
   */
  async function removeKey(key, button) {
    const error = byId('keys-error');
    say(error, '');
    await busy(button, async () => {
      const removed = await steppedUp(error, () => api('DELETE', `/api/auth/webauthn/credentials/${encodeURIComponent(key.id)}`), {
        action: t('action.remove_key', { name: key.label }),
        cancelled: t('account.nothing_removed'),
        describe: describeKeyError,
      });
      if (removed === null) return;
      await loadKeys();
      void loadActivity();
      say(pageStatus, t('account.removed', { name: key.label }));
      focusHeading('keys-title');
    });
  }

  const keyForm = /** @type {HTMLFormElement} */ (byId('key-add-form'));
  onSubmit(keyForm, byId('keys-error'), async (error) => {
    const labelField = /** @type {HTMLInputElement} */ (byId('key-label'));
    const signIn = /** @type {HTMLInputElement} */ (byId('key-sign-in')).checked;
    const label = labelField.value.trim();
    await busy(submitButtonOf(keyForm), async () => {
      const body = { sign_in: signIn, ...(label === '' ? {} : { label }) };
      const started = await withStepUp(
        () => api('POST', '/api/auth/webauthn/register/options', body),
        t('action.add_key'),
        () => say(pageStatus, t('account.no_key_added')),
      );
      if (started === null) return;
      if (!started.ok) {
        markInvalid(labelField, started.code === 'bad_request');
        say(error, started.code === 'bad_request' ? t('account.name_invalid') : describeKeyError(started));
        return;
      }
      markInvalid(labelField, false);
      let response;
      try {
        response = await createCredential(started.body.options);
      } catch (failure) {
        say(error, wasCancelled(failure) ? t('account.key_prompt_closed') : browserErrorText(failure));
        return;
      }
      const added = await api('POST', '/api/auth/webauthn/register/verify', { challenge_token: started.body.challenge_token, response });
      if (sessionLost(added)) return;
      if (!added.ok) {
        say(error, describeKeyError(added));
        return;
      }
      labelField.value = '';
      /** @type {HTMLInputElement} */ (byId('key-sign-in')).checked = false;
      closeForm();
      await loadKeys();
      void loadActivity();
      const keyName = added.body.credential.label;
      say(
        pageStatus,
        added.body.credential.sign_in ? t('account.passkey_added', { name: keyName }) : t('account.key_added', { name: keyName }),
      );
      focusHeading('keys-title');
    });
  });

  return {
    loadKeys,
    /** The account's keys as last listed: null while unknown, or where keys are not available. */
    keys: () => keys,
  };
}
