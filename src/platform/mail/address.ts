/**
 * E-mail addresses as the service accepts them: the one place that decides
 * what a "sane address" is, so the e-mail code sign-in and the contact relay
 * agree (docs/protocol.md §2: e-mail identities are stored lowercased; §6).
 *
 * Deliberately narrower than RFC 5321/5322: a dot-atom local part of ASCII
 * `atext` and a dotted ASCII host name. Quoted local parts, comments, address
 * literals and non-ASCII (SMTPUTF8) addresses are refused. Such addresses are
 * rare in practice, and every character they would add (quotes, spaces,
 * brackets, backslashes, look-alike Unicode) is one that makes an address
 * harder to compare, to display safely, or to put into a mail header.
 */
import { OcError } from '../errors.js';

/** RFC 5321 §4.5.3.1.3: a forward path is at most 256 octets including `<>`. */
const MAX_EMAIL_LENGTH = 254;

/** RFC 5321 §4.5.3.1.1. */
const MAX_LOCAL_PART_LENGTH = 64;

/** RFC 5322 §3.2.3 `atext`, lowercase (the input is lowercased first), in dot-atom form. */
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;

/** RFC 1035 §2.3.1 label, as IDNA A-labels (`xn--…`) are too. */
const DOMAIN_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** A top-level label is letters, or an IDNA A-label; never all digits (that would be an IP address). */
const TOP_LEVEL_LABEL = /^([a-z]{2,63}|xn--[a-z0-9-]{1,59})$/;

/**
 * Trims and lowercases `input` and checks it is a sane address; the result is
 * the form stored and compared everywhere. Lowercasing the local part too is
 * a deliberate choice of docs/protocol.md §2: no real provider tells `Alice@` from
 * `alice@`, and one account per mailbox matters more.
 *
 * @param field names the request field in the error detail (docs/protocol.md §4:
 *   `detail` names the field).
 * @throws OcError `bad_request` with detail `<field>: …`.
 */
export function normalizeEmail(input: unknown, field = 'email'): string {
  if (typeof input !== 'string') throw new OcError('bad_request', `${field}: must be a string`);
  const email = input.trim().toLowerCase();
  if (email.length === 0) throw new OcError('bad_request', `${field}: must not be empty`);
  if (email.length > MAX_EMAIL_LENGTH) {
    throw new OcError('bad_request', `${field}: must be at most ${MAX_EMAIL_LENGTH} characters`);
  }
  if (!isSaneEmail(email)) throw new OcError('bad_request', `${field}: must be an e-mail address such as name@example.com`);
  return email;
}

/** True when `email` (already lowercased) is an address {@link normalizeEmail} accepts. */
export function isSaneEmail(email: string): boolean {
  if (email.length > MAX_EMAIL_LENGTH) return false;
  const at = email.lastIndexOf('@');
  if (at <= 0 || at !== email.indexOf('@')) return false;
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (local.length > MAX_LOCAL_PART_LENGTH || !LOCAL_PART.test(local)) return false;
  const labels = domain.split('.');
  // At least two labels: a bare host (`root@localhost`) is no address that can receive mail from the internet.
  if (labels.length < 2) return false;
  if (!labels.every((label) => DOMAIN_LABEL.test(label))) return false;
  return TOP_LEVEL_LABEL.test(labels[labels.length - 1] ?? '');
}
