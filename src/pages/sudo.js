/**
 * The /sudo page: a consumer site whose action was answered 401
 * `sudo_required` sends the browser here with `return_to` and `purpose`
 * (the OrangeCheck client's `redirectToSudo`). The person proves the active
 * account again (POST /api/auth/sudo, which re-mints the cookie with a fresh
 * `sudo_at`) and goes back to `return_to`, where the action is retried
 * (docs/protocol.md §6 "Step-up").
 *
 * `return_to` and `purpose` come from data attributes the server rendered
 * after checking `return_to` against the family origins (src/web/pages.ts);
 * `purpose` is only ever shown as text.
 */
import { afterProof, api, byId, h, nameInteractionApp, say, safeReturnTo, shortName, t, tNodes } from './common.js';
import { createProofPanel, proofOptions } from './stepup.js';
import { showAccountMenu, summaryOf } from './account-menu.js';

const returnTo = safeReturnTo(document.body.dataset.returnTo, '/account');
const purpose = (document.body.dataset.purpose ?? '').trim();
/** An app's sign-in asked for a security key (docs/protocol.md §8 "How the person signed in"): only the key is offered. */
const keyOnly = document.body.dataset.require === 'key';

/**
 * Where Cancel goes: back to `return_to`, except for an app's sign-in, which
 * Cancel declines (the interaction answers the app `access_denied`) instead of
 * asking again.
 */
function cancelHref() {
  if (!returnTo.startsWith('/oidc/interaction/')) return returnTo;
  return `${returnTo}${returnTo.includes('?') ? '&' : '?'}cancel=1`;
}

const main = byId('main');
const pageError = byId('page-error');
const pageStatus = byId('page-status');

/** Without a session there is nothing to confirm: sign in, then come back here. */
function signInFirst() {
  window.location.replace(`/signin?return_to=${encodeURIComponent(window.location.pathname + window.location.search)}`);
}

/** @param {import('./common.js').ApiResult} result */
function sessionLost(result) {
  if (result.status === 401 && result.code === 'not_authenticated') {
    signInFirst();
    return true;
  }
  return false;
}

const panel = createProofPanel(byId('sudo-panel'), {
  onProved() {
    say(pageStatus, t('sudo.confirmed'));
    window.location.assign(afterProof(returnTo));
  },
  onSessionLost: sessionLost,
  keyStepUp: keyOnly,
});

async function load() {
  if (keyOnly) byId('lead').textContent = t('sudo.lead_key');
  else if (purpose !== '') byId('lead').textContent = t('sudo.lead_purpose', { purpose });
  if (document.body.dataset.returnToRefused === '1') {
    const notice = byId('notice');
    notice.textContent = t('sudo.return_to_refused');
    notice.hidden = false;
  }
  byId('sudo-cancel').setAttribute('href', cancelHref());

  const me = await api('GET', '/api/auth/me');
  if (me.status === 401) {
    signInFirst();
    return;
  }
  if (!me.ok) {
    say(pageStatus, '');
    say(pageError, t('page.load_failed'));
    main.setAttribute('aria-busy', 'false');
    return;
  }
  showAccountMenu(summaryOf(me.body));
  const [listed, keys] = await Promise.all([api('GET', '/api/auth/identities'), api('GET', '/api/auth/webauthn/credentials')]);
  if (sessionLost(listed)) return;
  byId('proof-title').replaceChildren(
    ...tNodes('sudo.confirming', { account: h('span', { id: 'proof-account', text: shortName(me.body.account) }) }),
  );
  const offered = proofOptions(listed.ok ? listed.body.identities : null, me.body.account, keys.ok ? keys.body.credentials : null);
  panel.reset(keyOnly ? { addresses: [], emails: [], hasKey: offered.hasKey } : offered);
  if (keyOnly && !offered.hasKey) {
    byId('sudo-none').textContent = t('sudo.key_unavailable');
  }
  byId('proof').hidden = false;
  say(pageStatus, '');
  main.setAttribute('aria-busy', 'false');
}

void load();
void nameInteractionApp(returnTo, byId('app-banner'), 'sudo.continue_to');
