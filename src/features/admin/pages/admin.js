/**
 * The operators' console (ADMIN_PATH, docs/operations.md "The console"): one
 * page whose views are paths under the console's own (`/admin` the
 * dashboard, `/admin/people`,
 * `/admin/people/<did:oc>`, `/admin/apps`, `/admin/apps/<app id>`,
 * `/admin/service`, `/admin/audit`), so a link, a reload and the browser's
 * back button keep the view. Every view reads and acts through the admin API
 * (docs/api.md "Admin") with the session cookie; the service lets it in
 * with a security-key or passkey step-up younger than 10 minutes, and one
 * younger than a minute for a destructive action, so the console asks for
 * the key when it starts, when the step-up has gone stale (401
 * `step_up_required`), and again just before a destructive action. Every
 * action carries the operator's reason, which the audit log keeps.
 */
import { api, busy, byId, copyText, describeError, formatDateTime, formatTime, h, say, t } from './common.js';
import { startAccountMenu } from './account-menu.js';
import { browserErrorText, describeKeyError, getAssertion, webauthnSupported } from './passkeys.js';

const base = document.body.dataset.console || '/admin';
const main = byId('main');
const pageStatus = byId('page-status');
const pageError = byId('page-error');
const consoleRoot = byId('console');
const view = byId('view');
const stepUpCard = byId('step-up');
const stepUpError = byId('step-up-error');
const freshUntil = byId('fresh-until');

/**
 * The message key of each value the API answers in words of its own: the
 * keys are written out, as every key a page uses must be (its catalog is
 * read off the quoted keys of its modules).
 */
const WORDS = {
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
function word(words, value) {
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
function describe(result) {
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
function stillAhead(iso) {
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
async function loadSession() {
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

function showFreshness() {
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
function askForKey(why) {
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
async function call(method, path, body, how = {}) {
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
function card(id, title, ...children) {
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
function table(caption, heads, rows, empty = t('admin.none')) {
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
function when(iso) {
  return iso ? formatDateTime(iso) : '—';
}

/** A link to another view of the console. @param {string} path under the console @param {string} text */
function viewLink(path, text, attributes = {}) {
  return h('a', { href: `${base}${path}`, 'data-nav': '', ...attributes, text });
}

/** A field with its label (and hint). @param {string} id @param {string} label @param {HTMLElement} field @param {string} [hint] */
function labelled(id, label, field, hint) {
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
function reasonField(id) {
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
function actionButton(text, region, work, attributes = {}) {
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
function reasonedButton(text, reason, region, work, attributes = {}) {
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
function named(key, thing) {
  return t('admin.named', { action: t(key), thing });
}

/** @param {string} id */
function alertRegion(id) {
  return h('p', { id, class: 'form-error', role: 'alert' });
}

/** The region that says what an action of the view did; a view has one. @param {string} id */
function statusRegion(id) {
  return h('p', { id, class: 'status', role: 'status', 'aria-live': 'polite', 'data-done': '' });
}

/** Says what an action did in the view's region, found anew: the action may have drawn the view again. @param {string} text */
function sayDone(text) {
  const region = view.querySelector('[data-done]');
  if (region instanceof HTMLElement) say(region, text);
}

/** A value shown once (a client secret, an API key), with a copy button. @param {string} label @param {string} value */
function shownOnce(label, value) {
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

// ---- The dashboard ----

/** A way in as people say it: a Bitcoin wallet, an e-mail code, a passkey, or the provider's name. @param {string} way */
function wayName(way) {
  return way.startsWith('oauth:') ? way.slice('oauth:'.length) : word(WORDS.way, way);
}

/** The dashboard: the last 14 days of sign-ins, refusals, OpenID sign-ins, check and verify, and the sessions live now. */
async function dashboardView() {
  const result = await call('GET', '/api/admin/dashboard?days=14');
  if (!result.ok) {
    view.replaceChildren(
      card('dashboard', t('admin.nav_dashboard'), h('p', { class: 'form-error', role: 'alert', text: describe(result) })),
    );
    return;
  }
  const { days, active_sessions: active, clients } = result.body;
  /** @param {Record<string, number>} counts */
  const total = (counts) => Object.values(counts).reduce((sum, count) => sum + count, 0);
  /** The names used on any day of `pick`, sorted. @param {(day: any) => Record<string, number>} pick */
  const namesOf = (pick) => [...new Set(days.flatMap((/** @type {any} */ day) => Object.keys(pick(day))))].sort();
  const recent = [...days].reverse();
  const ways = namesOf((day) => day.signins);
  const signins = table(
    t('admin.signins_per_day'),
    [t('admin.col_day'), ...ways.map(wayName), t('admin.col_total'), t('admin.col_new_accounts')],
    recent.map((/** @type {any} */ day) => [
      day.day,
      ...ways.map((way) => String(day.signins[way] ?? 0)),
      String(total(day.signins)),
      String(day.new_accounts),
    ]),
  );
  const reasons = namesOf((day) => day.failures);
  const failures = table(
    t('admin.failures'),
    [t('admin.col_way_reason'), t('admin.col_last_14'), t('admin.col_today')],
    reasons.map((reason) => [
      h('span', {}, `${wayName(reason.split(' ')[0] ?? '')}: `, h('code', { text: reason.split(' ')[1] ?? '' })),
      String(days.reduce((/** @type {number} */ sum, /** @type {any} */ day) => sum + (day.failures[reason] ?? 0), 0)),
      String(days.at(-1)?.failures[reason] ?? 0),
    ]),
    t('admin.no_failures'),
  );
  const oidc = table(
    t('admin.oidc_per_client'),
    [t('admin.col_app'), t('admin.col_last_14'), t('admin.col_today'), t('admin.col_consents')],
    clients.map((/** @type {any} */ client) => [
      client.name,
      String(days.reduce((/** @type {number} */ sum, /** @type {any} */ day) => sum + (day.oidc[client.client_id] ?? 0), 0)),
      String(days.at(-1)?.oidc[client.client_id] ?? 0),
      String(client.consents),
    ]),
  );
  // Each app's sign-ins per day: the apps that signed anyone in over these days, as columns.
  const signedIn = clients.filter((/** @type {any} */ client) =>
    days.some((/** @type {any} */ day) => (day.oidc[client.client_id] ?? 0) > 0),
  );
  const oidcDays =
    signedIn.length === 0
      ? null
      : table(
          t('admin.oidc_per_day'),
          [t('admin.col_day'), ...signedIn.map((/** @type {any} */ client) => client.name)],
          recent.map((/** @type {any} */ day) => [
            day.day,
            ...signedIn.map((/** @type {any} */ client) => String(day.oidc[client.client_id] ?? 0)),
          ]),
        );
  /** @param {number} hit @param {number} miss */
  const ratio = (hit, miss) => (hit + miss === 0 ? '—' : t('admin.percent', { value: Math.round((hit / (hit + miss)) * 100) }));
  const attestations = table(
    t('admin.attestations'),
    [t('admin.col_day'), t('admin.col_check'), t('admin.col_cache_hits'), t('admin.col_verify'), t('admin.col_verify_refused')],
    recent.map((/** @type {any} */ day) => [
      day.day,
      String(day.check.hit + day.check.miss),
      ratio(day.check.hit, day.check.miss),
      String(day.verify.ok + day.verify.refused),
      String(day.verify.refused),
    ]),
  );
  view.replaceChildren(
    card(
      'dashboard',
      t('admin.nav_dashboard'),
      h('p', { id: 'active-sessions', text: t('admin.active_sessions', { count: active }) }),
      h('p', { class: 'hint', text: t('admin.dashboard_hint') }),
    ),
    card('dashboard-signins', t('admin.signins_per_day'), signins),
    card('dashboard-failures', t('admin.failures'), failures),
    card(
      'dashboard-oidc',
      t('admin.oidc_per_client'),
      oidc,
      oidcDays === null ? null : h('h3', { text: t('admin.oidc_per_day') }),
      oidcDays,
    ),
    card('dashboard-attestations', t('admin.attestations'), attestations),
  );
}

// ---- People ----

/** @param {URLSearchParams} query */
async function peopleView(query) {
  const q = query.get('q') ?? '';
  const field = /** @type {HTMLInputElement} */ (
    h('input', { type: 'search', name: 'q', value: q, maxlength: '200', autocomplete: 'off' })
  );
  const error = alertRegion('people-error');
  const results = h('div', { id: 'people-results' });
  const form = h(
    'form',
    { id: 'people-form', role: 'search', novalidate: true },
    labelled('people-q', t('admin.people_search'), field, t('admin.people_hint')),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: t('admin.search') })),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = field.value.trim();
    if (text === '') {
      say(error, t('admin.people_empty_query'));
      field.focus();
      return;
    }
    navigate(`/people?${new URLSearchParams({ q: text })}`);
  });
  view.replaceChildren(card('people', t('admin.nav_people'), form, error, results));
  if (q === '') return;

  /** @type {any[]} */
  const found = [];
  /** @param {string | null} after */
  const page = async (after) => {
    const params = new URLSearchParams({ q });
    if (after) params.set('after', after);
    const result = await call('GET', `/api/admin/accounts?${params}`);
    if (!result.ok) {
      say(error, describe(result));
      return;
    }
    found.push(...result.body.people);
    const rows = found.map((person) => [
      viewLink(`/people/${person.did_oc}`, person.display_name || person.matched?.value || person.did_oc),
      person.matched ? person.matched.value : person.did_oc,
      word(WORDS.status, person.status),
      when(person.created_at),
    ]);
    const more = result.body.next
      ? actionButton(t('admin.more'), error, () => page(result.body.next), { class: 'secondary', id: 'people-more' })
      : null;
    results.replaceChildren(
      h('p', { id: 'people-count', role: 'status', text: t('admin.people_found', { count: found.length }) }),
      table(
        t('admin.people_caption', { query: q }),
        [t('admin.col_account'), t('admin.col_matched'), t('admin.col_status'), t('admin.col_created')],
        rows,
      ),
      more ?? '',
    );
  };
  await page(null);
}

/** @param {string} did */
async function personView(did) {
  const result = await call('GET', `/api/admin/accounts/${encodeURIComponent(did)}`);
  if (!result.ok) {
    view.replaceChildren(card('person', t('admin.person_title'), h('p', { class: 'form-error', role: 'alert', text: describe(result) })));
    return;
  }
  const person = result.body.account;
  const error = alertRegion('person-error');
  const done = statusRegion('person-done');
  const reason = reasonField('person-reason');
  const refresh = () => personView(did);
  const path = `/api/admin/accounts/${encodeURIComponent(did)}`;

  const identities = table(
    t('admin.identities'),
    [t('admin.col_kind'), t('admin.col_value'), t('admin.col_added')],
    person.identities.map((/** @type {any} */ identity) => [
      identity.kind,
      h('span', { class: 'mono', text: identity.value }),
      when(identity.created_at),
    ]),
  );
  const keys = table(
    t('admin.keys'),
    [t('admin.col_label'), t('admin.col_last_used'), t('admin.col_action')],
    person.keys.map((/** @type {any} */ key) => [
      key.label,
      when(key.last_used_at),
      reasonedButton(
        t('admin.remove_key'),
        reason,
        error,
        async (why) => {
          const removed = await call(
            'POST',
            `${path}/keys/${encodeURIComponent(key.id)}/remove`,
            { reason: why },
            { destructive: true, region: error },
          );
          if (!removed.ok) return say(error, describe(removed));
          await refresh();
          sayDone(t('admin.key_removed', { label: key.label }));
        },
        { class: 'danger small', 'aria-label': named('admin.remove_key', key.label) },
      ),
    ]),
  );
  const signOut = async (/** @type {string | null} */ sessionId) => {
    const why = reason.read(error);
    if (why === null) return;
    const body = sessionId === null ? { reason: why } : { reason: why, session: sessionId };
    const revoked = await call('POST', `${path}/sessions/revoke`, body);
    if (!revoked.ok) return say(error, describe(revoked));
    await refresh();
    sayDone(t('admin.signed_out', { count: revoked.body.revoked_sessions }));
  };
  const sessions = table(
    t('admin.sessions'),
    [t('admin.col_device'), t('admin.col_network'), t('admin.col_last_seen'), t('admin.col_action')],
    person.sessions.map((/** @type {any} */ row) => [
      row.device || t('admin.unknown_device'),
      row.network || '—',
      when(row.last_seen_at),
      actionButton(t('admin.sign_out'), error, () => signOut(row.id), {
        class: 'secondary small',
        'aria-label': named('admin.sign_out', row.device || t('admin.unknown_device')),
      }),
    ]),
  );
  const disabled = person.status === 'disabled';
  const live = person.status === 'active' || disabled;
  const hold = reasonedButton(
    disabled ? t('admin.enable') : t('admin.disable'),
    reason,
    error,
    async (why) => {
      const changed = await call('POST', `${path}/${disabled ? 'enable' : 'disable'}`, { reason: why });
      if (!changed.ok) return say(error, describe(changed));
      await refresh();
      sayDone(disabled ? t('admin.enabled') : t('admin.disabled_now', { count: changed.body.revoked_sessions }));
    },
    { id: 'person-hold', class: disabled ? '' : 'danger' },
  );

  const confirmField = /** @type {HTMLInputElement} */ (h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' }));
  const remove = reasonedButton(
    t('admin.delete'),
    reason,
    error,
    async (why) => {
      if (confirmField.value.trim() !== person.did_oc) {
        confirmField.setAttribute('aria-invalid', 'true');
        say(error, t('admin.delete_confirm_mismatch'));
        confirmField.focus();
        return;
      }
      const deleted = await call('POST', `${path}/delete`, { confirm: person.did_oc, reason: why }, { destructive: true, region: error });
      if (!deleted.ok) return say(error, describe(deleted));
      await refresh();
      sayDone(t('admin.deleted'));
    },
    { id: 'person-delete', class: 'danger' },
  );

  const facts = h(
    'dl',
    { class: 'facts' },
    fact(t('admin.col_status'), h('span', { id: 'person-status', text: word(WORDS.status, person.status) })),
    fact(t('admin.display_name'), person.display_name || '—'),
    fact('did:oc', h('code', { id: 'person-did', text: person.did_oc })),
    fact(t('admin.col_created'), when(person.created_at)),
    person.disabled_at ? fact(t('admin.disabled_at'), when(person.disabled_at)) : null,
  );
  const activity = table(
    t('admin.activity'),
    [t('admin.col_event'), t('admin.col_when')],
    person.activity.map((/** @type {any} */ event) => [h('code', { text: event.kind }), when(event.at)]),
  );
  view.replaceChildren(
    h('p', {}, viewLink('/people', t('admin.back_to_people'))),
    card('person', knownAs(person), facts, done, error),
    card(
      'person-actions',
      t('admin.actions'),
      reason.element,
      live
        ? h(
            'div',
            { class: 'actions' },
            hold,
            person.sessions.length > 0 ? actionButton(t('admin.sign_out_all'), error, () => signOut(null), { class: 'secondary' }) : null,
            h('a', { class: 'button secondary', href: `${path}/export`, download: '', id: 'person-export', text: t('admin.export') }),
          )
        : null,
      live
        ? h(
            'div',
            { class: 'danger-zone' },
            h('h3', { text: t('admin.delete_title') }),
            h('p', { class: 'hint', text: t('admin.delete_hint') }),
            labelled('person-confirm', t('admin.delete_confirm', { did: person.did_oc }), confirmField),
            h('div', { class: 'actions' }, remove),
          )
        : null,
    ),
    card('person-identities', t('admin.identities'), identities),
    card('person-keys', t('admin.keys'), keys),
    card('person-sessions', t('admin.sessions'), sessions),
    card(
      'person-apps',
      t('admin.apps_of_person'),
      h('h3', { text: t('admin.signed_in_apps') }),
      table(
        t('admin.signed_in_apps'),
        [t('admin.col_app')],
        person.signed_in_apps.map((/** @type {any} */ app) => [app.name]),
      ),
      h('h3', { text: t('admin.owned_apps') }),
      table(
        t('admin.owned_apps'),
        [t('admin.col_app')],
        person.connect_apps.map((/** @type {any} */ app) => [viewLink(`/apps/${app.id}`, app.name)]),
      ),
    ),
    card('person-attestation', t('admin.attestation'), attestationOf(person)),
    card('person-activity', t('admin.activity'), activity),
  );
}

/**
 * The account's OrangeCheck attestation: for each of its Bitcoin addresses, a
 * button that asks the public `GET /api/check` (the chain and the relays are
 * asked only when the operator wants it).
 *
 * @param {any} person
 */
function attestationOf(person) {
  const addresses = /** @type {Array<{kind: string, value: string}>} */ (person.identities).filter((one) => one.kind === 'btc');
  if (addresses.length === 0) return h('p', { class: 'hint', text: t('admin.attestation_none') });
  return h(
    'ul',
    { class: 'item-list' },
    ...addresses.map(({ value }) => {
      const answer = statusRegion(`attestation-${value}`);
      const look = actionButton(
        t('admin.attestation_look'),
        answer,
        async () => {
          const result = await api('GET', `/api/check?${new URLSearchParams({ addr: value })}`);
          if (result.ok && result.body.ok) {
            say(answer, t('admin.attestation_found', { sats: result.body.sats, days: result.body.days, score: result.body.score }));
          } else if (result.status === 404) say(answer, t('admin.attestation_missing'));
          else
            say(
              answer,
              t('admin.attestation_failed', { reason: (result.body?.reasons ?? result.body?.codes ?? [result.code]).join(', ') }),
            );
        },
        { class: 'secondary small', 'aria-label': named('admin.attestation_look', value) },
      );
      return h('li', {}, h('span', { class: 'mono small', text: value }), ' ', look, answer);
    }),
  );
}

/**
 * The name an account is known by: its display name, else its first e-mail
 * address, else its first Bitcoin address, else its did:oc.
 *
 * @param {any} person
 */
function knownAs(person) {
  if (person.display_name) return person.display_name;
  const identities = /** @type {Array<{kind: string, value: string}>} */ (person.identities);
  return (identities.find((one) => one.kind === 'email') ?? identities.find((one) => one.kind === 'btc'))?.value ?? person.did_oc;
}

/** @param {string} term @param {Node | string} value */
function fact(term, value) {
  return h('div', {}, h('dt', { text: term }), h('dd', {}, value));
}

// ---- Apps ----

async function appsView() {
  const error = alertRegion('apps-error');
  const [clients, apps] = await Promise.all([call('GET', '/api/admin/clients'), call('GET', '/api/admin/apps')]);
  if (!clients.ok || !apps.ok) {
    view.replaceChildren(
      card('apps', t('admin.nav_apps'), h('p', { class: 'form-error', role: 'alert', text: describe(clients.ok ? apps : clients) })),
    );
    return;
  }
  const reason = reasonField('apps-reason');
  const done = statusRegion('apps-done');
  const revealed = h('div', { id: 'apps-revealed', 'data-revealed': '' });
  const editor = h('div', { id: 'client-edit' });
  const clientRows = clients.body.clients.map((/** @type {any} */ client) => {
    const name = client.metadata.client_name || client.client_id;
    const path = `/api/admin/clients/${encodeURIComponent(client.client_id)}`;
    const confidential = client.metadata.token_endpoint_auth_method !== 'none';
    return [
      h('span', {}, h('strong', { text: name }), h('br'), h('code', { class: 'small', text: client.client_id })),
      (client.metadata.redirect_uris || []).join(' '),
      client.owner_app_id ? viewLink(`/apps/${client.owner_app_id}`, t('admin.connect_app')) : t('admin.operator_owned'),
      client.first_party ? t('admin.yes') : t('admin.no'),
      client.disabled_at ? h('span', { class: 'state-bad', text: t('admin.client_held') }) : t('admin.status_active'),
      h(
        'div',
        { class: 'row-actions' },
        actionButton(t('admin.edit'), error, async () => showClientEdit(client, editor, error), {
          class: 'secondary small',
          'aria-label': named('admin.edit', name),
          'aria-controls': 'client-edit',
        }),
        actionButton(
          client.disabled_at ? t('admin.client_enable') : t('admin.client_disable'),
          error,
          async () => {
            const why = client.disabled_at ? reason.field.value.trim() : reason.read(error);
            if (why === null) return;
            const body = why === '' ? {} : { reason: why };
            const changed = await call('POST', `${path}/${client.disabled_at ? 'enable' : 'disable'}`, body);
            if (!changed.ok) return say(error, describe(changed));
            await appsView();
            sayDone(client.disabled_at ? t('admin.client_enabled_now', { name }) : t('admin.client_disabled_now', { name }));
          },
          {
            class: 'secondary small',
            'aria-label': named(client.disabled_at ? 'admin.client_enable' : 'admin.client_disable', name),
          },
        ),
        confidential
          ? reasonedButton(
              t('admin.rotate_secret'),
              reason,
              error,
              async (why) => {
                const rotated = await call('POST', `${path}/rotate`, { reason: why }, { destructive: true, region: error });
                if (!rotated.ok) return say(error, describe(rotated));
                revealed.replaceChildren(shownOnce(t('admin.new_secret', { name }), rotated.body.client.client_secret));
                say(done, t('admin.secret_rotated', { name }));
              },
              { class: 'secondary small', 'aria-label': named('admin.rotate_secret', name) },
            )
          : null,
        actionButton(
          client.first_party ? t('admin.first_party_off') : t('admin.first_party_on'),
          error,
          async () => {
            const changed = await call('POST', `${path}/first-party`, { first_party: !client.first_party });
            if (!changed.ok) return say(error, describe(changed));
            await appsView();
          },
          {
            class: 'secondary small',
            'aria-label': named(client.first_party ? 'admin.first_party_off' : 'admin.first_party_on', name),
          },
        ),
        reasonedButton(
          t('admin.delete'),
          reason,
          error,
          async (why) => {
            const removed = await call('POST', `${path}/delete`, { reason: why }, { destructive: true, region: error });
            if (!removed.ok) return say(error, describe(removed));
            await appsView();
            sayDone(t('admin.client_deleted', { name }));
          },
          { class: 'danger small', 'aria-label': named('admin.delete', name) },
        ),
      ),
    ];
  });
  const appRows = apps.body.apps.map((/** @type {any} */ app) => [
    viewLink(`/apps/${app.id}`, app.name),
    viewLink(`/people/${app.owner}`, app.owner, { class: 'mono small' }),
    app.webhook_url ? h('span', { class: 'mono small', text: app.webhook_url }) : '—',
    reasonedButton(
      t('admin.rotate_api_key'),
      reason,
      error,
      async (why) => {
        const rotated = await call(
          'POST',
          `/api/admin/apps/${encodeURIComponent(app.id)}/rotate-key`,
          { reason: why },
          { destructive: true, region: error },
        );
        if (!rotated.ok) return say(error, describe(rotated));
        revealed.replaceChildren(shownOnce(t('admin.new_api_key', { name: app.name }), rotated.body.api_key));
        say(done, t('admin.api_key_rotated', { name: app.name }));
      },
      { class: 'secondary small', 'aria-label': named('admin.rotate_api_key', app.name) },
    ),
  ]);
  view.replaceChildren(
    card('apps', t('admin.nav_apps'), reason.element, done, error, revealed),
    card(
      'clients',
      t('admin.clients'),
      table(
        t('admin.clients'),
        [
          t('admin.col_app'),
          t('admin.col_redirects'),
          t('admin.col_owner'),
          t('admin.col_first_party'),
          t('admin.col_status'),
          t('admin.col_action'),
        ],
        clientRows,
      ),
      editor,
      createClientForm(),
    ),
    card(
      'connect-apps',
      t('admin.connect_apps'),
      table(t('admin.connect_apps'), [t('admin.col_app'), t('admin.col_owner'), t('admin.col_webhook'), t('admin.col_action')], appRows),
    ),
  );
}

/**
 * The form that changes a client's name, redirect addresses, logo and
 * back-channel logout address, in `holder` under the table; an emptied
 * address is removed.
 *
 * @param {any} client
 * @param {HTMLElement} holder
 * @param {HTMLElement} error
 */
function showClientEdit(client, holder, error) {
  const meta = client.metadata;
  const name = /** @type {HTMLInputElement} */ (
    h('input', { type: 'text', maxlength: '100', value: meta.client_name ?? '', autocomplete: 'off' })
  );
  const uris = /** @type {HTMLTextAreaElement} */ (h('textarea', { rows: '2', spellcheck: 'false' }));
  uris.value = (meta.redirect_uris ?? []).join('\n');
  const logo = /** @type {HTMLInputElement} */ (h('input', { type: 'url', value: meta.logo_uri ?? '', autocomplete: 'off' }));
  const logout = /** @type {HTMLInputElement} */ (
    h('input', { type: 'url', value: meta.backchannel_logout_uri ?? '', autocomplete: 'off' })
  );
  const title = t('admin.edit_client', { name: meta.client_name || client.client_id });
  const submit = /** @type {HTMLButtonElement} */ (h('button', { type: 'submit', text: t('admin.save') }));
  const form = h(
    'form',
    { id: 'client-edit-form', novalidate: true, class: 'disclosed', 'aria-label': title },
    h('h3', { id: 'client-edit-title', tabindex: '-1', text: title }),
    labelled('edit-name', t('admin.client_name'), name),
    labelled('edit-uris', t('admin.client_redirects'), uris, t('admin.client_redirects_hint')),
    labelled('edit-logo', t('admin.client_logo'), logo),
    labelled('edit-logout', t('admin.client_backchannel'), logout, t('admin.client_backchannel_hint')),
    h(
      'div',
      { class: 'actions' },
      submit,
      h('button', { type: 'button', class: 'link', text: t('admin.cancel'), onclick: () => holder.replaceChildren() }),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    /** @param {HTMLInputElement} field */
    const uriOrNull = (field) => (field.value.trim() === '' ? null : field.value.trim());
    const body = {
      client_name: name.value.trim(),
      redirect_uris: uris.value.split(/\s+/).filter(Boolean),
      logo_uri: uriOrNull(logo),
      backchannel_logout_uri: uriOrNull(logout),
    };
    await busy(submit, async () => {
      const saved = await call('POST', `/api/admin/clients/${encodeURIComponent(client.client_id)}/edit`, body);
      if (!saved.ok) return say(error, describe(saved));
      await appsView();
      sayDone(t('admin.client_saved', { name: body.client_name }));
    });
  });
  holder.replaceChildren(form);
  byId('client-edit-title').focus();
}

/** The form that registers one of the operator's own OpenID clients; its secret is shown once. */
function createClientForm() {
  const name = /** @type {HTMLInputElement} */ (h('input', { type: 'text', maxlength: '100', autocomplete: 'off' }));
  const uris = /** @type {HTMLTextAreaElement} */ (h('textarea', { rows: '2', spellcheck: 'false' }));
  const method = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      {},
      h('option', { value: 'client_secret_basic', text: t('admin.client_confidential') }),
      h('option', { value: 'none', text: t('admin.client_public') }),
    )
  );
  const firstParty = /** @type {HTMLInputElement} */ (h('input', { type: 'checkbox', id: 'client-first-party' }));
  const error = alertRegion('client-error');
  const submit = h('button', { type: 'submit', text: t('admin.create_client') });
  const form = h(
    'form',
    { id: 'client-form', novalidate: true, class: 'disclosed' },
    h('h3', { text: t('admin.create_client') }),
    labelled('client-name', t('admin.client_name'), name),
    labelled('client-uris', t('admin.client_redirects'), uris, t('admin.client_redirects_hint')),
    labelled('client-method', t('admin.client_kind'), method),
    h('div', { class: 'check' }, firstParty, h('label', { for: 'client-first-party', text: t('admin.client_first_party') })),
    h('div', { class: 'actions' }, submit),
    error,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    const redirects = uris.value.split(/\s+/).filter(Boolean);
    if (name.value.trim() === '' || redirects.length === 0) {
      say(error, t('admin.client_incomplete'));
      (name.value.trim() === '' ? name : uris).focus();
      return;
    }
    await busy(/** @type {HTMLButtonElement} */ (submit), async () => {
      const body = {
        client_name: name.value.trim(),
        redirect_uris: redirects,
        token_endpoint_auth_method: method.value,
        first_party: firstParty.checked,
      };
      const created = await call('POST', '/api/admin/clients', body);
      if (!created.ok) return say(error, describe(created));
      await appsView();
      const secret = created.body.client.client_secret;
      const shown = /** @type {HTMLElement} */ (view.querySelector('[data-revealed]'));
      shown.replaceChildren(
        h('p', { text: t('admin.client_created', { name: body.client_name, id: created.body.client.client_id }) }),
        secret ? shownOnce(t('admin.new_secret', { name: body.client_name }), secret) : '',
      );
      sayDone(t('admin.client_created', { name: body.client_name, id: created.body.client.client_id }));
    });
  });
  return form;
}

/** One Connect app's webhook deliveries, with "send again" for a failed one. @param {string} appId */
async function deliveriesView(appId) {
  const result = await call('GET', `/api/admin/apps/${encodeURIComponent(appId)}/deliveries`);
  const error = alertRegion('deliveries-error');
  const done = statusRegion('deliveries-done');
  if (!result.ok) {
    view.replaceChildren(card('deliveries', t('admin.deliveries'), h('p', { class: 'form-error', role: 'alert', text: describe(result) })));
    return;
  }
  const rows = result.body.deliveries.map((/** @type {any} */ delivery) => [
    h('code', { text: delivery.type }),
    word(WORDS.delivery, delivery.state),
    String(delivery.attempts),
    delivery.last_error ? h('span', { class: 'mono small', text: `${delivery.last_status ?? ''} ${delivery.last_error}`.trim() }) : '—',
    when(delivery.last_attempt_at ?? delivery.created_at),
    delivery.state === 'failed'
      ? actionButton(
          t('admin.resend'),
          error,
          async () => {
            const sent = await call(
              'POST',
              `/api/admin/apps/${encodeURIComponent(appId)}/deliveries/${encodeURIComponent(delivery.id)}/resend`,
              {},
            );
            if (!sent.ok) return say(error, describe(sent));
            await deliveriesView(appId);
            sayDone(t('admin.resent'));
          },
          { class: 'secondary small', 'aria-label': named('admin.resend', delivery.type) },
        )
      : '',
  ]);
  view.replaceChildren(
    h('p', {}, viewLink('/apps', t('admin.back_to_apps'))),
    card(
      'deliveries',
      t('admin.deliveries'),
      done,
      error,
      table(
        t('admin.deliveries'),
        [
          t('admin.col_event'),
          t('admin.col_status'),
          t('admin.col_attempts'),
          t('admin.col_last_error'),
          t('admin.col_when'),
          t('admin.col_action'),
        ],
        rows,
        t('admin.no_deliveries'),
      ),
    ),
  );
}

// ---- The service ----

async function serviceView() {
  const [health, keys, settings] = await Promise.all([
    call('GET', '/api/admin/health'),
    call('GET', '/api/admin/keys'),
    call('GET', '/api/admin/settings'),
  ]);
  const failed = [health, keys, settings].find((result) => !result.ok);
  if (failed) {
    view.replaceChildren(card('service', t('admin.nav_service'), h('p', { class: 'form-error', role: 'alert', text: describe(failed) })));
    return;
  }
  const error = alertRegion('keys-error');
  const done = statusRegion('keys-done');
  const reason = reasonField('keys-reason');
  const deps = [health.body.database, health.body.redis, ...health.body.esplora, ...health.body.relays, health.body.keys].filter(Boolean);
  const dependencyRows = deps.map((/** @type {any} */ dep) => [
    h('span', { class: 'mono small', text: dep.name }),
    h('span', { class: dep.ok ? 'state-ok' : 'state-bad', text: dep.ok ? t('admin.up') : t('admin.down') }),
    dep.ms === null ? '—' : t('admin.ms', { ms: dep.ms }),
    dep.error || '—',
  ]);
  const rotate = (/** @type {'session' | 'oidc' | 'webhook'} */ use) =>
    reasonedButton(
      t(WORDS.rotate[use]),
      reason,
      error,
      async (why) => {
        const rotated = await call('POST', `/api/admin/keys/${use}/rotate`, { reason: why }, { destructive: true, region: error });
        if (!rotated.ok) return say(error, describe(rotated));
        await serviceView();
        sayDone(t('admin.key_rotated'));
      },
      { class: 'secondary', id: `rotate-${use}` },
    );
  const keyRows = keys.body.keys.map((/** @type {any} */ key) => [
    word(WORDS.keyUse, key.use),
    h('code', { class: 'small', text: key.kid }),
    key.alg,
    word(WORDS.keyState, key.state),
    when(key.created_at),
  ]);
  const settingRows = settings.body.set.map((/** @type {any} */ setting) => [
    h('code', { text: setting.name }),
    setting.secret ? h('em', { text: t('admin.secret_hidden') }) : h('span', { class: 'mono small', text: setting.value }),
  ]);
  view.replaceChildren(
    card(
      'health',
      t('admin.health'),
      table(
        t('admin.health'),
        [t('admin.col_dependency'), t('admin.col_status'), t('admin.col_latency'), t('admin.col_last_error')],
        dependencyRows,
      ),
    ),
    card(
      'signing-keys',
      t('admin.signing_keys'),
      table(
        t('admin.signing_keys'),
        [t('admin.col_use'), t('admin.col_kid'), t('admin.col_alg'), t('admin.col_state'), t('admin.col_created')],
        keyRows,
      ),
      reason.element,
      h('div', { class: 'actions' }, rotate('session'), rotate('oidc'), rotate('webhook')),
      done,
      error,
    ),
    card(
      'settings',
      t('admin.settings'),
      table(t('admin.settings'), [t('admin.col_setting'), t('admin.col_value')], settingRows),
      h('p', { class: 'hint', text: t('admin.defaulted', { names: settings.body.defaulted.join(', ') }) }),
    ),
  );
}

// ---- The audit log ----

/** @param {URLSearchParams} query */
async function auditView(query) {
  const filters = ['actor', 'action', 'target'];
  const fields = Object.fromEntries(
    filters.map((name) => [
      name,
      /** @type {HTMLInputElement} */ (h('input', { type: 'text', name, value: query.get(name) ?? '', autocomplete: 'off' })),
    ]),
  );
  const error = alertRegion('audit-error');
  const results = h('div', { id: 'audit-results' });
  const oldestFirst = query.get('order') === 'oldest';
  const order = /** @type {HTMLSelectElement} */ (
    h(
      'select',
      { name: 'order' },
      h('option', { value: 'newest', text: t('admin.newest_first'), selected: !oldestFirst }),
      h('option', { value: 'oldest', text: t('admin.oldest_first'), selected: oldestFirst }),
    )
  );
  const form = h(
    'form',
    { id: 'audit-form', novalidate: true, class: 'filters' },
    ...filters.map((name) => labelled(`audit-${name}`, word(WORDS.filter, name), fields[name])),
    labelled('audit-order', t('admin.order'), order),
    h('div', { class: 'actions' }, h('button', { type: 'submit', text: t('admin.filter') })),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const params = new URLSearchParams();
    for (const name of filters) if (fields[name].value.trim() !== '') params.set(name, fields[name].value.trim());
    if (order.value === 'oldest') params.set('order', 'oldest');
    navigate(`/audit${params.size > 0 ? `?${params}` : ''}`);
  });
  const exportLink = h('a', {
    class: 'button secondary',
    href: '/api/admin/audit/export',
    download: 'audit.jsonl',
    id: 'audit-export',
    text: t('admin.audit_export'),
  });
  view.replaceChildren(card('audit', t('admin.nav_audit'), form, h('div', { class: 'actions' }, exportLink), error, results));

  /** @type {any[]} */
  const entries = [];
  /** @param {string | null} before */
  const page = async (before) => {
    const params = new URLSearchParams();
    for (const name of filters) if (query.get(name)) params.set(name, /** @type {string} */ (query.get(name)));
    if (oldestFirst) params.set('order', 'oldest');
    params.set('limit', '50');
    if (before) params.set('before', before);
    const result = await call('GET', `/api/admin/audit?${params}`);
    if (!result.ok) return say(error, describe(result));
    entries.push(...result.body.entries);
    const rows = entries.map((entry) => [
      when(entry.at),
      h('span', { class: 'mono small', text: entry.actor }),
      h('code', { text: entry.action }),
      entry.target ? h('span', { class: 'mono small', text: entry.target }) : '—',
      entry.reason || '—',
      `${entry.via}${entry.network ? ` · ${entry.network}` : ''}`,
    ]);
    const more = result.body.next
      ? actionButton(oldestFirst ? t('admin.more') : t('admin.older'), error, () => page(result.body.next), {
          class: 'secondary',
          id: 'audit-more',
        })
      : null;
    results.replaceChildren(
      table(
        t('admin.nav_audit'),
        [
          t('admin.col_when'),
          t('admin.col_actor'),
          t('admin.col_action_name'),
          t('admin.col_target'),
          t('admin.col_reason'),
          t('admin.col_via'),
        ],
        rows,
        t('admin.audit_empty'),
      ),
      more ?? '',
    );
  };
  await page(null);
}

// ---- routing ----

/** The view of the address: its name, what it names and the query. */
function route() {
  const rest = window.location.pathname.startsWith(base) ? window.location.pathname.slice(base.length) : '';
  const [name = 'dashboard', id = ''] = rest.split('/').filter(Boolean).map(decodeURIComponent);
  return { name, id, query: new URLSearchParams(window.location.search) };
}

async function render() {
  const { name, id, query } = route();
  for (const link of consoleRoot.querySelectorAll('.account-nav a')) {
    if (link.getAttribute('data-view') === name) link.setAttribute('aria-current', 'true');
    else link.removeAttribute('aria-current');
  }
  say(pageError, '');
  main.setAttribute('aria-busy', 'true');
  if (name === 'people' && id !== '') await personView(id);
  else if (name === 'apps' && id !== '') await deliveriesView(id);
  else if (name === 'apps') await appsView();
  else if (name === 'service') await serviceView();
  else if (name === 'audit') await auditView(query);
  else if (name === 'people') await peopleView(query);
  else await dashboardView();
  main.setAttribute('aria-busy', 'false');
  showFreshness();
  const first = view.querySelector('h2');
  if (first instanceof HTMLElement && navigated) first.focus();
}

/** Whether a view was opened by the operator (focus goes to its heading), not by the page's load. */
let navigated = false;

/** @param {string} path under the console */
function navigate(path) {
  history.pushState(null, '', `${base}${path}`);
  navigated = true;
  void render();
}

document.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('a[data-nav], .account-nav a') : null;
  if (!(link instanceof HTMLAnchorElement) || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return;
  event.preventDefault();
  navigate(link.pathname.slice(base.length) + link.search);
});

window.addEventListener('popstate', () => {
  navigated = true;
  void render();
});

async function start() {
  void startAccountMenu();
  if (!(await loadSession())) {
    say(pageStatus, '');
    main.setAttribute('aria-busy', 'false');
    return;
  }
  if (!stillAhead(session.step_up?.fresh_until)) await askForKey('');
  consoleRoot.hidden = false;
  say(pageStatus, '');
  await render();
}

void start();
