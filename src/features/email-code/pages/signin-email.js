/**
 * Signing in with an e-mail code (src/pages/signin.js): the address, the
 * step "Check your e-mail" with the code field, its countdown and the wait
 * between codes, and the mail's link, which signs in only in the browser that
 * asked for the code (docs/protocol.md §6 "E-mail codes").
 */
import {
  afterProof,
  api,
  busy,
  byId,
  checkField,
  clockText,
  countdown,
  describeError,
  h,
  looksLikeEmail,
  markInvalid,
  safeReturnTo,
  say,
  submitButtonOf,
  t,
  tNodes,
} from './common.js';
import { emailCodeForm } from './email-code.js';
import {
  addQuery,
  DEFAULT_RETURN_TO,
  isAdding,
  pageStatus,
  remember,
  returnTo,
  setAdding,
  showNotice,
  startingOver,
  ways,
} from './signin-state.js';

const emailStartForm = /** @type {HTMLFormElement} */ (byId('email-start-form'));
const emailVerifyForm = /** @type {HTMLFormElement} */ (byId('email-verify-form'));
export const emailAddress = /** @type {HTMLInputElement} */ (byId('email-address'));

const emailCodeField = /** @type {HTMLInputElement} */ (byId('email-code'));
const emailError = byId('email-error');
const resendButton = /** @type {HTMLButtonElement} */ (byId('email-resend'));

/** The code sent last has expired, or the service says it is used up: only a new one helps. */
let codeExpired = false;
/** A new code may be asked for from this time (ms); the page waits 30 s between codes, longer when the service says so. */
let resendAt = 0;
const RESEND_WAIT_MS = 30_000;
let stopEmailCountdown = () => {};
let resendTimer = 0;

const emailStep = byId('email-step');
const emailSubmit = /** @type {HTMLButtonElement} */ (byId('email-submit'));

/**
 * The code sent and where this browser was going, kept for the mail's link
 * (docs/protocol.md §6 "E-mail codes"): it opens in a new tab, which finds
 * the start's token here and verifies with it. Only this browser has it, so
 * the link signs in nowhere else. Gone once used, replaced or given up.
 */
const PENDING_CODE_KEY = 'oc-email-code';
/** Set when a code was taken in any tab of this browser, so a tab still waiting for it goes on. */
const CODE_TAKEN_KEY = 'oc-email-signed-in';

/** @typedef {{email: string, token: string, returnTo: string, add: boolean, expiresAt: string}} PendingCode */

/** @param {PendingCode | null} pending */
function keepPendingCode(pending) {
  try {
    if (pending === null) localStorage.removeItem(PENDING_CODE_KEY);
    else localStorage.setItem(PENDING_CODE_KEY, JSON.stringify(pending));
  } catch {
    // storage may be off: then the link asks for the code to be typed
  }
}

/** @returns {PendingCode | null} the code this browser asked for last, while it is valid */
function pendingCode() {
  try {
    const kept = JSON.parse(localStorage.getItem(PENDING_CODE_KEY) ?? 'null');
    if (!kept || typeof kept.email !== 'string' || typeof kept.token !== 'string' || !(Date.parse(kept.expiresAt) > Date.now()))
      return null;
    return { ...kept, returnTo: safeReturnTo(kept.returnTo, DEFAULT_RETURN_TO), add: kept.add === true };
  } catch {
    return null;
  }
}

/** Where a code taken in this tab leads: this page's `return_to`, or the one of the start the link belongs to. */
let codeReturnTo = returnTo;

/** A code was taken (in this tab or another one of this browser): signed in, go on. */
function codeTaken() {
  keepPendingCode(null);
  try {
    localStorage.setItem(CODE_TAKEN_KEY, String(Date.now()));
  } catch {
    // the other tabs keep waiting; this one goes on
  }
  remember('email');
  say(pageStatus, t('signin.signed_in'));
  window.location.assign(afterProof(codeReturnTo));
}

// The mail's link was opened in another tab of this browser and signed in there: this tab goes on too.
window.addEventListener('storage', (event) => {
  if (event.key === CODE_TAKEN_KEY && event.newValue !== null && emailCode.sent !== null) {
    say(pageStatus, t('signin.signed_in'));
    window.location.assign(afterProof(codeReturnTo));
  }
});

/** The code sent can no longer be used: the step's main button asks for a new one instead. @param {string} text why */
function codeGone(text) {
  stopEmailCountdown();
  codeExpired = true;
  markInvalid(emailCodeField, false);
  emailSubmit.textContent = t('signin.resend');
  resendButton.hidden = true;
  say(emailError, text);
  emailSubmit.focus();
}

const emailCode = emailCodeForm({
  startForm: emailStartForm,
  codeForm: emailVerifyForm,
  field: emailCodeField,
  error: emailError,
  usable: () => !codeExpired,
  // The main button of a code that is gone sends a new one.
  unusable: () => void resend(emailSubmit),
  async verify(proof) {
    const verified = await api('POST', `/api/auth/email-otp/verify${addQuery()}`, proof);
    if (verified.ok) {
      codeTaken(); // the page is leaving: no second try
      return true;
    }
    if (verified.code === 'code_dead') {
      codeGone(t('signin.code_dead'));
      return false;
    }
    emailCode.refused(verified);
    return false;
  },
});

// An error under the code field replaces what the page said before ("Code sent"): no stale line above a red one.
new MutationObserver(() => {
  if (emailError.textContent !== '') say(pageStatus, '');
}).observe(emailError, { childList: true, characterData: true, subtree: true });

function updateResendButton() {
  const wait = Math.ceil((resendAt - Date.now()) / 1000);
  if (wait > 0) {
    resendButton.setAttribute('aria-disabled', 'true');
    resendButton.textContent = t('signin.resend_in', { seconds: wait });
  } else {
    resendButton.removeAttribute('aria-disabled');
    resendButton.textContent = t('signin.resend');
    clearInterval(resendTimer);
  }
}

/** @param {number} milliseconds */
function holdResend(milliseconds) {
  resendAt = Date.now() + milliseconds;
  clearInterval(resendTimer);
  resendTimer = setInterval(updateResendButton, 1000);
  updateResendButton();
}

/**
 * @param {string} expiresAt
 * @param {string | null} serverDate
 */
function startEmailCountdown(expiresAt, serverDate) {
  stopEmailCountdown();
  const clock = byId('email-countdown');
  clock.classList.remove('expired');
  stopEmailCountdown = countdown(
    clock,
    expiresAt,
    (left) => (left > 0 ? t('page.code_expires_in', { clock: clockText(left) }) : t('page.code_expired_short')),
    () => {
      clock.classList.add('expired');
      codeGone(t('signin.code_expired'));
    },
    serverDate,
  );
}

/**
 * Asks for a code (a resend with the token of the code it replaces), then
 * counts down to its end and holds the next resend back.
 *
 * @param {string} email
 * @param {HTMLButtonElement | null} button
 * @param {string} [token]
 */
async function sendCode(email, button, token) {
  const started = await emailCode.send(email, button, token);
  if (started.code === 'rate_limited') holdResend((Number(started.body?.retry_after_seconds) || 60) * 1000);
  if (!started.ok) return false;
  codeExpired = false;
  emailSubmit.textContent = t('signin.continue');
  resendButton.hidden = false;
  keepPendingCode({ email, token: started.body.token, returnTo, add: isAdding(), expiresAt: started.body.expiresAt });
  startEmailCountdown(started.body.expiresAt, started.date);
  holdResend(RESEND_WAIT_MS);
  return true;
}

/**
 * The step "Check your e-mail" for `email`, in place of the ways; its error
 * sits under the code field.
 *
 * @param {string} email
 */
function showEmailStep(email) {
  byId('email-sent').replaceChildren(...tNodes('signin.code_sent_to', { email: h('strong', { text: email }) }));
  byId('email-code-error-slot').append(emailError);
  ways.hidden = true;
  emailStep.hidden = false;
  emailCode.show();
}

emailStartForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  startingOver();
  say(emailError, '');
  const email = emailAddress.value.trim();
  if (!checkField(emailAddress, looksLikeEmail(email), emailError, t('page.email_invalid'))) return;
  if (!(await sendCode(email, submitButtonOf(emailStartForm)))) {
    emailAddress.focus();
    return;
  }
  showEmailStep(email);
  say(pageStatus, t('signin.code_sent', { email }));
});

/** A new code, with `button` busy: after the wait between codes, with the token of the code it replaces. @param {HTMLButtonElement} button */
async function resend(button) {
  const sent = emailCode.sent;
  if (!sent) return;
  say(emailError, '');
  const wait = Math.ceil((resendAt - Date.now()) / 1000);
  if (wait > 0) {
    say(pageStatus, t('signin.resend_wait', { seconds: wait }));
    return;
  }
  if (await sendCode(sent.email, button, sent.token)) {
    say(pageStatus, t('signin.code_resent', { email: sent.email }));
    emailCode.show();
  }
}

resendButton.addEventListener('click', () => resend(resendButton));

byId('email-restart').addEventListener('click', () => {
  stopEmailCountdown();
  emailCode.reset();
  keepPendingCode(null);
  codeReturnTo = returnTo;
  byId('email-start-error-slot').append(emailError);
  say(emailError, '');
  say(pageStatus, '');
  emailStep.hidden = true;
  ways.hidden = false;
  emailAddress.focus();
});

/**
 * The mail's link: `/signin#link=<secret>&email=<address>` (docs/protocol.md
 * §6 "E-mail codes"). The fragment never reaches a server or a log, and
 * leaves the address bar at once. In the browser that asked for the code
 * (its start's token is kept here) the link's secret is sent with that
 * token, and the service signs in only with both; anywhere else (another
 * browser, a device, a mail scanner) the address is filled in and the
 * person is asked to type the code: nothing is sent.
 */
export async function openMailLink() {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const link = fragment.get('link');
  const email = fragment.get('email');
  if (link === null || email === null || !looksLikeEmail(email)) return;
  history.replaceState(null, '', window.location.pathname + window.location.search);
  const pending = pendingCode();
  if (pending === null || pending.email.toLowerCase() !== email.trim().toLowerCase()) {
    emailAddress.value = email;
    showNotice(t('signin.link_elsewhere'), false);
    return;
  }
  codeReturnTo = pending.returnTo;
  setAdding(pending.add);
  emailCode.resume(pending.email, pending.token);
  showEmailStep(pending.email);
  startEmailCountdown(pending.expiresAt, null);
  const signedIn = await busy(emailSubmit, () =>
    api('POST', `/api/auth/email-otp/link${addQuery()}`, { email: pending.email, link, token: pending.token }),
  );
  if (signedIn.ok) return codeTaken();
  // The code stays usable for typing: the step waits for it, saying why the link did not sign in.
  if (signedIn.code === 'code_dead') return codeGone(t('signin.code_dead'));
  if (signedIn.code === 'link_elsewhere') return say(emailError, t('signin.link_elsewhere'));
  emailCode.refused(signedIn, describeError(signedIn));
}
