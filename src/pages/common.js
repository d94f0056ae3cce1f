/**
 * Shared by the sign-in and account pages: the same-origin API client, error
 * codes turned into sentences (docs/errors.md) in the page's language
 * (./i18n.js), the return_to check and small DOM helpers. Plain browser
 * JavaScript, no framework, no build step.
 *
 * The session cookie is HttpOnly: these scripts never see a token, they only
 * send the browser's cookie along (`credentials: 'same-origin'`).
 */
import { locale, t, tNodes } from './i18n.js';

export { formatDate, formatDateTime, formatList, formatTime, t, tNodes } from './i18n.js';

/**
 * What {@link api} answers, for a success and a failure alike.
 *
 * @typedef {object} ApiResult
 * @property {boolean} ok
 * @property {number} status the HTTP status; 0 when the service was not reached
 * @property {string | null} code the error code of a failed call (docs/errors.md), `network`, or `http_<status>`; null on success
 * @property {any} body the JSON answer as the service sent it, null when there was none
 * @property {string | null} date the answer's HTTP Date, null without one
 */

/**
 * A way to sign in that an account holds (GET /api/auth/identities, docs/api.md).
 *
 * @typedef {object} Identity
 * @property {string} [id] what DELETE /api/auth/identities names it by
 * @property {string} kind `btc`, `email`, `oauth`, …
 * @property {string} value
 * @property {boolean} [verified]
 */

/**
 * An account as /me, the roster and the 409 `holder` name it: enough to show its name.
 *
 * @typedef {object} AccountSummary
 * @property {string} did_oc
 * @property {string | null} [display_name]
 * @property {{kind: string, value: string} | null} [display_identity]
 */

/**
 * Calls the API on this origin. Never throws: a network failure answers
 * `{ok: false, status: 0, code: 'network'}`. It asks in the page's language,
 * so a code mail sent from a page shown with `?lang=` is in that language too
 * (the `oc_lang` cookie, when set, still decides).
 *
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body] sent as JSON when given
 * @returns {Promise<ApiResult>}
 */
export async function api(method, path, body) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json', 'accept-language': locale };
  /** @type {RequestInit} */
  const init = { method, credentials: 'same-origin', cache: 'no-store', headers };
  if (body !== undefined) {
    init.headers = { ...headers, 'content-type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    return { ok: false, status: 0, code: 'network', body: null, date: null };
  }
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  const code = response.ok ? null : (data && (data.error || data.reason)) || `http_${response.status}`;
  // The service's clock (HTTP Date), so countdowns hold on a device whose clock is off.
  return { ok: response.ok, status: response.status, code, body: data, date: response.headers.get('date') };
}

/**
 * The message key of the sentence for each error code of docs/errors.md that a person can meet on these pages.
 *
 * @type {Readonly<Record<string, string>>}
 */
const MESSAGES = {
  network: 'error.network',
  bad_request: 'error.bad_request',
  already_active: 'error.already_active',
  not_authenticated: 'error.not_authenticated',
  ambiguous_session: 'error.ambiguous_session',
  account_disabled: 'error.account_disabled',
  nonce_reused: 'error.nonce_reused',
  invalid_code: 'error.invalid_code',
  code_dead: 'error.code_dead',
  sudo_required: 'error.sudo_required',
  cross_site: 'error.cross_site',
  not_in_roster: 'error.not_in_roster',
  forbidden: 'error.forbidden',
  not_found: 'error.not_found',
  unknown_did_oc: 'error.unknown_did_oc',
  unknown_provider: 'error.unknown_provider',
  no_roster: 'error.no_roster',
  address_linked_elsewhere: 'error.address_linked_elsewhere',
  email_linked_elsewhere: 'error.email_linked_elsewhere',
  transfer_changed: 'error.transfer_changed',
  identity_not_linked: 'error.identity_not_linked',
  last_identity: 'error.last_identity',
  payload_too_large: 'error.payload_too_large',
  unsupported_media_type: 'error.unsupported_media_type',
  internal_error: 'error.internal_error',
  mail_unavailable: 'error.mail_unavailable',
  provider_unavailable: 'error.provider_unavailable',
  not_ready: 'error.not_ready',
};

/**
 * The `codes` of a refused proof name the verification code (docs/errors.md): their message keys.
 *
 * @type {Readonly<Record<string, string>>}
 */
const CHALLENGE_MESSAGES = {
  expired: 'challenge.expired',
  sig_invalid: 'challenge.sig_invalid',
  sig_unsupported_script: 'challenge.sig_unsupported_script',
  aud_mismatch: 'challenge.aud_mismatch',
  purpose_mismatch: 'challenge.purpose_mismatch',
  nonce_mismatch: 'challenge.nonce_mismatch',
  decode_error: 'challenge.nonce_mismatch',
};

/**
 * The `oauth_error` codes the provider callback redirects with (src/features/providers/oauth-errors.ts): their message keys.
 *
 * @type {Readonly<Record<string, string>>}
 */
const OAUTH_ERROR_MESSAGES = {
  state_mismatch: 'oauth.state_mismatch',
  access_denied: 'oauth.access_denied',
  provider_error: 'oauth.provider_error',
  token_exchange_failed: 'oauth.token_exchange_failed',
  id_token_invalid: 'oauth.id_token_invalid',
  userinfo_failed: 'oauth.userinfo_failed',
  unknown_provider: 'error.unknown_provider',
  provider_unavailable: 'error.provider_unavailable',
  ambiguous_session: 'error.ambiguous_session',
  account_disabled: 'error.account_disabled',
};

/**
 * The verification code behind an `invalid_challenge` refusal (`codes[0]`), or null.
 *
 * @param {{body: any}} result
 * @returns {string | null}
 */
export function challengeCodeOf(result) {
  const codes = result.body && Array.isArray(result.body.codes) ? result.body.codes : [];
  return typeof codes[0] === 'string' ? codes[0] : null;
}

/**
 * A sentence for a failed call.
 *
 * @param {{status: number, code: string | null, body: any}} result
 * @param {Record<string, string>} [overrides] sentences for codes that mean something specific where they are used
 */
export function describeError(result, overrides = {}) {
  const code = result.code ?? 'internal_error';
  if (Object.hasOwn(overrides, code)) return overrides[code];
  if (code === 'invalid_challenge') {
    const verification = challengeCodeOf(result);
    return t(
      verification && Object.hasOwn(CHALLENGE_MESSAGES, verification) ? CHALLENGE_MESSAGES[verification] : CHALLENGE_MESSAGES.sig_invalid,
    );
  }
  if (code === 'rate_limited') {
    const seconds = Number(result.body?.retry_after_seconds);
    if (!Number.isFinite(seconds) || seconds <= 0) return t('error.rate_limited');
    return seconds < 90
      ? t('error.rate_limited_seconds', { seconds: Math.ceil(seconds) })
      : t('error.rate_limited_minutes', { minutes: Math.ceil(seconds / 60) });
  }
  if (Object.hasOwn(MESSAGES, code)) return t(MESSAGES[code]);
  if (result.status >= 500) return t(MESSAGES.internal_error);
  return t('error.other', { code });
}

/** The sentence for an `oauth_error` code the provider callback redirected with (from the address: any text). @param {string} code */
export function oauthErrorText(code) {
  return t(Object.hasOwn(OAUTH_ERROR_MESSAGES, code) ? OAUTH_ERROR_MESSAGES[code] : 'oauth.other');
}

/**
 * Where to go after signing in: the value the server rendered, exactly as it
 * is. The server normalised it with the URL parser and checked it against
 * this service and the family origins (src/identity/signin/oauth-return-to.ts,
 * docs/protocol.md §6 "return_to"); resolving it again here could only give
 * it another meaning. This look keeps only the shapes the server renders: a
 * path that starts with one `/` (never `//` or `/\`, which a browser reads as
 * another host), or an absolute http(s) URL, in printable ASCII.
 *
 * @param {string | undefined} value
 * @param {string} fallback
 */
export function safeReturnTo(value, fallback) {
  if (typeof value !== 'string' || !/^[\u0021-\u007e]+$/.test(value) || value.includes('\\')) return fallback;
  if (/^\/(?![/\\])/.test(value) || /^https?:\/\//.test(value)) return value;
  return fallback;
}

/**
 * Where to go after a sign-in or a re-proof: `returnTo`, with `#oc-adopt`
 * when it is a page of another family site without a fragment of its own,
 * so a tab the OrangeCheck client pinned there takes up the account just
 * proven (docs/protocol.md §6 "return_to"; src/identity/signin/oauth-return-to.ts
 * does the same for the provider callback).
 *
 * @param {string} returnTo a value {@link safeReturnTo} kept
 */
export function afterProof(returnTo) {
  if (!/^https?:\/\//i.test(returnTo) || returnTo.includes('#')) return returnTo;
  try {
    return new URL(returnTo).origin === window.location.origin ? returnTo : `${returnTo}#oc-adopt`;
  } catch {
    return returnTo;
  }
}

/**
 * Builds an element. Attributes named `on<event>` become listeners, `text`
 * sets textContent; `false`, null and undefined are left out. Never `style`:
 * the Content-Security-Policy forbids inline style.
 *
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @returns {HTMLElementTagNameMap[K]}
 * @param {Record<string, any>} [attributes]
 * @param {...(Node | string | null | undefined)} children
 */
export function h(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'text') node.textContent = String(value);
    else if (name === 'class') node.className = String(value);
    else if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** @param {string} id */
export function byId(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`page: #${id} is missing`);
  return node;
}

/**
 * Shows `text` in a live region (role=status or role=alert); empty hides it
 * (CSS `:empty`). Setting the text anew makes screen readers announce it.
 *
 * @param {HTMLElement} region
 * @param {string} text
 */
export function say(region, text) {
  region.textContent = text;
  // An error must be seen where it happened: bring an alert into view (it may sit below the fold).
  if (text !== '' && region.getAttribute('role') === 'alert' && typeof region.scrollIntoView === 'function') {
    region.scrollIntoView({ block: 'nearest' });
  }
}

/** Moves focus to a heading after the content under it was replaced, so keyboard users keep their place. @param {string} id */
export function focusHeading(id) {
  const heading = byId(id);
  heading.setAttribute('tabindex', '-1');
  heading.focus();
}

/**
 * Marks a field invalid (or valid again) and points it at its message.
 *
 * @param {HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement} field
 * @param {boolean} invalid
 */
export function markInvalid(field, invalid) {
  if (invalid) field.setAttribute('aria-invalid', 'true');
  else field.removeAttribute('aria-invalid');
}

/**
 * Checks a field before a round trip: marks it invalid (or valid again), and
 * when it is invalid says `message` in `region` and puts focus on it.
 *
 * @param {HTMLInputElement | HTMLTextAreaElement} field
 * @param {boolean} valid
 * @param {HTMLElement} region
 * @param {string} message
 * @returns {boolean} `valid`
 */
export function checkField(field, valid, region, message) {
  markInvalid(field, !valid);
  if (!valid) {
    say(region, message);
    field.focus();
  }
  return valid;
}

/**
 * The proof a pasted signature makes for `challenge`, its whitespace removed,
 * with `region` cleared; null when there is no challenge, or, with the field
 * marked and `region` told, when nothing was pasted.
 * @param {{address: string, message: string, nonce: string} | null} challenge
 * @param {HTMLTextAreaElement} signature
 * @param {HTMLElement} region
 */
export function pastedProof(challenge, signature, region) {
  say(region, '');
  if (!challenge) return null;
  const pasted = signature.value.replace(/\s+/g, '');
  if (!checkField(signature, pasted !== '', region, t('page.signature_missing'))) return null;
  return { address: challenge.address, message: challenge.message, signature: pasted, nonce: challenge.nonce };
}

/**
 * Runs `work` with `button` disabled and marked busy, so a double click sends
 * one request. The button's label stays: screen readers keep its name.
 *
 * A disabled button cannot take focus: a dialog that `work` opens and closes
 * (a confirmation, a step-up) cannot give it back, so it would fall to the
 * page. A button that had focus gets it back once it is enabled again, when
 * nothing else took it meanwhile.
 *
 * @template T
 * @param {HTMLButtonElement | null} button
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function busy(button, work) {
  const hadFocus = button !== null && document.activeElement === button;
  if (button) {
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
  }
  try {
    return await work();
  } finally {
    if (button) {
      button.disabled = false;
      button.removeAttribute('aria-busy');
      // Nowhere: the page itself, or a dialog just closed (which lets go of focus only at the next frame).
      const focused = document.activeElement;
      const lost = focused === null || focused === document.body || focused === button || focused.closest('dialog:not([open])') !== null;
      if (hadFocus && lost && button.isConnected) button.focus();
    }
  }
}

/**
 * A click on `button`: its section's alert `error` emptied, then `work` while
 * the button is busy ({@link busy}).
 *
 * @param {HTMLButtonElement} button
 * @param {HTMLElement} error
 * @param {(error: HTMLElement) => Promise<void>} work
 */
export function onBusyClick(button, error, work) {
  button.addEventListener('click', async () => {
    say(error, '');
    await busy(button, () => work(error));
  });
}

/**
 * A submission of `form`, done by `submit` instead of the browser: the
 * form's alert `error` is emptied first, so it shows only what this try says.
 *
 * @param {HTMLFormElement} form
 * @param {HTMLElement} error
 * @param {(error: HTMLElement) => Promise<void>} submit
 */
export function onSubmit(form, error, submit) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    await submit(error);
  });
}

/**
 * The submit button of a form.
 *
 * @param {HTMLFormElement} form
 * @returns {HTMLButtonElement | null}
 */
export function submitButtonOf(form) {
  const button = form.querySelector('button[type="submit"]');
  return button instanceof HTMLButtonElement ? button : null;
}

/**
 * Copies text to the clipboard; falls back to selecting it so the person can
 * copy by hand. Answers whether the copy happened.
 *
 * @param {string} text
 * @param {HTMLElement} [source] the field or the element that shows it, selected when the clipboard is refused
 */
export async function copyText(text, source) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (source instanceof HTMLTextAreaElement || source instanceof HTMLInputElement) {
      source.focus();
      source.select();
    } else if (source) {
      // Text outside a field: select it, so the keyboard or the menu can copy it.
      const range = document.createRange();
      range.selectNodeContents(source);
      const selection = window.getSelection();
      selection?.removeAllRanges();
      selection?.addRange(range);
    }
    return false;
  }
}

/**
 * GET /api/challenge for this origin (docs/api.md "Signed challenge").
 *
 * @param {string} address
 * @param {'login' | 'sudo' | 'link'} purpose
 */
export function fetchChallenge(address, purpose) {
  const query = new URLSearchParams({ addr: address, audience: window.location.origin, purpose });
  return api('GET', `/api/challenge?${query}`);
}

/** A rough shape check, so an obvious typo is caught before a round trip; the service decides. @param {string} value */
export function looksLikeBitcoinAddress(value) {
  return /^[A-Za-z0-9]{25,90}$/.test(value);
}

/** @param {string} value */
export function looksLikeEmail(value) {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value);
}

/** `4:05` for 245 to 245.99 seconds; `0:00` at or past zero. @param {number} seconds */
export function clockText(seconds) {
  const whole = Math.max(0, Math.floor(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/**
 * Counts down to `iso` in `element` once a second with `render(secondsLeft)`,
 * calls `onExpire` once at zero, and answers a function that stops it. The
 * element is not a live region: a ticking clock read aloud every second is
 * noise; callers announce the moments that matter themselves.
 *
 * `serverDate` is the HTTP Date of the answer that gave `iso`: the end is
 * moved by how far this device's clock is from the service's.
 *
 * @param {HTMLElement} element
 * @param {string} iso
 * @param {(seconds: number) => string} render
 * @param {() => void} onExpire
 * @param {string | null} [serverDate]
 */
export function countdown(element, iso, render, onExpire, serverDate = null) {
  const server = serverDate ? Date.parse(serverDate) : Number.NaN;
  // Off by less than the Date header's one-second grain, plus the answer's travel time.
  // The header drops the milliseconds: take the middle of its second.
  const skew = Number.isNaN(server) ? 0 : Date.now() - (server + 500);
  const end = new Date(iso).getTime() + skew;
  let done = false;
  const tick = () => {
    const left = (end - Date.now()) / 1000;
    element.textContent = render(left);
    if (left <= 0 && !done) {
      done = true;
      clearInterval(timer);
      onExpire();
    }
  };
  const timer = setInterval(tick, 1000);
  tick();
  return () => {
    done = true;
    clearInterval(timer);
  };
}

/** @type {Readonly<Record<string, string>>} */
const IDENTITY_KINDS = {
  btc: 'kind.btc',
  email: 'kind.email',
  did: 'kind.did',
  nostr: 'kind.nostr',
  oauth: 'kind.oauth',
  connect: 'kind.connect',
};

/** What kind of identity this is, in words. @param {string} kind */
export function identityKindLabel(kind) {
  return Object.hasOwn(IDENTITY_KINDS, kind) ? t(IDENTITY_KINDS[kind]) : kind;
}

/**
 * An identity in words, as a title and a line under it: a provider account by
 * the provider's name with its subject below, anything else by its value
 * with its kind below.
 *
 * @param {Identity} identity
 */
export function describeIdentity(identity) {
  if (identity.kind === 'oauth' && typeof identity.value === 'string' && identity.value.includes(':')) {
    const provider = identity.value.slice(0, identity.value.indexOf(':'));
    const subject = identity.value.slice(provider.length + 1);
    return {
      title: t('account.provider_account', { provider: `${provider.charAt(0).toUpperCase()}${provider.slice(1)}` }),
      sub: `${identityKindLabel('oauth')} · ${subject}`,
    };
  }
  const sub =
    identity.verified === false ? `${identityKindLabel(identity.kind)} · ${t('account.not_verified')}` : identityKindLabel(identity.kind);
  return { title: String(identity.value), sub };
}

/**
 * A name short enough for a heading: the display name, else the shown
 * identity. An e-mail address is shown whole (a person reads it, and the
 * heading wraps it); a long Bitcoin address or id is cut in the middle
 * (`bc1qu26c7n…esx3l2`), its full value on the account page's identities.
 *
 * @param {AccountSummary} account
 */
export function shortName(account) {
  const name = accountName(account);
  if (account.display_name || account.display_identity?.kind === 'email' || name.length <= 24) return name;
  return `${name.slice(0, 10)}…${name.slice(-6)}`;
}

/**
 * The name to show for an account: its display name, else its display
 * identity, else its did.
 *
 * @param {AccountSummary} account
 */
export function accountName(account) {
  if (account.display_name) return account.display_name;
  if (account.display_identity?.value) return account.display_identity.value;
  return account.did_oc;
}

/**
 * The first letter of an app's name, upper case, for the round badge that
 * stands in for its logo where the page's policy allows no other origin's
 * images (docs/protocol.md §8 "Signing in").
 *
 * @param {string} name
 */
export function initialOf(name) {
  const first = [...name.trim()][0];
  return first === undefined ? '?' : first.toLocaleUpperCase();
}

/** `return_to` of an authorization waiting for this browser to sign in (docs/protocol.md §8 "Signing in"). */
const INTERACTION_RETURN = /^\/oidc\/interaction\/([A-Za-z0-9_-]{1,64})(?:\?hinted=1)?$/;

/**
 * Names the app an authorization is for above the ways in, when `returnTo`
 * is the interaction of one: the provider answers only the browser that
 * started it (GET /oidc/interaction/<uid>/app); anything else leaves the
 * page as it is. The name is only ever shown as text.
 *
 * @param {string} returnTo a value {@link safeReturnTo} kept
 * @param {HTMLElement} holder where the sentence goes, hidden until then
 * @param {string} key the sentence, with `{app}`
 */
export async function nameInteractionApp(returnTo, holder, key) {
  const match = INTERACTION_RETURN.exec(returnTo);
  if (match === null) return;
  const answer = await api('GET', `/oidc/interaction/${match[1]}/app`);
  const name = answer.ok ? answer.body?.name : undefined;
  if (typeof name !== 'string' || name.trim() === '') return;
  const avatar = h('span', { class: 'app-avatar', 'aria-hidden': 'true', text: initialOf(name) });
  const logo = answer.body?.logo_uri;
  let badge = avatar;
  if (typeof logo === 'string' && /^https:\/\//.test(logo)) {
    // The page's policy names this logo's origin (src/web/pages.ts); the initial comes back when it does not load.
    badge = h('img', { class: 'app-logo-small', src: logo, alt: '', width: '40', height: '40' });
    badge.addEventListener('error', () => badge.replaceWith(avatar));
  }
  holder.replaceChildren(badge, h('p', {}, ...tNodes(key, { app: h('strong', { text: name }) })));
  holder.hidden = false;
}
