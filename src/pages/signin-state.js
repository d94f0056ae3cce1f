/**
 * What the ways in of the sign-in page share (src/pages/signin.js): where
 * the person is going, whether a new account joins this browser's roster,
 * the page's status lines, the way this browser used last, and what every
 * way does once it has signed in.
 */
import { afterProof, byId, h, safeReturnTo, say, t } from './common.js';

export const DEFAULT_RETURN_TO = '/account';

export const returnTo = safeReturnTo(document.body.dataset.returnTo, DEFAULT_RETURN_TO);

/** Whether a new account joins this browser's roster: `add=1`, or "Use another account" from "Continue as". */
let adding = document.body.dataset.add === '1';

export function isAdding() {
  return adding;
}

/** @param {boolean} value */
export function setAdding(value) {
  adding = value;
}

/** `?add=1` for the sign-in calls while a new account joins the roster. */
export const addQuery = () => (adding ? '?add=1' : '');

export const pageError = byId('page-error');
export const pageStatus = byId('page-status');
const notice = byId('notice');
/** The card's first step: the ways in. */
export const ways = byId('ways');

/** This browser remembers the way it last signed in, to mark it next time (nothing leaves the browser). */
const LAST_WAY_KEY = 'oc-last-sign-in';

/** @param {string} way `wallet:<id>`, `btc`, `email`, `passkey` or `provider:<id>` */
export function remember(way) {
  try {
    localStorage.setItem(LAST_WAY_KEY, way);
  } catch {
    // storage may be off; then nothing is marked
  }
}

/** The way this browser signed in last, or null. */
export function lastWay() {
  try {
    return localStorage.getItem(LAST_WAY_KEY);
  } catch {
    return null;
  }
}

/** A "Last used" badge after the way's button. @param {Element | null} element */
export function markLastUsed(element) {
  if (element && !element.nextElementSibling?.classList.contains('badge')) {
    element.after(h('span', { class: 'badge', text: t('signin.last_used') }));
  }
}

/** After any successful sign-in: go where the person was going. @param {string} [way] what to mark next time */
export function done(way) {
  if (way) remember(way);
  say(pageStatus, t('signin.signed_in'));
  window.location.assign(afterProof(returnTo));
}

/**
 * A notice above the ways, which stays until the page is left.
 *
 * @param {string} text
 * @param {boolean} [warning] shown as a refusal
 */
export function showNotice(text, warning = true) {
  notice.replaceChildren(text);
  notice.classList.toggle('error', warning);
  notice.hidden = false;
}

/**
 * A new way chosen: messages about the other ways are stale now. The page's
 * status and every way's error go; the way being used speaks for itself.
 */
export function startingOver() {
  say(pageStatus, '');
  for (const id of ['btc-error', 'email-error', 'passkey-error', 'btc-wallet-status']) say(byId(id), '');
}
