/**
 * The desktop's side of signing in from a phone (docs/protocol.md §6
 * "Signing in from a phone"), for the /signin page: imported for its
 * effect, it fills `<div id="phone-signin">` with a button that opens a
 * dialog holding the QR code of a new hand-off, the code the phone will
 * show, and a countdown. It polls the claim every 2 seconds while the dialog
 * is open; closing it (Escape too) stops the polling. The poll token stays
 * in this module: the QR code carries only the phone key.
 *
 * Once a phone approves, the dialog asks "Sign in as …?" with the address
 * that approved: whoever saw the QR code could have approved with their own
 * wallet. Only Confirm claims it (naming that address back, which the
 * server requires); Cancel, or closing the dialog, discards the hand-off.
 */
import {
  accountName,
  afterProof,
  api,
  busy,
  clockText,
  countdown,
  describeError,
  h,
  safeReturnTo,
  say,
  shortName,
  t,
  tNodes,
} from './common.js';

const POLL_MS = 2000;
const SVG = 'http://www.w3.org/2000/svg';
/** The quiet zone around a QR code, in modules (ISO/IEC 18004: 4). */
const QUIET = 4;

/**
 * The QR code as an SVG: one path of dark modules over a light square.
 *
 * @param {{size: number, rows: string[]}} qr
 */
function qrSvg(qr) {
  const side = qr.size + 2 * QUIET;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${side} ${side}`);
  svg.setAttribute('class', 'phone-qr');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', t('phone_signin.qr_label'));
  svg.setAttribute('shape-rendering', 'crispEdges');
  const light = document.createElementNS(SVG, 'rect');
  light.setAttribute('class', 'phone-qr-light');
  light.setAttribute('width', String(side));
  light.setAttribute('height', String(side));
  let path = '';
  qr.rows.forEach((row, y) => {
    for (let x = 0; x < row.length; x += 1) if (row[x] === '1') path += `M${x + QUIET} ${y + QUIET}h1v1h-1z`;
  });
  const dark = document.createElementNS(SVG, 'path');
  dark.setAttribute('class', 'phone-qr-dark');
  dark.setAttribute('d', path);
  svg.append(light, dark);
  return svg;
}

/** @param {HTMLElement} mount */
function mountPhoneSignIn(mount) {
  const returnTo = safeReturnTo(document.body.dataset.returnTo, '');
  const adding = document.body.dataset.add === '1';

  const opener = h('button', { type: 'button', class: 'link', text: t('phone_signin.open') });
  const title = h('h2', { id: 'phone-signin-title', text: t('phone_signin.title') });
  const scan = h('p', { class: 'hint', text: t('phone_signin.scan') });
  const qrHolder = h('div', {});
  const code = h('p', { id: 'phone-signin-code' });
  const clock = h('p', { class: 'countdown' });
  const status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  const error = h('p', { class: 'form-error', role: 'alert' });
  const question = h('p', { id: 'phone-signin-question', class: 'phone-question' });
  const questionHint = h('p', { class: 'hint' });
  const confirm = h('button', { type: 'button', class: 'button', text: t('phone_signin.confirm') });
  const cancel = h('button', { type: 'button', class: 'button secondary', text: t('phone_signin.cancel') });
  const asking = h(
    'div',
    { class: 'phone-confirm', hidden: true },
    question,
    questionHint,
    h('div', { class: 'actions' }, confirm, cancel),
  );
  const again = h('button', { type: 'button', class: 'button', hidden: true, text: t('phone_signin.new_code') });
  const close = h('button', { type: 'button', class: 'button secondary', text: t('phone_signin.close') });
  const closing = h('div', { class: 'actions' }, again, close);
  const dialog = h(
    'dialog',
    { class: 'phone-dialog', 'aria-labelledby': 'phone-signin-title', 'aria-describedby': 'phone-signin-code' },
    title,
    scan,
    qrHolder,
    code,
    asking,
    clock,
    status,
    error,
    closing,
  );
  mount.append(opener, dialog);

  /** Ends this hand-off's polling and countdown; a newer one ends the older. */
  let stop = () => {};
  /** The hand-off whose approval the dialog asks about, until it is confirmed, cancelled or ends. */
  /** @type {{id: string, token: string, address: string} | null} */
  let asked = null;

  /** Leaves the question: the QR code's part of the dialog again. */
  function unask() {
    asked = null;
    asking.hidden = true;
    closing.hidden = false;
  }

  /** Shows an ended hand-off: the reason, and a new code to ask for. @param {string} text */
  function ended(text) {
    stop();
    unask();
    qrHolder.replaceChildren();
    say(status, '');
    say(error, text);
    again.hidden = false;
    again.focus();
  }

  /** The phone approved with `address`: asks whether to sign in as it. @param {{id: string, token: string}} handoff @param {string} address */
  function ask(handoff, address) {
    asked = { id: handoff.id, token: handoff.token, address };
    qrHolder.replaceChildren();
    scan.hidden = true;
    code.hidden = true;
    say(status, '');
    const name = shortName({ did_oc: '', display_identity: { kind: 'btc', value: address } });
    question.replaceChildren(...tNodes('phone_signin.confirm_question', { name: h('strong', { class: 'mono', text: name }) }));
    questionHint.replaceChildren(...tNodes('phone_signin.confirm_hint', { address: h('span', { class: 'mono', text: address }) }));
    closing.hidden = true;
    asking.hidden = false;
    dialog.setAttribute('aria-describedby', 'phone-signin-question');
    confirm.focus();
  }

  /** Cancel, or closing the dialog while it asks: the hand-off is discarded on the server, so its approval signs nobody in. */
  function discard() {
    const handoff = asked;
    if (handoff === null) return Promise.resolve(null);
    asked = null;
    return api('POST', '/api/auth/handoff/cancel', { id: handoff.id, token: handoff.token });
  }

  async function begin() {
    stop();
    unask();
    scan.hidden = false;
    code.hidden = false;
    dialog.setAttribute('aria-describedby', 'phone-signin-code');
    again.hidden = true;
    say(error, '');
    qrHolder.replaceChildren();
    code.textContent = '';
    clock.textContent = '';
    const started = await api('POST', '/api/auth/handoff', returnTo === '' ? {} : { return_to: returnTo });
    if (!dialog.open) return;
    if (!started.ok) {
      ended(describeError(started));
      return;
    }
    const handoff = started.body;
    let live = true;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const stopClock = countdown(
      clock,
      String(handoff.expires_at),
      (left) => t('phone_signin.expires', { clock: clockText(left) }),
      () => {},
      started.date,
    );
    stop = () => {
      live = false;
      clearTimeout(timer);
      stopClock();
    };
    qrHolder.replaceChildren(qrSvg(handoff.qr));
    const spaced = `${String(handoff.code).slice(0, 3)} ${String(handoff.code).slice(3)}`;
    code.replaceChildren(...tNodes('phone_signin.code', { code: h('strong', { class: 'phone-code mono', text: spaced }) }));
    say(status, t('phone_signin.waiting'));

    const poll = async () => {
      const claimed = await api('POST', `/api/auth/handoff/claim${adding ? '?add=1' : ''}`, { id: handoff.id, token: handoff.token });
      if (!live) return;
      const state = claimed.ok ? claimed.body.status : null;
      if (state === 'pending') {
        timer = setTimeout(poll, POLL_MS);
      } else if (state === 'approved') {
        clearTimeout(timer);
        ask(handoff, String(claimed.body.address));
      } else if (state === 'declined') {
        ended(t('phone_signin.declined'));
      } else if (state === 'expired') {
        ended(t('phone_signin.expired'));
      } else if (claimed.code === 'network') {
        // A dropped connection is not the end of the hand-off: try again.
        timer = setTimeout(poll, POLL_MS);
      } else {
        ended(describeError(claimed, ERRORS()));
      }
    };
    timer = setTimeout(poll, POLL_MS);
  }

  /** Confirm: the claim that names the approving address back signs this browser in. */
  async function confirmAsked() {
    const handoff = asked;
    if (handoff === null) return;
    const body = { id: handoff.id, token: handoff.token, confirm_address: handoff.address };
    const claimed = await api('POST', `/api/auth/handoff/claim${adding ? '?add=1' : ''}`, body);
    if (asked !== handoff) return;
    const state = claimed.ok ? claimed.body.status : null;
    if (state === 'signed_in') {
      stop();
      asked = null;
      say(status, t('phone_signin.signed_in', { name: accountName(claimed.body.account) }));
      const next = safeReturnTo(claimed.body.return_to ?? undefined, returnTo === '' ? '/account' : returnTo);
      window.location.assign(afterProof(next));
    } else if (state === 'expired') {
      ended(t('phone_signin.expired'));
    } else if (state === 'declined') {
      ended(t('phone_signin.declined'));
    } else if (claimed.code === 'network') {
      say(error, describeError(claimed));
    } else {
      ended(describeError(claimed, ERRORS()));
    }
  }

  opener.addEventListener('click', () => {
    dialog.showModal();
    close.focus();
    void busy(again, begin);
  });
  again.addEventListener('click', () => void busy(again, begin));
  close.addEventListener('click', () => dialog.close());
  confirm.addEventListener('click', () => void busy(confirm, confirmAsked));
  cancel.addEventListener(
    'click',
    () =>
      void busy(cancel, async () => {
        await discard();
        ended(t('phone_signin.cancelled'));
      }),
  );
  // Escape (cancel) and Close both end here: no polling behind a closed dialog, no approval left to claim, and focus goes back.
  dialog.addEventListener('close', () => {
    // Queued by a closing that a reopening has already followed: the new opening goes on.
    if (dialog.open) return;
    stop();
    void discard();
    unask();
    opener.focus();
  });
}

/** The hand-off's own refusals, in this dialog's words. */
const ERRORS = () => ({ handoff_used: t('phone_signin.used'), handoff_mismatch: t('phone_signin.mismatch') });

const mount = document.getElementById('phone-signin');
if (mount) mountPhoneSignIn(mount);
