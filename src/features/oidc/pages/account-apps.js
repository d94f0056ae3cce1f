/**
 * The account page's "Apps you signed in to" (docs/protocol.md §8
 * "Consent"): the apps the active account allowed to sign it in through the
 * OpenID provider (GET /api/auth/apps), what each can see and when it was
 * allowed, and removing one's access (DELETE /api/auth/apps/<client_id>),
 * after which its tokens stop and its next sign-in asks again.
 *
 * An app's logo lives on the app's own server, which the page's policy
 * does not load images from: each app shows the first letter of its name.
 */
import { api, busy, byId, describeError, focusHeading, formatDate, formatList, h, initialOf, say, t } from './common.js';

/**
 * An app the account allowed (GET /api/auth/apps).
 *
 * @typedef {object} AllowedApp
 * @property {string} client_id
 * @property {string} name
 * @property {string[]} scopes
 * @property {string} first_allowed_at
 * @property {string} last_allowed_at
 */

/**
 * What each scope lets an app see, in words; the consent page says the same at length.
 *
 * @type {Readonly<Record<string, string>>}
 */
const SCOPES = {
  openid: 'apps.scope_openid',
  profile: 'apps.scope_profile',
  email: 'apps.scope_email',
  bitcoin: 'apps.scope_bitcoin',
  orangecheck: 'apps.scope_orangecheck',
  offline_access: 'apps.scope_offline_access',
};

/** @param {string[]} scopes */
function describeScopes(scopes) {
  return formatList(scopes.map((scope) => (Object.hasOwn(SCOPES, scope) ? t(SCOPES[scope]) : scope)));
}

/** @param {AllowedApp} app */
function describeDates(app) {
  const first = formatDate(app.first_allowed_at);
  const last = formatDate(app.last_allowed_at);
  return first === last ? t('apps.allowed_once', { date: first }) : t('apps.allowed', { first, last });
}

/**
 * Wires the section; the account page loads it with the rest.
 *
 * @param {object} page what the account page lends it
 * @param {(result: import('./common.js').ApiResult) => boolean} page.sessionLost
 * @param {(question: {title: string, text: string, confirm: string}) => Promise<boolean>} page.confirmAction
 */
export function setUpApps({ sessionLost, confirmAction }) {
  const pageStatus = byId('page-status');
  const section = byId('apps-section');
  const list = byId('apps');
  const error = byId('apps-error');

  async function loadApps() {
    const answer = await api('GET', '/api/auth/apps');
    if (sessionLost(answer)) return;
    // A host without the OpenID provider's routes leaves the section out.
    section.hidden = answer.status === 404;
    if (section.hidden) return;
    if (!answer.ok) {
      list.replaceChildren();
      byId('apps-empty').hidden = true;
      say(error, describeError(answer));
      return;
    }
    /** @type {AllowedApp[]} */
    const apps = Array.isArray(answer.body.apps) ? answer.body.apps : [];
    list.replaceChildren(...apps.map(appItem));
    byId('apps-empty').hidden = apps.length > 0;
  }

  /** @param {AllowedApp} app */
  function appItem(app) {
    const name = typeof app.name === 'string' && app.name !== '' ? app.name : app.client_id;
    const scopes = Array.isArray(app.scopes) ? app.scopes : [];
    const button = h('button', {
      type: 'button',
      class: 'danger',
      'aria-label': t('apps.remove_named', { name }),
      text: t('apps.remove'),
    });
    button.addEventListener('click', () => removeApp(app, name, button));
    return h(
      'li',
      { 'data-client': app.client_id },
      h('span', { class: 'app-avatar', 'aria-hidden': 'true', text: initialOf(name) }),
      h(
        'div',
        { class: 'item-main' },
        h('span', { class: 'item-title', text: name }),
        scopes.length > 0 ? h('span', { class: 'item-sub', text: t('apps.sees', { scopes: describeScopes(scopes) }) }) : null,
        h('span', { class: 'item-sub', text: describeDates(app) }),
      ),
      button,
    );
  }

  /**
   * @param {AllowedApp} app
   * @param {string} name
   * @param {HTMLButtonElement} button
   */
  async function removeApp(app, name, button) {
    say(error, '');
    const sure = await confirmAction({
      title: t('apps.remove_title', { name }),
      text: t('apps.remove_text', { name }),
      confirm: t('apps.remove'),
    });
    if (!sure) {
      say(pageStatus, t('apps.nothing_removed'));
      return;
    }
    await busy(button, async () => {
      const removed = await api('DELETE', `/api/auth/apps/${encodeURIComponent(app.client_id)}`);
      if (sessionLost(removed)) return;
      if (!removed.ok) {
        say(error, describeError(removed, { not_found: t('apps.gone') }));
        await loadApps();
        return;
      }
      await loadApps();
      say(pageStatus, t('apps.removed', { name }));
      focusHeading('apps-title');
    });
  }

  return { loadApps };
}
