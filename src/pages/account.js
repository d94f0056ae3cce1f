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
  describeIdentity,
  formatDate,
  formatDateTime,
  formatList,
  h,
  identityKindLabel,
  markInvalid,
  say,
  shortName,
  submitButtonOf,
  t,
  tNodes,
} from './common.js';
import { createProofPanel, proofOptions } from './stepup.js';
import { setUpLinking } from './link.js';
import { browserErrorText, createCredential, describeKeyError, wasCancelled, webauthnSupported } from './passkeys.js';

/** @typedef {import('./common.js').ApiResult} ApiResult */
/** @typedef {import('./common.js').Identity} Identity */

/**
 * The active account as GET /api/auth/me and PATCH /api/auth/account answer it.
 *
 * @typedef {import('./common.js').AccountSummary & {primary_btc?: string | null}} Account
 */

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

const SIGN_IN_AGAIN = '/signin?return_to=/account';

const main = byId('main');
const pageError = byId('page-error');
const pageStatus = byId('page-status');

/** @typedef {{account: Account, roster: import('./common.js').AccountSummary[]}} Me */

/** @type {Me | null} */
let me = null;
/** @type {Identity[] | null} null while unknown (not loaded, or the host has no identities route) */
let identities = null;
/** @type {Key[] | null} null while unknown, or where keys are not available */
let keys = null;

/** A 401 `not_authenticated` anywhere means the session is gone: sign in again. @param {ApiResult} result */
function sessionLost(result) {
  if (result.status === 401 && result.code === 'not_authenticated') {
    window.location.replace(SIGN_IN_AGAIN);
    return true;
  }
  return false;
}

/** Moves focus to a heading after the content under it was replaced, so keyboard users keep their place. @param {string} id */
function focusHeading(id) {
  const heading = byId(id);
  heading.setAttribute('tabindex', '-1');
  heading.focus();
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
  if (!answer.ok || !answer.body || !answer.body.account) {
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
  byId('content').hidden = false;
  main.setAttribute('aria-busy', 'false');
  await Promise.all([loadIdentities(), loadKeys(), loadDevices(), loadActivity()]);
  return loaded;
}

/** @param {Account} account */
function renderAccount(account) {
  const name = accountName(account);
  document.title = `${name} · ${t('account.title')} · ${document.body.dataset.brand || 'oc-host'}`;
  byId('active-title').replaceChildren(...tNodes('account.signed_in_as', { name: h('span', { id: 'active-heading-name', text: shortName(account) }) }));
  byId('active-name').textContent = account.display_name || t('account.name_not_set');
  const shown = account.display_identity;
  byId('active-identity-kind').textContent = shown ? identityKindLabel(shown.kind) : t('account.shown_as');
  byId('active-identity').textContent = shown ? shown.value : account.did_oc;
  byId('active-did').textContent = account.did_oc;
  byId('copy-identity').setAttribute('aria-label', t('account.copy_identity', { kind: shown ? shown.kind : 'did' }));
  byId('copy-did').setAttribute('aria-label', t('account.copy_identity', { kind: 'did' }));
  /** @type {HTMLInputElement} */ (byId('display-name')).value = account.display_name || '';
}

for (const [buttonId, sourceId] of [
  ['copy-identity', 'active-identity'],
  ['copy-did', 'active-did'],
]) {
  byId(buttonId).addEventListener('click', async () => {
    const source = byId(sourceId);
    const copied = await copyText(source.textContent || '', source);
    const kind = buttonId === 'copy-did' ? 'did' : me?.account.display_identity?.kind ?? 'did';
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
      const button = h('button', { type: 'button', class: 'secondary', 'aria-label': t('account.switch_to', { name }), text: t('account.switch') });
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
  const listed = Array.isArray(body) ? body : Array.isArray(body && body.identities) ? body.identities : [];
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
        button = h('button', { type: 'button', class: 'danger', 'aria-label': t('account.remove_named', { name: title }), text: t('account.remove') });
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

/** @param {Key} key */
function describeKey(key) {
  const kind = key.sign_in ? t('account.key_kind_passkey') : t('account.key_kind_security');
  const added = t('account.key_added_on', { date: formatDate(key.created_at) });
  const used = key.last_used_at ? t('account.key_last_used', { date: formatDateTime(key.last_used_at) }) : t('account.key_unused');
  return `${kind} · ${added} · ${used}`;
}

/** @param {Key[]} list */
function renderKeys(list) {
  byId('keys').replaceChildren(
    ...list.map((key) => {
      const rename = h('button', { type: 'button', class: 'secondary', 'aria-label': t('account.rename_named', { name: key.label }), text: t('account.rename') });
      const remove = h('button', { type: 'button', class: 'danger', 'aria-label': t('account.remove_named', { name: key.label }), text: t('account.remove') });
      const main = h('div', { class: 'item-main' }, h('span', { class: 'item-title', text: key.label }), h('span', { class: 'item-sub', text: describeKey(key) }));
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
  const input = /** @type {HTMLInputElement} */ (h('input', { id: inputId, type: 'text', maxlength: '64', value: key.label, autocomplete: 'off' }));
  const cancel = h('button', { type: 'button', class: 'link', text: t('page.cancel') });
  const form = /** @type {HTMLFormElement} */ (
    h('form', { class: 'item-main', novalidate: true }, h('label', { for: inputId, text: t('account.rename_label', { name: key.label }) }), input, h('div', { class: 'actions' }, h('button', { type: 'submit', text: t('account.save') }), cancel))
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
        say(error, saved.code === 'bad_request' ? t('account.key_name_invalid') : describeKeyError(saved));
        input.focus();
        return;
      }
      await loadKeys();
      say(pageStatus, t('account.key_renamed', { name: saved.body.credential.label }));
      focusHeading('keys-title');
    });
  });
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
    const removed = await withStepUp(() => api('DELETE', `/api/auth/webauthn/credentials/${encodeURIComponent(key.id)}`), t('action.remove_key', { name: key.label }), () => say(pageStatus, t('account.nothing_removed')));
    if (removed === null) return;
    if (!removed.ok) {
      say(error, describeKeyError(removed));
      return;
    }
    await loadKeys();
    void loadActivity();
    say(pageStatus, t('account.removed', { name: key.label }));
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
    const started = await withStepUp(() => api('POST', '/api/auth/webauthn/register/options', body), t('action.add_key'), () => say(pageStatus, t('account.no_key_added')));
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
    await loadKeys();
    void loadActivity();
    const keyName = added.body.credential.label;
    say(pageStatus, added.body.credential.sign_in ? t('account.passkey_added', { name: keyName }) : t('account.key_added', { name: keyName }));
    focusHeading('keys-title');
  });
});

// ---- devices (GET /api/auth/sessions) ----

/** How a session was signed in (its `signing_method`), in words. @param {unknown} method */
function describeMethod(method) {
  if (method === 'bip322') return t('method.bip322');
  if (method === 'email_otp') return t('method.email_otp');
  if (method === 'passkey') return t('method.passkey');
  if (typeof method === 'string' && method.startsWith('oauth:')) {
    const provider = method.slice('oauth:'.length);
    return `${provider.charAt(0).toUpperCase()}${provider.slice(1)}`;
  }
  return t('method.unknown');
}

/**
 * A browser signed in to the account (GET /api/auth/sessions).
 *
 * @typedef {object} Device
 * @property {string} id
 * @property {string | null} [device] the browser and system, in words
 * @property {string | null} [network]
 * @property {string} created_at
 * @property {string} last_seen_at
 * @property {string} signing_method
 * @property {boolean} current this browser
 */

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
  /** @type {Device[]} */
  const sessions = Array.isArray(answer.body.sessions) ? answer.body.sessions : [];
  byId('devices').replaceChildren(
    ...sessions.map((session) => {
      const title = session.device || t('account.unknown_browser');
      const facts = [
        t('account.device_signed_in', { date: formatDateTime(session.created_at), method: describeMethod(session.signing_method) }),
        t('account.device_seen', { date: formatDateTime(session.last_seen_at) }),
      ];
      if (session.network) facts.push(t('account.network', { network: session.network }));
      const heading = h('span', { class: 'item-title' }, title, session.current ? ' ' : null, session.current ? h('span', { class: 'badge', text: t('account.this_browser') }) : null);
      const button = h('button', {
        type: 'button',
        class: session.current ? 'secondary' : 'danger',
        'aria-label': session.current ? t('account.sign_out_this_browser', { name: title }) : t('account.sign_out_named', { name: title }),
        text: t('account.signout_title'),
      });
      button.addEventListener('click', () => signOutDevice(session, title, button));
      return h('li', { 'data-session': session.id }, h('div', { class: 'item-main' }, heading, h('span', { class: 'item-sub', text: facts.join(' · ') })), button);
    }),
  );
  byId('devices-others').hidden = sessions.filter((session) => !session.current).length === 0;
}

/**
 * @param {Device} session
 * @param {string} title
 * @param {HTMLButtonElement} button
 */
async function signOutDevice(session, title, button) {
  const error = byId('devices-error');
  say(error, '');
  if (session.current) {
    await logout('current', button);
    return;
  }
  await busy(button, async () => {
    const removed = await withStepUp(() => api('DELETE', `/api/auth/sessions/${encodeURIComponent(session.id)}`), t('action.sign_out_device', { name: title }), () => say(pageStatus, t('account.no_browser_signed_out')));
    if (removed === null) return;
    if (!removed.ok) {
      say(error, describeError(removed, { not_found: t('account.browser_gone') }));
      await loadDevices();
      return;
    }
    await loadDevices();
    void loadActivity();
    say(pageStatus, t('account.browser_signed_out', { name: title }));
    focusHeading('devices-title');
  });
}

byId('devices-others').addEventListener('click', async (event) => {
  const button = /** @type {HTMLButtonElement} */ (event.currentTarget);
  const error = byId('devices-error');
  say(error, '');
  await busy(button, async () => {
    const revoked = await withStepUp(() => api('POST', '/api/auth/sessions/revoke-others'), t('action.sign_out_others'), () => say(pageStatus, t('account.no_browser_signed_out')));
    if (revoked === null) return;
    if (!revoked.ok) {
      say(error, describeError(revoked));
      return;
    }
    await loadDevices();
    void loadActivity();
    const count = Number(revoked.body.revoked) || 0;
    say(pageStatus, t('account.others_signed_out', { count }));
    focusHeading('devices-title');
  });
});

// ---- activity (GET /api/auth/activity) ----

const ACTIVITY_PAGE = 20;
/** @type {string | null} */
let activityNext = null;

/**
 * An event of the account's activity (GET /api/auth/activity); what its
 * `detail` holds depends on its kind (docs/protocol.md §6 "Activity").
 *
 * @typedef {object} ActivityEvent
 * @property {string} kind
 * @property {string} at
 * @property {Record<string, string | number | boolean | null | string[]>} [detail]
 */

/**
 * The account fields an `account_edited` event names, in words.
 *
 * @type {Readonly<Record<string, string>>}
 */
const FIELDS = { display_name: 'field.display_name' };

/** One sentence per event kind (docs/protocol.md §6 "Activity"). @param {ActivityEvent} event */
function describeEvent(event) {
  const d = event.detail || {};
  const where = [d.device, d.network ? t('account.network', { network: String(d.network) }) : null].filter(Boolean).join(', ');
  /** @param {unknown} value */
  const name = (value) => (typeof value === 'string' ? value : '');
  /** @param {unknown} value */
  const method = (value) => (value === 'key' ? t('method.key') : describeMethod(value));
  // A missing name leaves no gap behind.
  /**
   * @param {string} key
   * @param {Record<string, string | number>} [values]
   */
  const said = (key, values) => t(key, values).replace(/\s{2,}/g, ' ').trim();
  switch (event.kind) {
    case 'signin':
      return said('event.signin', { method: describeMethod(d.method), placed: where ? 'yes' : 'no', where, added: d.added ? 'yes' : 'no' });
    case 'sudo':
      return d.method === 'key' ? said('event.sudo_key', { key: name(d.key) }) : said('event.sudo', { method: describeMethod(d.method) });
    case 'sudo_failed':
      return said('event.sudo_failed', { method: method(d.method), reason: name(d.reason) || 'refused' });
    case 'step_up':
      return said('event.step_up', { key: name(d.key) });
    case 'step_up_failed':
      return said('event.step_up_failed', { reason: name(d.reason) || 'refused' });
    case 'identity_linked':
      return said('event.identity_linked', { kind: name(d.kind), value: name(d.value) });
    case 'identity_unlinked':
      return said('event.identity_unlinked', { kind: name(d.kind), value: name(d.value) });
    case 'account_merged':
      return d.merged_from ? said('event.merged_from', { account: String(d.merged_from) }) : said('event.merged_into', { account: name(d.merged_into) });
    case 'account_edited':
      return Array.isArray(d.fields)
        ? said('event.edited', { fields: formatList(d.fields.map((field) => (Object.hasOwn(FIELDS, field) ? t(FIELDS[field]) : String(field).replace('_', ' ')))) })
        : said('event.edited_account');
    case 'key_added':
      return said('event.key_added', { passkey: d.sign_in ? 'yes' : 'no', name: name(d.label) });
    case 'key_removed':
      return said('event.key_removed', { name: name(d.label) });
    case 'sessions_revoked':
      if (d.scope === 'all') return said('event.revoked_all', { count: Number(d.count) || 0 });
      return d.scope === 'others' ? said('event.revoked_others', { count: Number(d.count) || 0 }) : said('event.revoked_one');
    case 'tab_pinned':
      return said('event.tab_pinned', { account: name(d.active_account), placed: where ? 'yes' : 'no', where });
    case 'connect_app_created':
      return said('event.app_created', { name: name(d.name) });
    case 'connect_app_rotated':
      return said('event.app_rotated', { name: name(d.name) });
    case 'connect_app_deleted':
      return said('event.app_deleted', { name: name(d.name) });
    case 'connect_app_webhook':
      return d.webhook === 'removed'
        ? said('event.app_webhook_removed', { name: name(d.name) })
        : said('event.app_webhook_set', { name: name(d.name), url: name(d.webhook) });
    case 'account_exported':
      return said('event.exported');
    case 'account_disabled':
      return said('event.disabled');
    case 'account_enabled':
      return said('event.enabled');
    default:
      return event.kind;
  }
}

/** @param {ActivityEvent} event */
function activityItem(event) {
  const failed = event.kind.endsWith('_failed');
  return h(
    'li',
    { 'data-kind': event.kind },
    h(
      'div',
      { class: 'item-main' },
      h('span', { class: 'item-title' }, describeEvent(event), failed ? ' ' : null, failed ? h('span', { class: 'badge', text: t('account.failed') }) : null),
      h('span', { class: 'item-sub', text: formatDateTime(event.at) }),
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
    dialog.addEventListener(
      'close',
      () => {
        onClose();
        if (returnFocus instanceof HTMLElement && returnFocus.isConnected) returnFocus.focus();
        resolve(dialog.returnValue);
      },
      { once: true },
    );
    dialog.showModal();
  });
}

/**
 * Asks before something that cannot be taken back with one click: a modal
 * dialog with the consequence and a button naming the action. Answers true
 * when the person confirmed.
 *
 * `details` are shown under the text, such as the choices of a merge
 * (src/pages/link.js); the caller keeps them to read the choices after the
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
      focusHeading('active-title');
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
    const answer = await withStepUp(() => api('GET', '/api/auth/account/export'), t('action.export'), () => say(pageStatus, t('account.nothing_downloaded')));
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
    say(pageStatus, t('account.downloaded'));
  });
});

const deleteForm = /** @type {HTMLFormElement} */ (byId('delete-form'));
deleteForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const field = /** @type {HTMLInputElement} */ (byId('delete-confirm'));
  const error = byId('delete-error');
  say(error, '');
  const typed = field.value.trim().toLocaleLowerCase();
  // The word of the page's language; the English word is accepted in every language.
  if ((typed !== t('account.delete_word').toLocaleLowerCase() && typed !== 'delete') || !me) {
    markInvalid(field, true);
    say(error, t('account.delete_mismatch', { word: t('account.delete_word') }));
    field.focus();
    return;
  }
  markInvalid(field, false);
  const deleted = accountName(me.account);
  const did = me.account.did_oc;
  await busy(submitButtonOf(deleteForm), async () => {
    const answer = await withStepUp(() => api('DELETE', '/api/auth/account', { confirm: did }), t('action.delete', { name: deleted }), () => say(pageStatus, t('account.not_deleted')));
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
    const loaded = await load();
    if (loaded) {
      say(pageStatus, t('account.deleted_switched', { deleted, name: accountName(loaded.account) }));
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
    say(error, t('account.name_too_long'));
    field.focus();
    return;
  }
  await busy(submitButtonOf(nameForm), async () => {
    // An empty field removes the name: the service wants an explicit null (not "").
    const saved = await withStepUp(() => api('PATCH', '/api/auth/account', { display_name: value === '' ? null : value }), t('action.rename_account'));
    if (saved === null) return;
    if (!saved.ok) {
      markInvalid(field, saved.code === 'bad_request');
      say(error, describeError(saved, { bad_request: t('account.name_invalid') }));
      field.focus();
      return;
    }
    markInvalid(field, false);
    if (me && saved.body && saved.body.account) {
      me.account = saved.body.account;
      renderAccount(me.account);
    }
    void loadActivity();
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
    const removed = await withStepUp(() => api('DELETE', `/api/auth/identities?id=${encodeURIComponent(id)}`), t('action.remove_identity', { name: title }), () => say(pageStatus, t('account.nothing_removed')));
    if (removed === null) return;
    if (!removed.ok) {
      say(error, describeError(removed));
      return;
    }
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
  proofPanel.reset(proofOptions(identities, me && me.account, keys));
  byId('sudo-intro').textContent = t('stepup.intro_action', { action });
  return (await showDialog(dialog)) === 'proved';
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
