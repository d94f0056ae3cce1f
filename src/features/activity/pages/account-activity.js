/**
 * The account page's "Where you are signed in" and "Recent activity"
 * sections: the browsers signed in to the account (docs/protocol.md §3
 * "Devices"), each signed out on its own or all the others at once after a
 * step-up, and what happened to the account in words, a page at a time
 * (§6 "Activity").
 */
import { api, busy, byId, describeError, focusHeading, formatDateTime, formatList, h, onBusyClick, say, t } from './common.js';

/** Events asked for at a time. */
const ACTIVITY_PAGE = 20;

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

/**
 * A device label as the host stores it ("Chrome 156 on Linux (mobile)",
 * docs/protocol.md §3 "Devices") in the page's language; a label of another
 * shape as it is.
 *
 * @param {string} label
 */
function deviceText(label) {
  const parts = /^(.+?)(?: on (.+?))?(?: \((mobile|tablet)\))?$/.exec(label);
  if (parts === null) return label;
  const browser = parts[1] === 'A browser' ? t('device.some_browser') : String(parts[1]);
  const device = parts[2] === undefined ? browser : t('device.on', { browser, os: parts[2] });
  if (parts[3] === 'mobile') return t('device.mobile', { device });
  return parts[3] === 'tablet' ? t('device.tablet', { device }) : device;
}

/** One sentence per event kind (docs/protocol.md §6 "Activity"). @param {ActivityEvent} event */
function describeEvent(event) {
  const d = event.detail || {};
  const device = typeof d.device === 'string' && d.device !== '' ? deviceText(d.device) : null;
  const where = [device, d.network ? t('account.network', { network: String(d.network) }) : null].filter(Boolean).join(', ');
  /** @param {unknown} value */
  const name = (value) => (typeof value === 'string' ? value : '');
  /** @param {unknown} value */
  const method = (value) => (value === 'key' ? t('method.key') : describeMethod(value));
  // A missing name leaves no gap behind.
  /**
   * @param {string} key
   * @param {Record<string, string | number>} [values]
   */
  const said = (key, values) =>
    t(key, values)
      .replace(/\s{2,}/g, ' ')
      .trim();
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
      return d.merged_from
        ? said('event.merged_from', { account: String(d.merged_from) })
        : said('event.merged_into', { account: name(d.merged_into) });
    case 'account_edited':
      return Array.isArray(d.fields)
        ? said('event.edited', {
            fields: formatList(
              d.fields.map((field) => (Object.hasOwn(FIELDS, field) ? t(FIELDS[field]) : String(field).replace('_', ' '))),
            ),
          })
        : said('event.edited_account');
    case 'key_added':
      return said('event.key_added', { passkey: d.sign_in ? 'yes' : 'no', name: name(d.label) });
    case 'key_removed':
      return d.by === 'operator'
        ? said('event.key_removed_operator', { name: name(d.label) })
        : said('event.key_removed', { name: name(d.label) });
    case 'sessions_revoked':
      if (d.scope === 'all') return said('event.revoked_all', { count: Number(d.count) || 0 });
      if (d.scope === 'others') return said('event.revoked_others', { count: Number(d.count) || 0 });
      return d.by === 'operator' ? said('event.revoked_one_operator') : said('event.revoked_one');
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
      return name(d.reason) ? said('event.disabled_reason', { reason: name(d.reason) }) : said('event.disabled');
    case 'account_enabled':
      return name(d.reason) ? said('event.enabled_reason', { reason: name(d.reason) }) : said('event.enabled');
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
      h(
        'span',
        { class: 'item-title' },
        describeEvent(event),
        failed ? ' ' : null,
        failed ? h('span', { class: 'badge', text: t('account.failed') }) : null,
      ),
      h('span', { class: 'item-sub', text: formatDateTime(event.at) }),
    ),
  );
}

/**
 * Wires both sections; the account page loads them with the rest.
 *
 * @param {object} page what the account page lends them
 * @param {(result: import('./common.js').ApiResult) => boolean} page.sessionLost
 * @param {import('./account.js').WithStepUp} page.withStepUp
 * @param {import('./account.js').SteppedUp} page.steppedUp
 * @param {(button: HTMLButtonElement) => Promise<void>} page.signOutHere signs this browser out, as the page's own button does
 */
export function setUpActivity({ sessionLost, withStepUp, steppedUp, signOutHere }) {
  const pageStatus = byId('page-status');
  /** @type {string | null} */
  let activityNext = null;

  /**
   * GETs what a section shows. Null when the session is gone, or when an
   * older host has no such route: the section is then left out.
   *
   * @param {HTMLElement} section
   * @param {string} path
   */
  async function fetchFor(section, path) {
    const answer = await api('GET', path);
    if (sessionLost(answer)) return null;
    section.hidden = answer.status === 404;
    return section.hidden ? null : answer;
  }

  async function loadDevices() {
    const answer = await fetchFor(byId('devices-section'), '/api/auth/sessions');
    if (answer === null) return;
    if (!answer.ok) {
      byId('devices').replaceChildren();
      say(byId('devices-error'), describeError(answer));
      return;
    }
    /** @type {Device[]} */
    const sessions = Array.isArray(answer.body.sessions) ? answer.body.sessions : [];
    byId('devices').replaceChildren(
      ...sessions.map((session) => {
        const title = session.device ? deviceText(session.device) : t('account.unknown_browser');
        const facts = [
          t('account.device_signed_in', { date: formatDateTime(session.created_at), method: describeMethod(session.signing_method) }),
          t('account.device_seen', { date: formatDateTime(session.last_seen_at) }),
        ];
        if (session.network) facts.push(t('account.network', { network: session.network }));
        const heading = h(
          'span',
          { class: 'item-title' },
          title,
          session.current ? ' ' : null,
          session.current ? h('span', { class: 'badge', text: t('account.this_browser') }) : null,
        );
        const button = h('button', {
          type: 'button',
          class: session.current ? 'secondary' : 'danger',
          'aria-label': session.current
            ? t('account.sign_out_this_browser', { name: title })
            : t('account.sign_out_named', { name: title }),
          text: t('account.signout_title'),
        });
        button.addEventListener('click', () => signOutDevice(session, title, button));
        return h(
          'li',
          { 'data-session': session.id },
          h('div', { class: 'item-main' }, heading, h('span', { class: 'item-sub', text: facts.join(' · ') })),
          button,
        );
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
      await signOutHere(button);
      return;
    }
    await busy(button, async () => {
      const removed = await withStepUp(
        () => api('DELETE', `/api/auth/sessions/${encodeURIComponent(session.id)}`),
        t('action.sign_out_device', { name: title }),
        () => say(pageStatus, t('account.no_browser_signed_out')),
      );
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

  onBusyClick(/** @type {HTMLButtonElement} */ (byId('devices-others')), byId('devices-error'), async (error) => {
    const revoked = await steppedUp(error, () => api('POST', '/api/auth/sessions/revoke-others'), {
      action: t('action.sign_out_others'),
      cancelled: t('account.no_browser_signed_out'),
    });
    if (revoked === null) return;
    await loadDevices();
    void loadActivity();
    const count = Number(revoked.body.revoked) || 0;
    say(pageStatus, t('account.others_signed_out', { count }));
    focusHeading('devices-title');
  });

  /** Shows the newest events, or with `more` the page after those shown. */
  async function loadActivity(more = false) {
    const query = new URLSearchParams({ limit: String(ACTIVITY_PAGE) });
    if (more && activityNext) query.set('before', activityNext);
    const answer = await fetchFor(byId('activity-section'), `/api/auth/activity?${query}`);
    if (answer === null) return;
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

  byId('activity-more').addEventListener('click', (event) =>
    busy(/** @type {HTMLButtonElement} */ (event.currentTarget), () => loadActivity(true)),
  );

  return { loadDevices, loadActivity };
}
