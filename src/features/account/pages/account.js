/**
 * The account page (/account): the active account, the other accounts of
 * this browser (the roster) with a switch button each, linked identities,
 * the display name, the account's data, and signing out of one or all
 * accounts (docs/api.md "Session endpoints", docs/protocol.md §3 and §6).
 * It shows one section at a time (Profile, Ways to sign in, Security, Apps,
 * Your data), named by the address's fragment (`/account#security`), so a
 * link, a reload and the browser's back button keep the section. Its edit
 * forms open on demand and the header's account menu (account-menu.js)
 * shows what this page loaded.
 * Its other sections have modules of their own: linking (link.js), security
 * keys and passkeys (account-keys.js), where the account is signed in with
 * its activity (account-activity.js), and the apps it signed in to through
 * the OpenID provider (account-apps.js).
 *
 * An action answered with 401 `sudo_required` opens the step-up dialog
 * (POST /api/auth/sudo with a key, a BIP-322 `purpose=sudo` challenge or an
 * e-mail code) and is retried once after the proof.
 */
import {
  accountName,
  api,
  busy,
  byId,
  checkField,
  copyText,
  describeError,
  describeIdentity,
  focusHeading,
  h,
  identityKindLabel,
  markInvalid,
  onBusyClick,
  onSubmit,
  say,
  shortName,
  submitButtonOf,
  t,
  tNodes,
} from './common.js';
import { setUpActivity } from './account-activity.js';
import { showAccountMenu } from './account-menu.js';
import { setUpApps } from './account-apps.js';
import { setUpKeys } from './account-keys.js';
import { setUpLinking } from './link.js';
import { createProofPanel, proofOptions } from './stepup.js';

/** @typedef {import('./common.js').ApiResult} ApiResult */
/** @typedef {import('./common.js').Identity} Identity */

/**
 * The active account as GET /api/auth/me and PATCH /api/auth/account answer it.
 *
 * @typedef {import('./common.js').AccountSummary & {primary_btc?: string | null}} Account
 */

/**
 * Runs a request that may need a step-up, as {@link withStepUp} does: the
 * sections in modules of their own get it from this page.
 *
 * @typedef {(request: () => Promise<ApiResult>, action: string, onCancel?: () => void) => Promise<ApiResult | null>} WithStepUp
 */

/**
 * Runs an action that may need a step-up, as {@link steppedUp} does: the
 * sections in modules of their own get it from this page.
 *
 * @typedef {(error: HTMLElement, request: () => Promise<ApiResult>, messages: StepUpMessages) => Promise<ApiResult | null>} SteppedUp
 */

/**
 * What an action that may need a step-up says: `action` finishes "To …,
 * prove …", `cancelled` goes to the page status when the person cancels the
 * step-up, `describe` puts a refusal in words (default describeError).
 *
 * @typedef {{action: string, cancelled: string, describe?: (result: ApiResult) => string}} StepUpMessages
 */

const SIGN_IN_AGAIN = '/signin?return_to=/account';

const main = byId('main');
const pageError = byId('page-error');
const pageStatus = byId('page-status');

/** @typedef {{account: Account, roster: import('./common.js').AccountSummary[]}} Me */

/** @type {Me | null} */
let me = null;
/** @type {Identity[] | null} null while unknown (not loaded, or the host has no identities route) */
let identities = null;

/** A 401 `not_authenticated` anywhere means the session is gone: sign in again. @param {ApiResult} result */
function sessionLost(result) {
  if (result.status === 401 && result.code === 'not_authenticated') {
    window.location.replace(SIGN_IN_AGAIN);
    return true;
  }
  return false;
}

// ---- loading and rendering ----

/**
 * (Re)loads the whole page.
 *
 * @returns {Promise<Me | null>} what was loaded, or null when the page could not load (and says so, or has moved on)
 */
async function load() {
  const answer = await api('GET', '/api/auth/me');
  if (answer.status === 401) {
    window.location.replace(SIGN_IN_AGAIN);
    return null;
  }
  if (!answer.ok || !answer.body?.account) {
    say(pageStatus, '');
    say(pageError, describeError(answer));
    main.setAttribute('aria-busy', 'false');
    return null;
  }
  // Hosts that predate multi-account omit `roster` (docs/api.md Versioning 2).
  const loaded = { account: answer.body.account, roster: Array.isArray(answer.body.roster) ? answer.body.roster : [] };
  me = loaded;
  renderAccount(loaded.account);
  renderRoster(loaded.roster);
  showAccountMenu(loaded, { switchTo, signOut: logout });
  byId('content').hidden = false;
  main.setAttribute('aria-busy', 'false');
  await Promise.all([loadIdentities(), keySection.loadKeys(), activity.loadDevices(), activity.loadActivity(), apps.loadApps()]);
  showSection();
  return loaded;
}

/** @param {Account} account */
function renderAccount(account) {
  const name = accountName(account);
  document.title = `${name} · ${t('account.title')} · ${document.body.dataset.brand || 'oc-host'}`;
  byId('active-title').replaceChildren(
    ...tNodes('account.signed_in_as', { name: h('span', { id: 'active-heading-name', text: shortName(account) }) }),
  );
  byId('active-name').textContent = account.display_name || t('account.name_not_set');
  const shown = account.display_identity;
  byId('active-identity-kind').textContent = shown ? identityKindLabel(shown.kind) : t('account.shown_as');
  byId('active-identity').textContent = shown ? shown.value : account.did_oc;
  byId('active-did').textContent = account.did_oc;
  // The copy buttons name the whole value: a screen reader hears what is copied.
  byId('copy-identity').setAttribute(
    'aria-label',
    t('account.copy_value', {
      action: t('account.copy_identity', { kind: shown ? shown.kind : 'did' }),
      value: shown ? shown.value : account.did_oc,
    }),
  );
  byId('copy-did').setAttribute(
    'aria-label',
    t('account.copy_value', { action: t('account.copy_identity', { kind: 'did' }), value: account.did_oc }),
  );
  /** @type {HTMLInputElement} */ (byId('display-name')).value = account.display_name || '';
}

for (const [buttonId, sourceId] of [
  ['copy-identity', 'active-identity'],
  ['copy-did', 'active-did'],
]) {
  byId(buttonId).addEventListener('click', async () => {
    const source = byId(sourceId);
    const copied = await copyText(source.textContent || '', source);
    const kind = buttonId === 'copy-did' ? 'did' : (me?.account.display_identity?.kind ?? 'did');
    say(pageStatus, copied ? t('account.copied_identity', { kind }) : t('account.copy_selected'));
  });
}

/** @param {import('./common.js').AccountSummary[]} roster */
function renderRoster(roster) {
  const list = byId('roster');
  list.replaceChildren(
    ...roster.map((entry) => {
      const name = accountName(entry);
      const details = [];
      if (entry.display_identity && entry.display_identity.value !== name) details.push(entry.display_identity.value);
      details.push(entry.did_oc);
      const button = h('button', {
        type: 'button',
        class: 'secondary',
        'aria-label': t('account.switch_to', { name }),
        text: t('account.switch'),
      });
      button.addEventListener('click', () => switchTo(entry, button));
      return h(
        'li',
        { 'data-did': entry.did_oc },
        h(
          'div',
          { class: 'item-main' },
          h('span', { class: 'item-title', text: name }),
          h('span', { class: 'item-sub mono', text: details.join(' · ') }),
        ),
        button,
      );
    }),
  );
  byId('roster-empty').hidden = roster.length > 0;
  byId('logout-current').textContent = roster.length > 0 ? t('account.logout_current') : t('account.signout_title');
  byId('logout-all').hidden = roster.length === 0;
  byId('signout-hint').hidden = roster.length === 0;
}

async function loadIdentities() {
  const answer = await api('GET', '/api/auth/identities');
  if (sessionLost(answer)) return;
  if (answer.status === 404) {
    // An older host without the identities route: leave the section out.
    identities = null;
    byId('identities-section').hidden = true;
    return;
  }
  byId('identities-section').hidden = false;
  if (!answer.ok) {
    identities = null;
    byId('identities').replaceChildren();
    say(byId('identities-error'), describeError(answer));
    return;
  }
  say(byId('identities-error'), '');
  const body = answer.body;
  /** @type {Identity[]} */
  const listed = Array.isArray(body) ? body : Array.isArray(body?.identities) ? body.identities : [];
  identities = listed;
  renderIdentities(listed);
}

/** @param {Identity[]} list */
function renderIdentities(list) {
  const removable = list.length > 1;
  byId('identities').replaceChildren(
    ...list.map((identity) => {
      const { title, sub } = describeIdentity(identity);
      let button = null;
      const id = identity.id;
      if (removable && typeof id === 'string') {
        button = h('button', {
          type: 'button',
          class: 'danger',
          'aria-label': t('account.remove_named', { name: title }),
          text: t('account.remove'),
        });
        const removeButton = button;
        removeButton.addEventListener('click', () => removeIdentity(id, title, removeButton));
      }
      return h(
        'li',
        {},
        h('div', { class: 'item-main' }, h('span', { class: 'item-title mono', text: title }), h('span', { class: 'item-sub', text: sub })),
        button,
      );
    }),
  );
  if (list.length === 0) byId('identities').append(h('li', { class: 'hint', text: t('account.no_identities') }));
}

// ---- actions ----

/**
 * Shows `dialog` as a modal, and answers its return value once it closes:
 * what `dialog.close(value)` named, or '' when it was closed otherwise (by
 * Escape). Focus goes back where it was.
 *
 * @param {HTMLDialogElement} dialog
 * @param {() => void} [onClose] tidies the dialog as it closes, before focus goes back
 * @returns {Promise<string>}
 */
function showDialog(dialog, onClose = () => {}) {
  const returnFocus = document.activeElement;
  dialog.returnValue = '';
  return new Promise((resolve) => {
    const closed = () => {
      // A close event runs a task after the closing: one queued by the
      // previous closing can arrive after this opening. The dialog is open
      // then, and this answer is still to come.
      if (dialog.open) return;
      dialog.removeEventListener('close', closed);
      onClose();
      if (returnFocus instanceof HTMLElement && returnFocus.isConnected) returnFocus.focus();
      resolve(dialog.returnValue);
    };
    dialog.addEventListener('close', closed);
    dialog.showModal();
  });
}

/**
 * Asks before something that cannot be taken back with one click: a modal
 * dialog with the consequence and a button naming the action. Answers true
 * when the person confirmed.
 *
 * `details` are shown under the text, such as the choices of a merge
 * (link.js); the caller keeps them to read the choices after the
 * answer. With details the dialog opens focused on its title, not on Cancel:
 * a long list would otherwise open scrolled to its end, and a screen reader
 * starts from the question.
 *
 * @param {{title: string, text: string, confirm: string, details?: Node[]}} question
 * @returns {Promise<boolean>}
 */
async function confirmAction(question) {
  const title = byId('confirm-title');
  const details = byId('confirm-details');
  title.textContent = question.title;
  byId('confirm-text').textContent = question.text;
  byId('confirm-yes').textContent = question.confirm;
  details.replaceChildren(...(question.details ?? []));
  details.hidden = details.childElementCount === 0;
  const answer = showDialog(/** @type {HTMLDialogElement} */ (byId('confirm-dialog')), () => {
    details.replaceChildren();
    details.hidden = true;
  });
  if (details.hidden) {
    byId('confirm-no').focus();
  } else {
    title.setAttribute('tabindex', '-1');
    title.focus();
  }
  return (await answer) === 'yes';
}

byId('confirm-yes').addEventListener('click', () => /** @type {HTMLDialogElement} */ (byId('confirm-dialog')).close('yes'));
byId('confirm-no').addEventListener('click', () => /** @type {HTMLDialogElement} */ (byId('confirm-dialog')).close('no'));

/**
 * Runs `request`; when it answers 401 `sudo_required`, asks for a step-up
 * that names `action`, and runs it once more. Answers null when the person
 * cancelled the step-up (after `onCancel`, which says so) or when the
 * session is gone (sessionLost has moved the page on).
 *
 * @param {() => Promise<ApiResult>} request
 * @param {string} action what the proof is for, to finish "To …, prove …": "remove the key Desk key" (an `action.*` message)
 * @param {() => void} [onCancel]
 */
async function withStepUp(request, action, onCancel = () => {}) {
  let answer = await request();
  if (answer.status === 401 && answer.code === 'sudo_required') {
    if (!(await stepUp(action))) {
      onCancel();
      return null;
    }
    answer = await request();
  }
  return sessionLost(answer) ? null : answer;
}

/**
 * {@link withStepUp} for an action whose refusal shows in `error`: answers
 * the success, or null once the page says why there is none (a refusal in
 * `error`, a cancelled step-up in the page status).
 *
 * @param {HTMLElement} error
 * @param {() => Promise<ApiResult>} request
 * @param {StepUpMessages} messages
 */
async function steppedUp(error, request, { action, cancelled, describe = describeError }) {
  const answer = await withStepUp(request, action, () => say(pageStatus, cancelled));
  if (answer === null) return null;
  if (!answer.ok) {
    say(error, describe(answer));
    return null;
  }
  return answer;
}

/**
 * @param {import('./common.js').AccountSummary} entry
 * @param {HTMLButtonElement} button
 */
async function switchTo(entry, button) {
  say(byId('roster-error'), '');
  await busy(button, async () => {
    const switched = await api('POST', '/api/auth/switch', { did_oc: entry.did_oc });
    if (sessionLost(switched)) return;
    if (!switched.ok) {
      say(byId('roster-error'), describeError(switched));
      if (switched.code === 'not_in_roster' || switched.code === 'unknown_did_oc') await load();
      return;
    }
    const loaded = await load();
    if (loaded) {
      say(pageStatus, t('account.now_using', { name: accountName(loaded.account) }));
      focusActive();
    }
  });
}

/**
 * @param {'current' | 'all'} scope
 * @param {HTMLButtonElement} button
 */
async function logout(scope, button) {
  say(byId('signout-error'), '');
  if (scope === 'all') {
    const count = 1 + (me ? me.roster.length : 0);
    const sure = await confirmAction({
      title: t('account.logout_all_title', { count }),
      text: count === 1 ? t('account.logout_one_text') : t('account.logout_all_text', { name: me ? accountName(me.account) : '' }),
      confirm: t('account.logout_all_confirm', { count }),
    });
    if (!sure) {
      say(pageStatus, t('account.still_signed_in'));
      return;
    }
  }
  await busy(button, async () => {
    const answer = await api('POST', `/api/auth/logout?scope=${scope}`);
    if (answer.status === 401) {
      window.location.assign('/signin?signed_out=1');
      return;
    }
    if (!answer.ok) {
      say(byId('signout-error'), describeError(answer));
      return;
    }
    if (scope === 'all' || !answer.body || !answer.body.switched_to) {
      window.location.assign('/signin?signed_out=1');
      return;
    }
    const previous = me ? accountName(me.account) : '';
    const loaded = await load();
    if (loaded) {
      say(pageStatus, t('account.signed_out_of', { previous, name: accountName(loaded.account) }));
      focusActive();
    }
  });
}

// ---- your data: export and deletion (docs/protocol.md §6 "Export", §2 "Disabling and deleting") ----

onBusyClick(/** @type {HTMLButtonElement} */ (byId('export-data')), byId('export-error'), async (error) => {
  const answer = await withStepUp(
    () => api('GET', '/api/auth/account/export'),
    t('action.export'),
    () => say(pageStatus, t('account.nothing_downloaded')),
  );
  if (answer === null) return;
  if (!answer.ok || !answer.body) {
    say(error, describeError(answer));
    return;
  }
  const file = new Blob([JSON.stringify(answer.body, null, 2)], { type: 'application/json' });
  const link = document.createElement('a');
  link.href = URL.createObjectURL(file);
  link.download = `account-${String(answer.body.account.did_oc).slice('did:oc:'.length, 'did:oc:'.length + 12)}-${String(answer.body.exported_at).slice(0, 10)}.json`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  void activity.loadActivity();
  say(pageStatus, t('account.downloaded'));
});

const deleteForm = /** @type {HTMLFormElement} */ (byId('delete-form'));
onSubmit(deleteForm, byId('delete-error'), async (error) => {
  const field = /** @type {HTMLInputElement} */ (byId('delete-confirm'));
  const typed = field.value.trim().toLocaleLowerCase();
  // The word of the page's language; the English word is accepted in every language.
  const confirmed = typed === t('account.delete_word').toLocaleLowerCase() || typed === 'delete';
  // The form shows once the account has loaded (`me`).
  if (!checkField(field, confirmed, error, t('account.delete_mismatch', { word: t('account.delete_word') })) || !me) return;
  const deleted = accountName(me.account);
  const did = me.account.did_oc;
  await busy(submitButtonOf(deleteForm), async () => {
    const answer = await steppedUp(error, () => api('DELETE', '/api/auth/account', { confirm: did }), {
      action: t('action.delete', { name: deleted }),
      cancelled: t('account.not_deleted'),
    });
    if (answer === null) return;
    field.value = '';
    if (!answer.body?.switched_to) {
      window.location.assign('/signin?deleted=1');
      return;
    }
    deleteForm.hidden = true;
    byId('delete-open').setAttribute('aria-expanded', 'false');
    // The account now shown is another one: its profile comes first.
    window.history.replaceState(null, '', '#profile');
    const loaded = await load();
    if (loaded) {
      say(pageStatus, t('account.deleted_switched', { deleted, name: accountName(loaded.account) }));
      focusActive();
    }
  });
});

byId('logout-current').addEventListener('click', (event) => logout('current', /** @type {HTMLButtonElement} */ (event.currentTarget)));
byId('logout-all').addEventListener('click', (event) => logout('all', /** @type {HTMLButtonElement} */ (event.currentTarget)));

const nameForm = /** @type {HTMLFormElement} */ (byId('name-form'));
onSubmit(nameForm, byId('name-error'), async (error) => {
  const field = /** @type {HTMLInputElement} */ (byId('display-name'));
  const value = field.value.trim();
  if (!checkField(field, [...value].length <= 64, error, t('account.name_too_long'))) return;
  await busy(submitButtonOf(nameForm), async () => {
    // An empty field removes the name: the service wants an explicit null (not "").
    const saved = await withStepUp(
      () => api('PATCH', '/api/auth/account', { display_name: value === '' ? null : value }),
      t('action.rename_account'),
    );
    if (saved === null) return;
    if (!saved.ok) {
      markInvalid(field, saved.code === 'bad_request');
      say(error, describeError(saved, { bad_request: t('account.name_invalid') }));
      field.focus();
      return;
    }
    markInvalid(field, false);
    if (me && saved.body?.account) {
      me.account = saved.body.account;
      renderAccount(me.account);
      showAccountMenu(me, { switchTo, signOut: logout });
    }
    nameEditor.close();
    void activity.loadActivity();
    say(pageStatus, value === '' ? t('account.name_removed') : t('account.name_saved'));
  });
});

/**
 * @param {string} id the identity's id
 * @param {string} title the identity in words
 * @param {HTMLButtonElement} button
 */
async function removeIdentity(id, title, button) {
  const error = byId('identities-error');
  say(error, '');
  const sure = await confirmAction({
    title: t('account.remove_title', { name: title }),
    text: t('account.remove_text', { name: title }),
    confirm: t('account.remove'),
  });
  if (!sure) {
    say(pageStatus, t('account.nothing_removed'));
    return;
  }
  await busy(button, async () => {
    const removed = await steppedUp(error, () => api('DELETE', `/api/auth/identities?id=${encodeURIComponent(id)}`), {
      action: t('action.remove_identity', { name: title }),
      cancelled: t('account.nothing_removed'),
    });
    if (removed === null) return;
    await load();
    say(pageStatus, t('account.removed', { name: title }));
    focusHeading('identities-title');
  });
}

// ---- step-up (POST /api/auth/sudo) ----

const dialog = /** @type {HTMLDialogElement} */ (byId('sudo-dialog'));
const proofPanel = createProofPanel(byId('sudo-panel'), {
  onProved: () => dialog.close('proved'),
  onSessionLost: sessionLost,
});

/**
 * Opens the dialog; resolves true once the account proved itself, false when cancelled.
 *
 * @param {string} action what the proof is for (an `action.*` message)
 * @returns {Promise<boolean>}
 */
async function stepUp(action) {
  proofPanel.reset(proofOptions(identities, me?.account, keySection.keys()));
  byId('sudo-intro').textContent = t('stepup.intro_action', { action });
  return (await showDialog(dialog)) === 'proved';
}

byId('sudo-cancel').addEventListener('click', () => dialog.close('cancelled'));

// ---- sections: one shown at a time, named by the address's fragment ----

const SECTIONS = ['profile', 'sign-in', 'security', 'apps', 'data'];

/**
 * Shows the section the fragment names (Profile when it names none, or one
 * this host leaves empty) and marks its link current. A section is left
 * out of the navigation when every card in it is (an older host, a host
 * without the OpenID provider).
 */
function showSection() {
  for (const name of SECTIONS) {
    const cards = /** @type {HTMLElement[]} */ ([...byId(`panel-${name}`).querySelectorAll('section.card')]);
    const item = byId(`nav-${name}`).parentElement;
    if (item) item.hidden = cards.length > 0 && cards.every((card) => card.hidden);
  }
  const asked = window.location.hash.slice(1);
  const current = SECTIONS.includes(asked) && !byId(`nav-${asked}`).parentElement?.hidden ? asked : 'profile';
  for (const name of SECTIONS) {
    byId(`panel-${name}`).hidden = name !== current;
    const link = byId(`nav-${name}`);
    if (name === current) link.setAttribute('aria-current', 'true');
    else link.removeAttribute('aria-current');
  }
}

window.addEventListener('hashchange', showSection);
showSection();

/** After the page shows another account: focus on its heading when the profile shows, else on the menu that names it. */
function focusActive() {
  if (!byId('panel-profile').hidden) focusHeading('active-title');
  else document.getElementById('account-menu-button')?.focus();
}

/**
 * An edit form that opens on demand: `opener` shows `target` and puts focus
 * on its first field; Cancel (`data-cancel`) or Escape hides it and puts
 * focus back on `opener`. `onClose` tidies the form as it closes.
 *
 * @param {string} openerId
 * @param {string} targetId
 * @param {() => void} [onClose]
 */
function disclosure(openerId, targetId, onClose = () => {}) {
  const opener = byId(openerId);
  const target = byId(targetId);
  opener.setAttribute('aria-expanded', 'false');
  /** @param {boolean} [refocus] */
  const close = (refocus = true) => {
    if (target.hidden) return;
    target.hidden = true;
    opener.setAttribute('aria-expanded', 'false');
    onClose();
    if (refocus) opener.focus();
  };
  const open = () => {
    target.hidden = false;
    opener.setAttribute('aria-expanded', 'true');
    const fields = /** @type {HTMLElement[]} */ ([...target.querySelectorAll('input, textarea, button')]);
    fields.find((field) => field.checkVisibility())?.focus();
  };
  opener.addEventListener('click', () => (target.hidden ? open() : close()));
  for (const cancel of target.querySelectorAll('[data-cancel]')) cancel.addEventListener('click', () => close());
  target.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    close();
  });
  return { close };
}

const nameEditor = disclosure('edit-name', 'name-form', () => {
  const field = /** @type {HTMLInputElement} */ (byId('display-name'));
  field.value = me?.account.display_name ?? '';
  markInvalid(field, false);
  say(byId('name-error'), '');
});
const btcLinker = disclosure('link-btc-open', 'link-btc-panel');
const emailLinker = disclosure('link-email-open', 'link-email-panel');
const keyAdder = disclosure('key-add-open', 'key-add-form');
disclosure('delete-open', 'delete-form', () => {
  const field = /** @type {HTMLInputElement} */ (byId('delete-confirm'));
  field.value = '';
  markInvalid(field, false);
  say(byId('delete-error'), '');
});

// ---- the sections in modules of their own ----

const keySection = setUpKeys({
  sessionLost,
  withStepUp,
  steppedUp,
  loadActivity: () => activity.loadActivity(),
  closeForm: () => keyAdder.close(false),
});
const activity = setUpActivity({ sessionLost, withStepUp, steppedUp, signOutHere: (button) => logout('current', button) });
const apps = setUpApps({ sessionLost, confirmAction });
setUpLinking({
  withStepUp,
  confirmAction,
  onLinked: async (sentence) => {
    btcLinker.close(false);
    emailLinker.close(false);
    if (await load()) {
      say(pageStatus, sentence);
      focusHeading('identities-title');
    }
  },
});

void load().then((loaded) => {
  if (loaded) say(pageStatus, '');
});
