/**
 * The /sudo page: a consumer site whose action was answered 401
 * `sudo_required` sends the browser here with `return_to` and `purpose`
 * (the OrangeCheck client's `redirectToSudo`). The person proves the active
 * account again (POST /api/auth/sudo, which re-mints the cookie with a fresh
 * `sudo_at`) and goes back to `return_to`, where the action is retried
 * (docs/protocol.md §6 "Step-up").
 *
 * `return_to` and `purpose` come from data attributes the server rendered
 * after checking `return_to` against the family origins (src/http/pages.ts);
 * `purpose` is only ever shown as text.
 */
import { afterProof, api, byId, h, say, safeReturnTo, shortName, t, tNodes } from './common.js';
import { createProofPanel, proofOptions } from './stepup.js';

const returnTo = safeReturnTo(document.body.dataset.returnTo, '/account');
const purpose = (document.body.dataset.purpose ?? '').trim();

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
});

async function load() {
  if (purpose !== '') byId('lead').textContent = t('sudo.lead_purpose', { purpose });
  if (document.body.dataset.returnToRefused === '1') {
    const notice = byId('notice');
    notice.textContent = t('sudo.return_to_refused');
    notice.hidden = false;
  }
  byId('sudo-cancel').setAttribute('href', returnTo);

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
  const [listed, keys] = await Promise.all([api('GET', '/api/auth/identities'), api('GET', '/api/auth/webauthn/credentials')]);
  if (sessionLost(listed)) return;
  byId('proof-title').replaceChildren(
    ...tNodes('sudo.confirming', { account: h('span', { id: 'proof-account', text: shortName(me.body.account) }) }),
  );
  panel.reset(proofOptions(listed.ok ? listed.body.identities : null, me.body.account, keys.ok ? keys.body.credentials : null));
  byId('proof').hidden = false;
  say(pageStatus, '');
  main.setAttribute('aria-busy', 'false');
}

void load();
