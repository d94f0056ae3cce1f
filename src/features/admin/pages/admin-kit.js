/**
 * What every view of the operators' console shares (admin.js is the page):
 * the page's elements, the console's step-up with the operator's key (the
 * service wants one younger than 10 minutes, and younger than a minute for
 * a destructive action), the one way a view calls the admin API, and the
 * small pieces the views are built of.
 */
import { api, busy, byId, copyText, describeError, formatDateTime, formatTime, h, say, t } from './common.js';
import { browserErrorText, describeKeyError, getAssertion, webauthnSupported } from './passkeys.js';

export const base = document.body.dataset.console || '/admin';
export const main = byId('main');
export const pageStatus = byId('page-status');
export const pageError = byId('page-error');
export const consoleRoot = byId('console');
export const view = byId('view');
const stepUpCard = byId('step-up');
const stepUpError = byId('step-up-error');
const freshUntil = byId('fresh-until');

/**
 * The message key of each value the API answers in words of its own: the
 * keys are written out, as every key a page uses must be (its catalog is
 * read off the quoted keys of its modules).
 */
export const WORDS = {
  status: {
    active: 'admin.status_active',
    disabled: 'admin.status_disabled',
    deleted: 'admin.status_deleted',
    merged: 'admin.status_merged',
  },
  delivery: { pending: 'admin.delivery_pending', delivered: 'admin.delivery_delivered', failed: 'admin.delivery_failed' },
  keyUse: { session: 'admin.key_use_session', oidc: 'admin.key_use_oidc', webhook: 'admin.key_use_webhook' },
  keyState: {
    signing: 'admin.key_state_signing',
    pending: 'admin.key_state_pending',
    published: 'admin.key_state_published',
    withdrawn: 'admin.key_state_withdrawn',
  },
  rotate: { session: 'admin.rotate_session_key', oidc: 'admin.rotate_oidc_key', webhook: 'admin.rotate_webhook_key' },
  way: { bip322: 'method.bip322', email_otp: 'method.email_otp', passkey: 'method.passkey' },
  filter: { actor: 'admin.filter_actor', action: 'admin.filter_action', target: 'admin.filter_target' },
};

/** A value in words: its message, or the value itself when this page knows no word for it. @param {Record<string, string>} words @param {string} value */
export function word(words, value) {
  return Object.hasOwn(words, value) ? t(words[value]) : value;
}

/** The error codes of the admin API (docs/errors.md) in the console's words, before the sentences every page shares. */
const ADMIN_ERRORS = {
  step_up_required: t('admin.error_step_up'),
  step_up_cancelled: t('admin.error_step_up_cancelled'),
  confirmation_mismatch: t('admin.delete_confirm_mismatch'),
  delivery_not_failed: t('admin.error_delivery_not_failed'),
  unknown_did_oc: t('admin.error_unknown_account'),
  not_found: t('admin.error_not_found'),
};

/** @param {import('./common.js').ApiResult} result */
export function describe(result) {
  return describeError(result, ADMIN_ERRORS);
}

/** How the console stands: GET /api/admin/session. @type {any} */
let session = null;

/** A time from the service, in this device's clock: the service's Date header corrects for a device whose clock is off. */
let skewMs = 0;

/** @param {string | null} date the service's Date header */
function learnSkew(date) {
  const served = date === null ? NaN : Date.parse(date);
  if (!Number.isNaN(served)) skewMs = served - Date.now();
}

/** @param {string | null | undefined} iso */
export function stillAhead(iso) {
  return typeof iso === 'string' && Date.parse(iso) > Date.now() + skewMs;
}

// ---- the key step-up ----

/** Asks the operator's key and re-mints the session with `step_up_at`; true when it worked. @param {HTMLElement} region */
async function stepUp(region) {
  const options = await api('POST', '/api/auth/webauthn/assertion/options', {});
  if (!options.ok) {
    say(region, describeKeyError(options));
    return false;
  }
  let response;
  try {
    response = await getAssertion(options.body.options);
  } catch (failure) {
    say(region, browserErrorText(failure));
    return false;
  }
  const verified = await api('POST', '/api/auth/webauthn/assertion/verify', { challenge_token: options.body.challenge_token, response });
  if (!verified.ok) {
    say(region, describeKeyError(verified));
    return false;
  }
  return loadSession();
}

/** Reads how the console stands; false when it could not. */
export async function loadSession() {
  const result = await api('GET', '/api/admin/session');
  learnSkew(result.date);
  if (!result.ok) {
    say(pageError, describe(result));
    return false;
  }
  session = result.body;
  showFreshness();
  return true;
}

export function showFreshness() {
  const until = session?.step_up ? session.step_up.fresh_until : null;
  freshUntil.textContent = stillAhead(until) ? t('admin.fresh_until', { time: formatTime(until) }) : '';
}

/**
 * The step-up card in place of the console, until the key answers: what the
 * console needs before anything. `why` says what happened ('' at the start).
 *
 * @param {string} why
 * @returns {Promise<void>} settled once the operator stepped up
 */
export function askForKey(why) {
  consoleRoot.hidden = true;
  stepUpCard.hidden = false;
  byId('step-up-text').textContent = why || t('admin.step_up_text');
  const hasKey = webauthnSupported() && session !== null && session.keys > 0;
  byId('step-up-actions').hidden = !hasKey;
  byId('no-key').hidden = hasKey;
  say(pageStatus, '');
  main.setAttribute('aria-busy', 'false');
  const button = /** @type {HTMLButtonElement} */ (byId('step-up-button'));
  if (hasKey) button.focus();
  return new Promise((resolve) => {
    button.onclick = async () => {
      say(stepUpError, '');
      const done = await busy(button, () => stepUp(stepUpError));
      if (!done) return;
      button.onclick = null;
      stepUpCard.hidden = true;
      consoleRoot.hidden = false;
      resolve();
    };
  });
}

/**
 * An admin API call. A refusal for a stale step-up asks for the key and
 * sends the call again; a destructive action asks for the key first unless
 * the last step-up is younger than a minute.
 *
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body]
 * @param {{destructive?: boolean, region?: HTMLElement}} [how]
 */
export async function call(method, path, body, how = {}) {
  if (how.destructive && !stillAhead(session?.step_up?.destructive_until)) {
    const region = how.region ?? pageError;
    say(region, t('admin.confirm_with_key'));
    if (!(await stepUp(region))) return { ok: false, status: 0, code: 'step_up_cancelled', body: null, date: null };
    say(region, '');
  }
  const result = await api(method, path, body);
  if (result.code !== 'step_up_required') return result;
  if (how.destructive) {
    // Asked for the key just now, yet the service wants a younger step-up: once more, in place.
    const region = how.region ?? pageError;
    if (!(await stepUp(region))) return { ok: false, status: 0, code: 'step_up_cancelled', body: null, date: null };
    return api(method, path, body);
  }
  await askForKey(t('admin.step_up_again'));
  return call(method, path, body, how);
}

// ---- small pieces of the views ----

/** A view's heading, which takes focus when the view opens. @param {string} id @param {string} text */
function heading(id, text) {
  return h('h2', { id, tabindex: '-1', text });
}

/** A card section named by its heading. @param {string} id @param {string} title @param {...(Node | null)} children */
export function card(id, title, ...children) {
  return h('section', { class: 'card', 'aria-labelledby': `${id}-title` }, heading(`${id}-title`, title), ...children);
}

/**
 * A table: a caption, its column heads and its rows (each an array of cells).
 *
 * @param {string} caption
 * @param {string[]} heads
 * @param {Array<Array<Node | string>>} rows
 * @param {string} [empty] said instead of an empty table
 */
export function table(caption, heads, rows, empty = t('admin.none')) {
  if (rows.length === 0) return h('p', { class: 'hint', text: empty });
  return h(
    'div',
    { class: 'table-wrap', tabindex: '0', role: 'group', 'aria-label': caption },
    h(
      'table',
      { class: 'data' },
      h('caption', { class: 'visually-hidden', text: caption }),
      h('thead', {}, h('tr', {}, ...heads.map((text) => h('th', { scope: 'col', text })))),
      h('tbody', {}, ...rows.map((cells) => h('tr', {}, ...cells.map((cell) => h('td', {}, cell))))),
    ),
  );
}

/** @param {string | null | undefined} iso */
export function when(iso) {
  return iso ? formatDateTime(iso) : '—';
}

/** A link to another view of the console. @param {string} path under the console @param {string} text */
export function viewLink(path, text, attributes = {}) {
  return h('a', { href: `${base}${path}`, 'data-nav': '', ...attributes, text });
}

/** A field with its label (and hint). @param {string} id @param {string} label @param {HTMLElement} field @param {string} [hint] */
export function labelled(id, label, field, hint) {
  field.id = id;
  if (hint) field.setAttribute('aria-describedby', `${id}-hint`);
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id, text: label }),
    field,
    hint ? h('p', { id: `${id}-hint`, class: 'hint', text: hint }) : null,
  );
}

/** The reason field every action of a view shares; its value, or null after saying it is missing. @param {string} id */
export function reasonField(id) {
  const field = /** @type {HTMLInputElement} */ (h('input', { type: 'text', maxlength: '500', autocomplete: 'off' }));
  const read = (/** @type {HTMLElement} */ region) => {
    const value = field.value.trim();
    if (value !== '') {
      field.removeAttribute('aria-invalid');
      return value;
    }
    field.setAttribute('aria-invalid', 'true');
    say(region, t('admin.reason_needed'));
    field.focus();
    return null;
  };
  return { element: labelled(id, t('admin.reason'), field, t('admin.reason_hint')), field, read };
}

/** A button that runs `work` while busy, its errors said in `region`. @param {string} text @param {HTMLElement} region @param {(button: HTMLButtonElement) => Promise<void>} work */
export function actionButton(text, region, work, attributes = {}) {
  const button = /** @type {HTMLButtonElement} */ (h('button', { type: 'button', ...attributes, text }));
  button.addEventListener('click', async () => {
    say(region, '');
    await busy(button, () => work(button));
  });
  return button;
}

/**
 * {@link actionButton} for an action that needs a reason: with the reason
 * field empty it says so there and does nothing.
 *
 * @param {string} text
 * @param {{read: (region: HTMLElement) => string | null}} reason
 * @param {HTMLElement} region
 * @param {(why: string) => Promise<void>} work
 */
export function reasonedButton(text, reason, region, work, attributes = {}) {
  return actionButton(
    text,
    region,
    async () => {
      const why = reason.read(region);
      if (why !== null) await work(why);
    },
    attributes,
  );
}

/**
 * The accessible name of a row's button: its visible words, then what it
 * acts on ("Remove: Desk key"), so a screen reader tells the rows apart and
 * a voice command of the words on screen still finds it.
 *
 * @param {string} key the message of the button's words
 * @param {string} thing
 */
export function named(key, thing) {
  return t('admin.named', { action: t(key), thing });
}

/** @param {string} id */
export function alertRegion(id) {
  return h('p', { id, class: 'form-error', role: 'alert' });
}

/** The region that says what an action of the view did; a view has one. @param {string} id */
export function statusRegion(id) {
  return h('p', { id, class: 'status', role: 'status', 'aria-live': 'polite', 'data-done': '' });
}

/** Says what an action did in the view's region, found anew: the action may have drawn the view again. @param {string} text */
export function sayDone(text) {
  const region = view.querySelector('[data-done]');
  if (region instanceof HTMLElement) say(region, text);
}

/** A value shown once (a client secret, an API key), with a copy button. @param {string} label @param {string} value */
export function shownOnce(label, value) {
  const output = h('code', { class: 'secret mono', text: value });
  return h(
    'div',
    { class: 'shown-once', role: 'group', 'aria-label': label },
    h('p', { text: label }),
    output,
    h('p', { class: 'hint', text: t('admin.shown_once') }),
    h('button', { type: 'button', class: 'secondary', text: t('admin.copy'), onclick: () => void copyText(value, output) }),
  );
}

/** How the console stands now (GET /api/admin/session). */
export function currentSession() {
  return session;
}

/** What opens a view: set by the page (admin.js), used by a view that moves to another. @type {(path: string) => void} */
let opener = () => {};

/** @param {(path: string) => void} open */
export function setOpener(open) {
  opener = open;
}

/** Opens the view at `path` under the console. @param {string} path */
export function navigate(path) {
  opener(path);
}
