/**
 * The account page (/account): the active account, the other accounts of
 * this browser (the roster) with a switch button each, linked identities,
 * the display name, and signing out of one or all accounts (docs/api.md
 * "Session endpoints", docs/protocol.md §3 and §6).
 *
 * An action answered with 401 `sudo_required` opens the step-up dialog
 * (POST /api/auth/sudo with a key, a BIP-322 `purpose=sudo` challenge or an
 * e-mail code) and is retried once after the proof.
 *
 * Security keys and passkeys (docs/protocol.md §6 "Security keys and
 * passkeys"): listed with when they were added and last used, renamed in
 * place, removed after a step-up, and added with the browser's prompt
 * (a passkey when "Also sign in with it" is ticked).
 */
import {
  accountName,
  api,
  busy,
  copyText,
  byId,
  describeError,
  h,
  identityKindLabel,
  markInvalid,
  say,
  shortName,
  submitButtonOf,
} from './common.js';
import { createProofPanel, proofOptions } from './stepup.js';
import { setUpLinking } from './link.js';
import { browserErrorText, createCredential, describeKeyError, wasCancelled, webauthnSupported } from './passkeys.js';

const SIGN_IN_AGAIN = '/signin?return_to=/account';

const main = byId('main');
const pageError = byId('page-error');
const pageStatus = byId('page-status');

/** @type {{account: any, roster: any[]} | null} */
let me = null;
/** @type {any[] | null} null while unknown (not loaded, or the host has no identities route) */
let identities = null;
/** @type {any[] | null} null while unknown, or where keys are not available */
let keys = null;

/** A 401 `not_authenticated` anywhere means the session is gone: sign in again. */
function sessionLost(result) {
  if (result.status === 401 && result.code === 'not_authenticated') {
    window.location.replace(SIGN_IN_AGAIN);
    return true;
  }
  return false;
}

/** Moves focus to a heading after the content under it was replaced, so keyboard users keep their place. */
function focusHeading(id) {
  const heading = byId(id);
  heading.setAttribute('tabindex', '-1');
  heading.focus();
}

// ---- loading and rendering ----

async function load() {
  const answer = await api('GET', '/api/auth/me');
  if (answer.status === 401) {
    window.location.replace(SIGN_IN_AGAIN);
    return false;
  }
  if (!answer.ok || !answer.body || !answer.body.account) {
    say(pageStatus, '');
    say(pageError, describeError(answer));
    main.setAttribute('aria-busy', 'false');
    return false;
  }
  // Hosts that predate multi-account omit `roster` (docs/api.md Versioning 2).
  me = { account: answer.body.account, roster: Array.isArray(answer.body.roster) ? answer.body.roster : [] };
  renderAccount(me.account);
  renderRoster(me.roster);
  byId('content').hidden = false;
  main.setAttribute('aria-busy', 'false');
  await Promise.all([loadIdentities(), loadKeys(), loadDevices(), loadActivity()]);
  return true;
}

function renderAccount(account) {
  const name = accountName(account);
  document.title = `${name} · Your account · ${document.body.dataset.brand || 'oc-host'}`;
  byId('active-heading-name').textContent = shortName(account);
  byId('active-name').textContent = account.display_name || 'Not set';
  const shown = account.display_identity;
  byId('active-identity-kind').textContent = shown ? identityKindLabel(shown.kind) : 'Shown as';
  byId('active-identity').textContent = shown ? shown.value : account.did_oc;
  byId('active-did').textContent = account.did_oc;
  const kindLabel = shown ? identityKindLabel(shown.kind).toLowerCase() : 'account ID';
  byId('copy-identity').setAttribute('aria-label', `Copy the ${kindLabel}`);
  byId('copy-did').setAttribute('aria-label', 'Copy the account ID');
  /** @type {HTMLInputElement} */ (byId('display-name')).value = account.display_name || '';
}

for (const [buttonId, sourceId, what] of [
  ['copy-identity', 'active-identity', null],
  ['copy-did', 'active-did', 'The account ID'],
]) {
  byId(buttonId).addEventListener('click', async () => {
    const source = byId(sourceId);
    const copied = await copyText(source.textContent || '', source);
    const label = what || (byId('active-identity-kind').textContent || 'It').trim();
    say(pageStatus, copied ? `${label} was copied.` : 'It is selected: copy it with your keyboard or menu.');
  });
}

function renderRoster(roster) {
  const list = byId('roster');
  list.replaceChildren(
    ...roster.map((entry) => {
      const name = accountName(entry);
      const details = [];
      if (entry.display_identity && entry.display_identity.value !== name) details.push(entry.display_identity.value);
      details.push(entry.did_oc);
      const button = h('button', { type: 'button', class: 'secondary', 'aria-label': `Switch to ${name}`, text: 'Switch' });
      button.addEventListener('click', () => switchTo(entry, button));
      return h(
        'li',
        { 'data-did': entry.did_oc },
        h('div', { class: 'item-main' }, h('span', { class: 'item-title', text: name }), h('span', { class: 'item-sub mono', text: details.join(' · ') })),
        button,
      );
    }),
  );
  byId('roster-empty').hidden = roster.length > 0;
  byId('logout-current').textContent = roster.length > 0 ? 'Sign out of this account' : 'Sign out';
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
  identities = Array.isArray(body) ? body : Array.isArray(body && body.identities) ? body.identities : [];
  renderIdentities(identities);
}

function describeIdentity(identity) {
  if (identity.kind === 'oauth' && typeof identity.value === 'string' && identity.value.includes(':')) {
    const provider = identity.value.slice(0, identity.value.indexOf(':'));
    const subject = identity.value.slice(provider.length + 1);
    return { title: `${provider.charAt(0).toUpperCase()}${provider.slice(1)} account`, sub: `${identityKindLabel('oauth')} · ${subject}` };
  }
  const sub = identity.verified === false ? `${identityKindLabel(identity.kind)} · not verified` : identityKindLabel(identity.kind);
  return { title: String(identity.value), sub };
}

function renderIdentities(list) {
  const removable = list.length > 1;
  byId('identities').replaceChildren(
    ...list.map((identity) => {
      const { title, sub } = describeIdentity(identity);
      let button = null;
      if (removable && typeof identity.id === 'string') {
        button = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${title}`, text: 'Remove' });
        const removeButton = button;
        removeButton.addEventListener('click', () => removeIdentity(identity, title, removeButton));
      }
      return h(
        'li',
        {},
        h('div', { class: 'item-main' }, h('span', { class: 'item-title mono', text: title }), h('span', { class: 'item-sub', text: sub })),
        button,
      );
    }),
  );
  if (list.length === 0) byId('identities').append(h('li', { class: 'hint', text: 'No linked identities.' }));
}

const dateFormat = new Intl.DateTimeFormat([], { dateStyle: 'medium' });
const dateTimeFormat = new Intl.DateTimeFormat([], { dateStyle: 'medium', timeStyle: 'short' });

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
  keys = Array.isArray(answer.body.credentials) ? answer.body.credentials : [];
  renderKeys(keys);
}

function describeKey(key) {
  const kind = key.sign_in ? 'Passkey' : 'Security key';
  const added = `added ${dateFormat.format(new Date(key.created_at))}`;
  const used = key.last_used_at ? `last used ${dateTimeFormat.format(new Date(key.last_used_at))}` : 'not used yet';
  return `${kind} · ${added} · ${used}`;
}

function renderKeys(list) {
  byId('keys').replaceChildren(
    ...list.map((key) => {
      const rename = h('button', { type: 'button', class: 'secondary', 'aria-label': `Rename ${key.label}`, text: 'Rename' });
      const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove ${key.label}`, text: 'Remove' });
      const main = h('div', { class: 'item-main' }, h('span', { class: 'item-title', text: key.label }), h('span', { class: 'item-sub', text: describeKey(key) }));
      const item = h('li', { 'data-key': key.id }, main, h('div', { class: 'actions' }, rename, remove));
      rename.addEventListener('click', () => startRename(key, item, main));
      remove.addEventListener('click', () => removeKey(key, remove));
      return item;
    }),
  );
  byId('keys-empty').hidden = list.length > 0;
}

/** Swaps the key's title for a small form in place; Escape or Cancel puts it back. */
function startRename(key, item, main) {
  const inputId = `key-rename-${item.dataset.key.slice(0, 16)}`;
  const input = /** @type {HTMLInputElement} */ (h('input', { id: inputId, type: 'text', maxlength: '64', value: key.label, autocomplete: 'off' }));
  const cancel = h('button', { type: 'button', class: 'link', text: 'Cancel' });
  const form = /** @type {HTMLFormElement} */ (
    h('form', { class: 'item-main', novalidate: true }, h('label', { for: inputId, text: `New name for ${key.label}` }), input, h('div', { class: 'actions' }, h('button', { type: 'submit', text: 'Save' }), cancel))
  );
  const restore = () => {
    form.replaceWith(main);
    item.querySelector('button')?.focus();
  };
  cancel.addEventListener('click', restore);
  form.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') restore();
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const error = byId('keys-error');
    say(error, '');
    await busy(submitButtonOf(form), async () => {
      const saved = await api('PATCH', `/api/auth/webauthn/credentials/${encodeURIComponent(key.id)}`, { label: input.value });
      if (sessionLost(saved)) return;
      if (!saved.ok) {
        markInvalid(input, saved.code === 'bad_request');
        say(error, saved.code === 'bad_request' ? 'That name cannot be used. Use 1 to 64 ordinary characters.' : describeKeyError(saved));
        input.focus();
        return;
      }
      await loadKeys();
      say(pageStatus, `The key is now called ${saved.body.credential.label}.`);
      focusHeading('keys-title');
    });
  });
  main.replaceWith(form);
  input.focus();
  input.select();
}

async function removeKey(key, button) {
  const error = byId('keys-error');
  say(error, '');
  await busy(button, async () => {
    const removed = await withStepUp(() => api('DELETE', `/api/auth/webauthn/credentials/${encodeURIComponent(key.id)}`), `remove the key ${key.label}`, () => say(pageStatus, 'Nothing was removed.'));
    if (removed === null) return;
    if (!removed.ok) {
      say(error, describeKeyError(removed));
      return;
    }
    await loadKeys();
    void loadActivity();
    say(pageStatus, `${key.label} was removed from this account.`);
    focusHeading('keys-title');
  });
}

const keyForm = /** @type {HTMLFormElement} */ (byId('key-add-form'));
keyForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const error = byId('keys-error');
  const labelField = /** @type {HTMLInputElement} */ (byId('key-label'));
  const signIn = /** @type {HTMLInputElement} */ (byId('key-sign-in')).checked;
  say(error, '');
  const label = labelField.value.trim();
  await busy(submitButtonOf(keyForm), async () => {
    const body = { sign_in: signIn, ...(label === '' ? {} : { label }) };
    const started = await withStepUp(() => api('POST', '/api/auth/webauthn/register/options', body), 'add a security key', () => say(pageStatus, 'No key was added.'));
    if (started === null) return;
    if (!started.ok) {
      markInvalid(labelField, started.code === 'bad_request');
      say(error, started.code === 'bad_request' ? 'That name cannot be used. Use up to 64 ordinary characters.' : describeKeyError(started));
      return;
    }
    markInvalid(labelField, false);
    let response;
    try {
      response = await createCredential(started.body.options);
    } catch (failure) {
      say(error, wasCancelled(failure) ? 'No key was added: the prompt was closed.' : browserErrorText(failure));
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
    await loadKeys();
    void loadActivity();
    say(pageStatus, `${added.body.credential.label} was added${added.body.credential.sign_in ? ': you can now sign in with it' : ''}.`);
    focusHeading('keys-title');
  });
});

// ---- devices (GET /api/auth/sessions) ----

function describeMethod(method) {
  if (method === 'bip322') return 'Bitcoin wallet';
  if (method === 'email_otp') return 'e-mail code';
  if (method === 'passkey') return 'passkey';
  if (typeof method === 'string' && method.startsWith('oauth:')) {
    const provider = method.slice('oauth:'.length);
    return `${provider.charAt(0).toUpperCase()}${provider.slice(1)}`;
  }
  return 'unknown way';
}

async function loadDevices() {
  const section = byId('devices-section');
  const answer = await api('GET', '/api/auth/sessions');
  if (sessionLost(answer)) return;
  if (answer.status === 404) {
    // An older host without the route: leave the section out.
    section.hidden = true;
    return;
  }
  section.hidden = false;
  if (!answer.ok) {
    byId('devices').replaceChildren();
    say(byId('devices-error'), describeError(answer));
    return;
  }
  const sessions = Array.isArray(answer.body.sessions) ? answer.body.sessions : [];
  byId('devices').replaceChildren(
    ...sessions.map((session) => {
      const title = session.device || 'An unknown browser';
      const facts = [
        `Signed in ${dateTimeFormat.format(new Date(session.created_at))} with ${describeMethod(session.signing_method)}`,
        `last seen ${dateTimeFormat.format(new Date(session.last_seen_at))}`,
      ];
      if (session.network) facts.push(`network ${session.network}`);
      const heading = h('span', { class: 'item-title' }, title, session.current ? ' ' : null, session.current ? h('span', { class: 'badge', text: 'This browser' }) : null);
      const button = h('button', {
        type: 'button',
        class: session.current ? 'secondary' : 'danger',
        'aria-label': session.current ? `Sign out ${title} (this browser)` : `Sign out ${title}`,
        text: 'Sign out',
      });
      button.addEventListener('click', () => signOutDevice(session, title, button));
      return h('li', { 'data-session': session.id }, h('div', { class: 'item-main' }, heading, h('span', { class: 'item-sub', text: facts.join(' · ') })), button);
    }),
  );
  byId('devices-others').hidden = sessions.filter((session) => !session.current).length === 0;
}

async function signOutDevice(session, title, button) {
  const error = byId('devices-error');
  say(error, '');
  if (session.current) {
    await logout('current', button);
    return;
  }
  await busy(button, async () => {
    const removed = await withStepUp(() => api('DELETE', `/api/auth/sessions/${encodeURIComponent(session.id)}`), `sign out ${title}`, () => say(pageStatus, 'No browser was signed out.'));
    if (removed === null) return;
    if (!removed.ok) {
      say(error, describeError(removed, { not_found: 'That browser was already signed out.' }));
      await loadDevices();
      return;
    }
    await loadDevices();
    void loadActivity();
    say(pageStatus, `${title} was signed out of this account.`);
    focusHeading('devices-title');
  });
}

byId('devices-others').addEventListener('click', async (event) => {
  const button = /** @type {HTMLButtonElement} */ (event.currentTarget);
  const error = byId('devices-error');
  say(error, '');
  await busy(button, async () => {
    const revoked = await withStepUp(() => api('POST', '/api/auth/sessions/revoke-others'), 'sign out every other browser', () => say(pageStatus, 'No browser was signed out.'));
    if (revoked === null) return;
    if (!revoked.ok) {
      say(error, describeError(revoked));
      return;
    }
    await loadDevices();
    void loadActivity();
    const count = Number(revoked.body.revoked) || 0;
    say(pageStatus, count === 1 ? 'One other browser was signed out.' : `${count} other browsers were signed out.`);
    focusHeading('devices-title');
  });
});

// ---- activity (GET /api/auth/activity) ----

const ACTIVITY_PAGE = 20;
/** @type {string | null} */
let activityNext = null;

/** One sentence per event kind (docs/protocol.md §6 "Activity"). */
function describeEvent(event) {
  const d = event.detail || {};
  const where = [d.device, d.network ? `network ${d.network}` : null].filter(Boolean).join(', ');
  switch (event.kind) {
    case 'signin':
      return `Signed in with ${describeMethod(d.method)}${where ? ` (${where})` : ''}${d.added ? ', added to a browser that had another account' : ''}`;
    case 'sudo':
      return `Confirmed it was you with ${d.method === 'key' ? `the key ${d.key || ''}`.trim() : describeMethod(d.method)}`;
    case 'sudo_failed':
      return `A confirmation with ${d.method === 'key' ? 'a security key' : describeMethod(d.method)} failed (${d.reason || 'refused'})`;
    case 'step_up':
      return `Stepped up with the key ${d.key || ''}`.trim();
    case 'step_up_failed':
      return `A step-up with a security key failed (${d.reason || 'refused'})`;
    case 'identity_linked':
      return `Linked ${identityKindLabel(d.kind).toLowerCase()} ${d.value || ''}`.trim();
    case 'identity_unlinked':
      return `Removed ${identityKindLabel(d.kind).toLowerCase()} ${d.value || ''}`.trim();
    case 'account_merged':
      return d.merged_from ? `The account ${d.merged_from} was merged into this one` : `This account was merged into ${d.merged_into}`;
    case 'account_edited':
      return `Changed ${Array.isArray(d.fields) ? d.fields.map((field) => field.replace('_', ' ')).join(' and ') : 'the account'}`;
    case 'key_added':
      return `Added the ${d.sign_in ? 'passkey' : 'security key'} ${d.label || ''}`.trim();
    case 'key_removed':
      return `Removed the key ${d.label || ''}`.trim();
    case 'sessions_revoked':
      if (d.scope === 'all') return `The operator signed this account out everywhere (${d.count} ${d.count === 1 ? 'browser' : 'browsers'})`;
      return d.scope === 'others' ? `Signed out everywhere else (${d.count} ${d.count === 1 ? 'browser' : 'browsers'})` : 'Signed out another browser';
    case 'connect_app_created':
      return `Created the Connect app ${d.name || ''}`.trim();
    case 'connect_app_rotated':
      return `Replaced the API key of the Connect app ${d.name || ''}`.trim();
    case 'connect_app_deleted':
      return `Deleted the Connect app ${d.name || ''}`.trim();
    case 'connect_app_webhook':
      return d.webhook === 'removed' ? `Removed the webhook of the Connect app ${d.name || ''}`.trim() : `Set the webhook of the Connect app ${d.name || ''} to ${d.webhook}`;
    case 'account_exported':
      return 'Downloaded the account\'s data';
    case 'account_disabled':
      return 'The operator disabled this account';
    case 'account_enabled':
      return 'The operator enabled this account again';
    default:
      return event.kind;
  }
}

function activityItem(event) {
  const failed = event.kind.endsWith('_failed');
  return h(
    'li',
    { 'data-kind': event.kind },
    h(
      'div',
      { class: 'item-main' },
      h('span', { class: 'item-title' }, describeEvent(event), failed ? ' ' : null, failed ? h('span', { class: 'badge', text: 'Failed' }) : null),
      h('span', { class: 'item-sub', text: dateTimeFormat.format(new Date(event.at)) }),
    ),
  );
}

async function loadActivity(more = false) {
  const section = byId('activity-section');
  const query = new URLSearchParams({ limit: String(ACTIVITY_PAGE) });
  if (more && activityNext) query.set('before', activityNext);
  const answer = await api('GET', `/api/auth/activity?${query}`);
  if (sessionLost(answer)) return;
  if (answer.status === 404) {
    section.hidden = true;
    return;
  }
  section.hidden = false;
  if (!answer.ok) {
    say(byId('activity-error'), describeError(answer));
    return;
  }
  say(byId('activity-error'), '');
  const items = (answer.body.events || []).map(activityItem);
  if (more) byId('activity').append(...items);
  else byId('activity').replaceChildren(...items);
  activityNext = typeof answer.body.next === 'string' ? answer.body.next : null;
  byId('activity-more').hidden = activityNext === null;
}

byId('activity-more').addEventListener('click', (event) => busy(/** @type {HTMLButtonElement} */ (event.currentTarget), () => loadActivity(true)));

// ---- actions ----

/**
 * Asks before something that cannot be taken back with one click: a modal
 * dialog with the consequence and a button naming the action. Answers true
 * when the person confirmed.
 *
 * @param {{title: string, text: string, confirm: string}} question
 */
function confirmAction(question) {
  const confirmDialog = /** @type {HTMLDialogElement} */ (byId('confirm-dialog'));
  byId('confirm-title').textContent = question.title;
  byId('confirm-text').textContent = question.text;
  byId('confirm-yes').textContent = question.confirm;
  const returnFocus = document.activeElement;
  confirmDialog.returnValue = '';
  return new Promise((resolve) => {
    confirmDialog.addEventListener(
      'close',
      () => {
        if (returnFocus instanceof HTMLElement && returnFocus.isConnected) returnFocus.focus();
        resolve(confirmDialog.returnValue === 'yes');
      },
      { once: true },
    );
    confirmDialog.showModal();
    byId('confirm-no').focus();
  });
}

byId('confirm-yes').addEventListener('click', () => /** @type {HTMLDialogElement} */ (byId('confirm-dialog')).close('yes'));
byId('confirm-no').addEventListener('click', () => /** @type {HTMLDialogElement} */ (byId('confirm-dialog')).close('no'));

/**
 * Runs `request`; when it answers 401 `sudo_required`, asks for a step-up
 * that names `action`, and runs it once more. Answers null when the person
 * cancelled the step-up (after `onCancel`, which says so) or when the
 * session is gone (sessionLost has moved the page on).
 *
 * @param {() => Promise<{ok: boolean, status: number, code: string | null, body: any}>} request
 * @param {string} action what the proof is for, to finish "To …, prove …": "remove the key Desk key"
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
    if (await load()) {
      say(pageStatus, `You are now using ${accountName(me.account)}.`);
      focusHeading('active-title');
    }
  });
}

async function logout(scope, button) {
  say(byId('signout-error'), '');
  if (scope === 'all') {
    const count = 1 + (me ? me.roster.length : 0);
    const sure = await confirmAction({
      title: count === 1 ? 'Sign out?' : `Sign out of all ${count} accounts?`,
      text:
        count === 1
          ? 'This browser will no longer be signed in.'
          : `Every account on this browser will be signed out, not only ${me ? accountName(me.account) : 'this one'}. You sign each one in again to use it here.`,
      confirm: count === 1 ? 'Sign out' : `Sign out of all ${count}`,
    });
    if (!sure) {
      say(pageStatus, 'You are still signed in.');
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
    const previous = me ? accountName(me.account) : 'that account';
    if (await load()) {
      say(pageStatus, `Signed out of ${previous}. You are now using ${accountName(me.account)}.`);
      focusHeading('active-title');
    }
  });
}

// ---- your data: export and deletion (docs/protocol.md §6 "Export", §2 "Disabling and deleting") ----

byId('export-data').addEventListener('click', async (event) => {
  const button = /** @type {HTMLButtonElement} */ (event.currentTarget);
  const error = byId('export-error');
  say(error, '');
  await busy(button, async () => {
    const answer = await withStepUp(() => api('GET', '/api/auth/account/export'), 'download your data', () => say(pageStatus, 'Nothing was downloaded.'));
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
    void loadActivity();
    say(pageStatus, 'Your data was downloaded as a JSON file.');
  });
});

const deleteForm = /** @type {HTMLFormElement} */ (byId('delete-form'));
deleteForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const field = /** @type {HTMLInputElement} */ (byId('delete-confirm'));
  const error = byId('delete-error');
  say(error, '');
  if (field.value.trim().toLowerCase() !== 'delete' || !me) {
    markInvalid(field, true);
    say(error, 'Type the word delete to confirm that this account should be deleted.');
    field.focus();
    return;
  }
  markInvalid(field, false);
  const deleted = accountName(me.account);
  const did = me.account.did_oc;
  await busy(submitButtonOf(deleteForm), async () => {
    const answer = await withStepUp(() => api('DELETE', '/api/auth/account', { confirm: did }), `delete ${deleted}`, () => say(pageStatus, 'The account was not deleted.'));
    if (answer === null) return;
    if (!answer.ok) {
      say(error, describeError(answer));
      return;
    }
    field.value = '';
    if (!answer.body || !answer.body.switched_to) {
      window.location.assign('/signin?deleted=1');
      return;
    }
    if (await load()) {
      say(pageStatus, `${deleted} was deleted. You are now using ${accountName(me.account)}.`);
      focusHeading('active-title');
    }
  });
});

byId('logout-current').addEventListener('click', (event) => logout('current', /** @type {HTMLButtonElement} */ (event.currentTarget)));
byId('logout-all').addEventListener('click', (event) => logout('all', /** @type {HTMLButtonElement} */ (event.currentTarget)));

const nameForm = /** @type {HTMLFormElement} */ (byId('name-form'));
nameForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const field = /** @type {HTMLInputElement} */ (byId('display-name'));
  const error = byId('name-error');
  say(error, '');
  const value = field.value.trim();
  if ([...value].length > 64) {
    markInvalid(field, true);
    say(error, 'The name can be at most 64 characters.');
    field.focus();
    return;
  }
  await busy(submitButtonOf(nameForm), async () => {
    // An empty field removes the name: the service wants an explicit null (not "").
    const saved = await withStepUp(() => api('PATCH', '/api/auth/account', { display_name: value === '' ? null : value }), 'change the display name');
    if (saved === null) return;
    if (!saved.ok) {
      markInvalid(field, saved.code === 'bad_request');
      say(error, describeError(saved, { bad_request: 'That name cannot be used. Use up to 64 ordinary characters.' }));
      field.focus();
      return;
    }
    markInvalid(field, false);
    if (me && saved.body && saved.body.account) {
      me.account = saved.body.account;
      renderAccount(me.account);
    }
    void loadActivity();
    say(pageStatus, value === '' ? 'Display name removed.' : 'Display name saved.');
  });
});

async function removeIdentity(identity, title, button) {
  const error = byId('identities-error');
  say(error, '');
  const sure = await confirmAction({
    title: `Remove ${title}?`,
    text: `${title} will no longer sign in to this account, and browsers signed in with it are signed out. You can link it again later.`,
    confirm: 'Remove',
  });
  if (!sure) {
    say(pageStatus, 'Nothing was removed.');
    return;
  }
  await busy(button, async () => {
    const removed = await withStepUp(() => api('DELETE', `/api/auth/identities?id=${encodeURIComponent(identity.id)}`), `remove ${title}`, () => say(pageStatus, 'Nothing was removed.'));
    if (removed === null) return;
    if (!removed.ok) {
      say(error, describeError(removed));
      return;
    }
    await load();
    say(pageStatus, `${title} was removed from this account.`);
    focusHeading('identities-title');
  });
}

// ---- step-up (POST /api/auth/sudo) ----

const dialog = /** @type {HTMLDialogElement} */ (byId('sudo-dialog'));
const proofPanel = createProofPanel(byId('sudo-panel'), {
  onProved: () => dialog.close('proved'),
  onSessionLost: sessionLost,
});

/** Opens the dialog; resolves true once the account proved itself, false when cancelled. */
function stepUp(action) {
  proofPanel.reset(proofOptions(identities, me && me.account, keys));
  byId('sudo-intro').textContent = `To ${action}, prove again that you control this account. The proof stays valid for 5 minutes.`;
  const returnFocus = document.activeElement;
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        if (returnFocus instanceof HTMLElement && returnFocus.isConnected) returnFocus.focus();
        resolve(dialog.returnValue === 'proved');
      },
      { once: true },
    );
    dialog.showModal();
  });
}

byId('sudo-cancel').addEventListener('click', () => dialog.close('cancelled'));

void load().then((loaded) => {
  if (loaded) say(pageStatus, '');
});

setUpLinking({
  withStepUp,
  confirmAction,
  onLinked: async (sentence) => {
    if (await load()) {
      say(pageStatus, sentence);
      focusHeading('identities-title');
    }
  },
});
