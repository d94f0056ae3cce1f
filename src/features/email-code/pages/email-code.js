/**
 * The e-mail code step, as the sign-in page, linking an address on the
 * account page and a step-up all use it (docs/protocol.md §6 "E-mail
 * codes"): a form that names the address and asks for a code (POST
 * /api/auth/email-otp/start), then a form for the code. The code form sends
 * itself at six digits, checks the digits before a round trip, sends one try
 * at a time, and marks its field when the code is wrong. What the code proves
 * is the caller's (`verify`).
 */
import { api, busy, checkField, describeError, markInvalid, say, submitButtonOf, t } from './common.js';

/** @typedef {import('./common.js').ApiResult} ApiResult */

/**
 * A code and where it went, as the service wants them back.
 *
 * @typedef {object} CodeProof
 * @property {string} email
 * @property {string} code the six digits
 * @property {string} token the token the start answered
 */

/** The digits of a typed code: `123 456` and `123-456` are `123456`. @param {string} value */
export function codeDigits(value) {
  return value.replace(/[^0-9]/g, '');
}

/**
 * Why the service refused a code, in words: with the tries left when it
 * says how many, else as describeError says it, with `overrides` (what
 * `code_dead` means where the code was asked for, say).
 *
 * @param {ApiResult} result
 * @param {Record<string, string>} [overrides]
 */
export function codeRefusalText(result, overrides = {}) {
  const left = Number(result.body?.attempts_left);
  if (result.code === 'invalid_code' && left > 0) return t('signin.code_wrong_tries', { left });
  // Told only to the holder of the start's token: the code typed is the one of the mail a resend replaced.
  if (result.code === 'code_replaced') return t('page.code_replaced');
  return describeError(result, overrides);
}

/**
 * Wires a pair of forms: `startForm` (the caller's, which names the address
 * and calls `send`) and `codeForm` with its `field`.
 *
 * @param {object} parts
 * @param {HTMLFormElement} parts.startForm
 * @param {HTMLFormElement} parts.codeForm hidden until a code is sent
 * @param {HTMLInputElement} parts.field the code
 * @param {HTMLElement} parts.error the alert region of the step
 * @param {(proof: CodeProof) => Promise<boolean>} parts.verify sends the proof, its submit button busy; true when it was taken (no second try of that code goes), false when it was refused
 * @param {() => boolean} [parts.usable] whether the code sent can still be used: six digits submit only a usable code
 * @param {() => void} [parts.unusable] submitting a code that is not usable: says why
 */
export function emailCodeForm({ startForm, codeForm, field, error, verify, usable = () => true, unusable = () => {} }) {
  /** @type {{email: string, token: string} | null} */
  let sent = null;
  /** A try is on its way, or was taken: a six-digit submit and an Enter must not spend two tries on one code. */
  let trying = false;

  // Six digits are a whole code ("123 456" and "123-456" count the same): submit without a click, once per code.
  field.addEventListener('input', () => {
    const digits = codeDigits(field.value);
    if (digits.length === 6 && sent !== null && usable() && field.dataset.sent !== digits) {
      field.dataset.sent = digits;
      codeForm.requestSubmit();
    }
  });

  codeForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    say(error, '');
    if (!sent) return;
    if (!usable()) {
      unusable();
      return;
    }
    if (trying) return;
    const digits = codeDigits(field.value);
    if (!checkField(field, /^[0-9]{6}$/.test(digits), error, t('page.code_digits'))) return;
    const proof = { email: sent.email, code: digits, token: sent.token };
    trying = true;
    await busy(submitButtonOf(codeForm), async () => {
      let taken = false;
      try {
        taken = await verify(proof);
      } finally {
        trying = taken;
      }
    });
  });

  return {
    /** The code sent last, until `reset`; null before one was sent. */
    get sent() {
      return sent;
    },

    /**
     * Asks for a code, with `button` busy; a refusal is said in the error
     * region. A resend carries the token of the code it replaces: the
     * service then lets it through when others have used up the address's
     * codes for the hour.
     *
     * @param {string} email
     * @param {HTMLButtonElement | null} button
     * @param {string} [token] the token of the code to replace, on a resend
     * @returns {Promise<ApiResult>}
     */
    send(email, button, token) {
      return busy(button, async () => {
        const answer = await api('POST', '/api/auth/email-otp/start', token ? { email, token } : { email });
        if (!answer.ok) {
          say(error, describeError(answer, { bad_request: t('page.email_invalid') }));
          return answer;
        }
        sent = { email, token: answer.body.token };
        trying = false;
        return answer;
      });
    },

    /**
     * Takes up a code this browser asked for before (the mail's link opened
     * in a new tab finds its token kept there), without sending a new one.
     *
     * @param {string} email
     * @param {string} token
     */
    resume(email, token) {
      sent = { email, token };
      trying = false;
    },

    /** Shows the code form, empty, in place of the start form, and puts focus in the field. */
    show() {
      startForm.hidden = true;
      codeForm.hidden = false;
      field.value = '';
      delete field.dataset.sent;
      markInvalid(field, false);
      field.focus();
    },

    /** Back to the start form: the code sent is forgotten. */
    reset() {
      sent = null;
      trying = false;
      codeForm.hidden = true;
      startForm.hidden = false;
      delete field.dataset.sent;
    },

    /**
     * After the service refused the code: says `text`, marks the field when
     * the code was wrong, and selects it to be typed again.
     *
     * @param {ApiResult} result
     * @param {string} [text] by default why, with the tries left
     */
    refused(result, text = codeRefusalText(result)) {
      markInvalid(field, result.code === 'invalid_code');
      say(error, text);
      field.focus();
      field.select();
    },
  };
}
