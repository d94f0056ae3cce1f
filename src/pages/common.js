/**
 * Shared by the sign-in and account pages: the same-origin API client, error
 * codes turned into sentences (docs/errors.md), the return_to check and small
 * DOM helpers. Plain browser JavaScript, no framework, no build step.
 *
 * The session cookie is HttpOnly: these scripts never see a token, they only
 * send the browser's cookie along (`credentials: 'same-origin'`).
 */

/**
 * Calls the API on this origin. Never throws: a network failure answers
 * `{ok: false, status: 0, code: 'network'}`.
 *
 * @param {string} method
 * @param {string} path
 * @param {unknown} [body] sent as JSON when given
 * @returns {Promise<{ok: boolean, status: number, code: string | null, body: any}>}
 */
export async function api(method, path, body) {
  /** @type {RequestInit} */
  const init = { method, credentials: 'same-origin', cache: 'no-store', headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers = { accept: 'application/json', 'content-type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch {
    return { ok: false, status: 0, code: 'network', body: null };
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

/** One sentence per error code of docs/errors.md that a person can meet on these pages. */
const MESSAGES = {
  network: 'The service could not be reached. Check your connection and try again.',
  bad_request: 'Something in the form is not valid. Check it and try again.',
  already_active: 'That account is already the one you are using.',
  not_authenticated: 'You are not signed in any more. Please sign in again.',
  ambiguous_session: 'Another site left a sign-in on this browser, so to be safe you were signed out here. Please sign in again.',
  account_disabled: 'This account has been disabled by the operator of this service, so it cannot sign in.',
  nonce_reused: 'That signed message was already used. Get a new message and sign it again.',
  invalid_code: 'That code is not right, or it has expired. Check the most recent e-mail, or ask for a new code.',
  code_dead: 'That code can no longer be used (too many tries, a newer code was sent, or it expired). Ask for a new code.',
  sudo_required: 'Please confirm it is you first.',
  cross_site: 'The request was refused because it did not come from this site.',
  not_in_roster: 'That account is no longer signed in on this browser. Use "Add another account" to sign in to it again.',
  forbidden: 'You are not allowed to do that.',
  not_found: 'This feature is not available on this service.',
  unknown_did_oc: 'That account does not exist any more.',
  unknown_provider: 'This sign-in provider is not set up on this service.',
  no_roster: 'Your session comes from an older version of this service. Please sign in again.',
  address_linked_elsewhere: 'That Bitcoin address belongs to another account.',
  email_linked_elsewhere: 'That e-mail address belongs to another account.',
  identity_not_linked: 'That address or e-mail is not linked to this account. Use one that is.',
  last_identity: 'This is the only way into this account, so it cannot be removed. Link another one first.',
  payload_too_large: 'What you entered is too long.',
  unsupported_media_type: 'The request was not understood. Reload the page and try again.',
  internal_error: 'Something went wrong on our side. Please try again in a moment.',
  mail_unavailable: 'The e-mail could not be sent right now. Please try again in a few minutes.',
  provider_unavailable: 'The sign-in provider could not be reached. Please try again later.',
  not_ready: 'The service is starting up. Please try again in a moment.',
};

/** The `codes` of a refused proof name the verification code (docs/errors.md). */
const CHALLENGE_MESSAGES = {
  expired: 'The message to sign has expired. Get a new one and sign it again.',
  sig_invalid:
    'The signature does not match. Sign the exact message shown, with the wallet that holds this address, using BIP-322 ("Sign message").',
  sig_unsupported_script:
    'This signature is in the old format, which only works for addresses starting with 1. Sign with BIP-322 instead.',
  aud_mismatch: 'This message was made for another site. Get a new message here and sign it.',
  purpose_mismatch: 'This message was made for something else. Get a new message here and sign it.',
  nonce_mismatch: 'The message was changed after it was issued. Sign the exact text shown, without editing it.',
  decode_error: 'The message was changed after it was issued. Sign the exact text shown, without editing it.',
};

/** The `oauth_error` codes the provider callback redirects with (src/signin/oauth-errors.ts). */
export const OAUTH_ERROR_MESSAGES = {
  state_mismatch: 'The sign-in with the provider took too long, or was started in another tab. Please try again.',
  access_denied: 'The sign-in was cancelled at the provider, so you are not signed in.',
  provider_error: 'The provider reported a problem with the sign-in. Please try again.',
  token_exchange_failed: 'The sign-in with the provider could not be completed. Please try again.',
  id_token_invalid: 'The answer from the provider could not be verified, so you are not signed in.',
  userinfo_failed: 'Your profile could not be read from the provider. Please try again.',
  unknown_provider: 'This sign-in provider is not set up on this service.',
  provider_unavailable: 'The sign-in provider could not be reached. Please try again later.',
  ambiguous_session: 'Another site left a sign-in on this browser, so to be safe you were signed out here. Please sign in again.',
  account_disabled: 'This account has been disabled by the operator of this service, so it cannot sign in.',
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
  if (overrides[code]) return overrides[code];
  if (code === 'invalid_challenge') {
    const verification = challengeCodeOf(result);
    return (verification && CHALLENGE_MESSAGES[verification]) || CHALLENGE_MESSAGES.sig_invalid;
  }
  if (code === 'rate_limited') {
    const seconds = Number(result.body && result.body.retry_after_seconds);
    return Number.isFinite(seconds) && seconds > 0
      ? `Too many attempts. Please wait ${formatWait(seconds)} and try again.`
      : 'Too many attempts. Please wait a little and try again.';
  }
  if (MESSAGES[code]) return MESSAGES[code];
  if (result.status >= 500) return MESSAGES.internal_error;
  return `Something went wrong (${code}). Please try again.`;
}

function formatWait(seconds) {
  if (seconds < 90) return `${Math.ceil(seconds)} seconds`;
  return `${Math.ceil(seconds / 60)} minutes`;
}

/**
 * Where to go after signing in: a path on this site, or an http(s) URL. The
 * server already checked the value against the family origins before it
 * rendered it into the page (src/http/pages.ts); this is the second look.
 *
 * @param {string | undefined} value
 * @param {string} fallback
 */
export function safeReturnTo(value, fallback) {
  // Controls, spaces and backslashes are what browsers reinterpret (see src/signin/oauth-return-to.ts).
  if (typeof value !== 'string' || value === '' || /[\u0000-\u0020\u007f\\]/.test(value)) return fallback;
  if (value.startsWith('/')) {
    if (value.startsWith('//')) return fallback;
    const url = new URL(value, window.location.origin);
    return url.origin === window.location.origin ? `${url.pathname}${url.search}${url.hash}` : fallback;
  }
  try {
    const url = new URL(value);
    if ((url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '') return url.href;
  } catch {
    // not a URL
  }
  return fallback;
}

/**
 * Builds an element. Attributes named `on<event>` become listeners, `text`
 * sets textContent; `false`, null and undefined are left out. Never `style`:
 * the Content-Security-Policy forbids inline style.
 *
 * @param {string} tag
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
 * Runs `work` with `button` disabled and marked busy, so a double click sends
 * one request. The button's label stays: screen readers keep its name.
 *
 * @template T
 * @param {HTMLButtonElement | null} button
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
export async function busy(button, work) {
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
    }
  }
}

/** The submit button of a form. @param {HTMLFormElement} form */
export function submitButtonOf(form) {
  return form.querySelector('button[type="submit"]');
}

/**
 * Copies text to the clipboard; falls back to selecting it so the person can
 * copy by hand. Answers whether the copy happened.
 *
 * @param {string} text
 * @param {HTMLTextAreaElement} [source] selected when the clipboard is refused
 */
export async function copyText(text, source) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (source && typeof source.select === 'function') {
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
 * @param {'login' | 'sudo'} purpose
 */
export function fetchChallenge(address, purpose) {
  const query = new URLSearchParams({ addr: address, audience: window.location.origin, purpose });
  return api('GET', `/api/challenge?${query}`);
}

/** A rough shape check, so an obvious typo is caught before a round trip; the service decides. */
export function looksLikeBitcoinAddress(value) {
  return /^[A-Za-z0-9]{25,90}$/.test(value);
}

export function looksLikeEmail(value) {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value);
}

/** A local time such as "14:05". @param {string} iso */
/** `4:05` for 245 to 245.99 seconds; `0:00` at or past zero. */
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

/** The digits of a typed code: `123 456` and `123-456` are `123456`. */
export function codeDigits(value) {
  return value.replace(/[^0-9]/g, '');
}

/**
 * Submits `form` when `field` holds a whole six-digit code (typed, or pasted
 * as "123 456"), once per code, while `active()` says a code is awaited.
 * Deleting `field.dataset.sent` arms it again for a new code.
 *
 * @param {HTMLInputElement} field
 * @param {HTMLFormElement} form
 * @param {() => boolean} active
 */
export function submitAtSixDigits(field, form, active) {
  field.addEventListener('input', () => {
    const digits = codeDigits(field.value);
    if (digits.length === 6 && active() && field.dataset.sent !== digits) {
      field.dataset.sent = digits;
      form.requestSubmit();
    }
  });
}

export function localTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

const IDENTITY_KINDS = {
  btc: 'Bitcoin address',
  email: 'E-mail',
  did: 'Account ID',
  nostr: 'Nostr key',
  oauth: 'Sign-in provider',
  connect: 'Connected app',
};

/** What kind of identity this is, in words. @param {string} kind */
export function identityKindLabel(kind) {
  return IDENTITY_KINDS[kind] ?? kind;
}

/**
 * The name to show for an account: its display name, else its display
 * identity, else its did.
 *
 * @param {{display_name?: string | null, display_identity?: {kind: string, value: string}, did_oc: string}} account
 */
/**
 * A name short enough for a heading: the display name, else the shown
 * identity with a long value cut in the middle (`bc1qu26c7n…esx3l2`).
 */
export function shortName(account) {
  const name = accountName(account);
  if (account.display_name || name.length <= 24) return name;
  return `${name.slice(0, 10)}…${name.slice(-6)}`;
}

export function accountName(account) {
  if (account.display_name) return account.display_name;
  if (account.display_identity && account.display_identity.value) return account.display_identity.value;
  return account.did_oc;
}
