/**
 * The contact-form relay of docs/protocol.md §6 (`POST /api/contact {email,
 * message, name?, subject?}`, message at most 5,000 characters, relayed
 * through the mailer to `CONTACT_TO`, answer `{ok: true}`).
 *
 * Decisions where the protocol is silent:
 * - Limits: name at most 100 characters, subject at most 200, counted in
 *   Unicode code points like the message. Name and subject are trimmed; empty
 *   means absent.
 * - Name and subject end up in a mail header (the subject), so a line break
 *   (CR, LF, U+2028, U+2029) or any other control character there is refused
 *   with `bad_request`, never silently stripped: a header injection attempt is
 *   not a message worth delivering. The message body may hold line breaks and
 *   tabs, but no other control characters.
 * - The mail is sent `From: MAIL_FROM` (the service), with `Reply-To` set to
 *   the sender's address. Sending "from" the visitor's address would fail
 *   SPF/DMARC and let anyone forge mail in their name; replying still reaches
 *   them. The visitor's name and address are repeated in the body.
 * - `website` is a honeypot: a field the form hides from people, which only
 *   bots fill in. When it is filled the relay answers `{ok: true}` and sends
 *   nothing, so the bot learns nothing to adapt to. It is checked before any
 *   validation for the same reason.
 * - `CONTACT_TO` unset: `not_found` (404, "contact: not configured"): on such a
 *   deployment the relay does not exist, and a client can tell that apart
 *   from a transient 503.
 * - Rate limits (5 per hour per IP, docs/protocol.md §4) and the same-origin rule
 *   are applied by the HTTP layer, not here.
 */
import { OcError } from '../../platform/errors.js';
import { escapeHtml, isSaneEmail, normalizeEmail } from '../../platform/mail/index.js';
import type { Mailer } from '../../platform/mail/index.js';

/** docs/protocol.md §6: "message at most 5,000 characters". */
export const MAX_CONTACT_MESSAGE_LENGTH = 5000;
export const MAX_CONTACT_NAME_LENGTH = 100;
export const MAX_CONTACT_SUBJECT_LENGTH = 200;

/** Control characters and the Unicode line/paragraph separators: never in a one-line field. */
const FORBIDDEN_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
/** In the message: the same, except tab, LF and CR. */
const FORBIDDEN_IN_MESSAGE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

export interface ContactInput {
  readonly email: unknown;
  readonly message: unknown;
  readonly name?: unknown;
  readonly subject?: unknown;
  /** Honeypot: people leave it empty. */
  readonly website?: unknown;
}

export interface ContactRelayOptions {
  readonly mailer: Mailer;
  /** `CONTACT_TO`; undefined turns the relay off. */
  readonly contactTo: string | undefined;
  readonly now: () => Date;
}

export interface ContactRelay {
  /**
   * @throws OcError `not_found` (not configured), `bad_request` (detail names
   *   the field), `mail_unavailable`.
   */
  relay(input: ContactInput): Promise<{ ok: true }>;
}

/** Characters as people count them: code points, so an emoji is one, not two UTF-16 units. */
function codePoints(text: string): number {
  return Array.from(text).length;
}

/** An optional one-line field: trimmed, empty means absent. */
function optionalLine(field: string, value: unknown, max: number): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new OcError('bad_request', `${field}: must be a string`);
  // Checked before trimming: trimming would quietly remove a trailing CR/LF injection attempt.
  if (FORBIDDEN_IN_LINE.test(value)) throw new OcError('bad_request', `${field}: must be a single line without control characters`);
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  if (codePoints(trimmed) > max) throw new OcError('bad_request', `${field}: must be at most ${max} characters`);
  return trimmed;
}

function requiredMessage(value: unknown): string {
  if (typeof value !== 'string') throw new OcError('bad_request', 'message: must be a string');
  if (value.trim() === '') throw new OcError('bad_request', 'message: must not be empty');
  if (codePoints(value) > MAX_CONTACT_MESSAGE_LENGTH) {
    throw new OcError('bad_request', `message: must be at most ${MAX_CONTACT_MESSAGE_LENGTH} characters`);
  }
  if (FORBIDDEN_IN_MESSAGE.test(value)) throw new OcError('bad_request', 'message: must not hold control characters');
  return value.replace(/\r\n?/g, '\n');
}

function honeypotFilled(value: unknown): boolean {
  if (value === undefined || value === null) return false;
  return typeof value !== 'string' || value.trim() !== '';
}

export function createContactRelay(options: ContactRelayOptions): ContactRelay {
  const { mailer, now } = options;
  const contactTo = options.contactTo?.trim();
  // A bad CONTACT_TO is an operator mistake: stop the start, do not fail each request (docs/architecture.md Errors).
  if (contactTo !== undefined && !isSaneEmail(contactTo.toLowerCase())) {
    throw new TypeError('contact: CONTACT_TO must be a single e-mail address such as team@example.com');
  }

  async function relay(input: ContactInput): Promise<{ ok: true }> {
    if (contactTo === undefined) throw new OcError('not_found', 'contact: not configured');
    if (typeof input !== 'object' || input === null) throw new OcError('bad_request', 'body: must be an object');
    if (honeypotFilled(input.website)) return { ok: true };

    const email = normalizeEmail(input.email, 'email');
    const message = requiredMessage(input.message);
    const name = optionalLine('name', input.name, MAX_CONTACT_NAME_LENGTH);
    const subject = optionalLine('subject', input.subject, MAX_CONTACT_SUBJECT_LENGTH);
    const receivedAt = now().toISOString();

    const sender = name === undefined ? email : `${name} <${email}>`;
    const text = [
      `From: ${sender}`,
      `Subject: ${subject ?? '(none)'}`,
      `Received: ${receivedAt}`,
      '',
      message,
      '',
      '-- ',
      'Sent through the contact form. Reply to this e-mail to answer the sender.',
      '',
    ].join('\n');
    const html = [
      '<!doctype html>',
      '<html><body style="font-family: sans-serif; line-height: 1.5">',
      `<p><strong>From:</strong> ${escapeHtml(sender)}<br>`,
      `<strong>Subject:</strong> ${escapeHtml(subject ?? '(none)')}<br>`,
      `<strong>Received:</strong> ${escapeHtml(receivedAt)}</p>`,
      `<pre style="white-space: pre-wrap; font-family: inherit">${escapeHtml(message)}</pre>`,
      '<p style="color: #666">Sent through the contact form. Reply to this e-mail to answer the sender.</p>',
      '</body></html>',
      '',
    ].join('\n');

    await mailer.send({
      to: contactTo,
      subject: `Contact form: ${subject ?? `message from ${name ?? email}`}`,
      text,
      html,
      replyTo: email,
    });
    return { ok: true };
  }

  return { relay };
}

declare module '../../platform/services.js' {
  interface FeatureServices {
    /** The contact-form relay (docs/protocol.md §6). */
    readonly contact: ContactRelay;
  }
}
