/**
 * The contact-form relay (docs/protocol.md §6 `/api/contact`) through a real SMTP
 * server on loopback.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_CONTACT_MESSAGE_LENGTH,
  MAX_CONTACT_NAME_LENGTH,
  MAX_CONTACT_SUBJECT_LENGTH,
  createContactRelay,
  type ContactInput,
  type ContactRelay,
} from '../src/features/contact/index.js';
import { createSmtpMailer, type Mailer } from '../src/platform/mail/index.js';
import { useSmtpServer } from './support/auth-harness.js';
import { ocFailure } from './support/errors.js';

const CONTACT_TO = 'team@example.com';
const FROM = 'oc-host <no-reply@auth.example.com>';
const T0 = new Date(Date.UTC(2025, 0, 15, 12, 0, 0));

describe('contact relay', () => {
  const smtp = useSmtpServer();
  let mailer: Mailer;
  let relay: ContactRelay;

  beforeAll(async () => {
    mailer = createSmtpMailer({ smtpUrl: smtp.url, from: FROM, publicUrl: 'https://auth.example.com' });
    relay = createContactRelay({ mailer, contactTo: CONTACT_TO, now: () => T0 });
  });
  afterEach(() => smtp.setMode('accept'));
  afterAll(async () => {
    await mailer?.close();
  });

  it('relays a message to CONTACT_TO with Reply-To set to the sender', async () => {
    const result = await relay.relay({
      email: ' Visitor@Example.ORG ',
      name: 'Ada Lovelace',
      subject: 'Question about bonds',
      message: 'Hello,\r\nhow do bonds work? <script>alert(1)</script> & more',
    });
    expect(result).toEqual({ ok: true });

    const mail = await smtp.waitForMessage((received) => received.subject?.includes('Question about bonds') === true);
    expect(mail.envelope.to).toEqual([CONTACT_TO]);
    expect(mail.header('To')).toBe(CONTACT_TO);
    // Sent as the service (SPF/DMARC), answerable to the visitor.
    expect(mail.header('From')).toBe('"oc-host" <no-reply@auth.example.com>');
    expect(mail.envelope.from).toBe('no-reply@auth.example.com');
    expect(mail.header('Reply-To')).toBe('visitor@example.org');
    expect(mail.subject).toBe('Contact form: Question about bonds');
    expect(mail.text).toContain('From: Ada Lovelace <visitor@example.org>');
    expect(mail.text).toContain('Hello,\nhow do bonds work? <script>alert(1)</script> & more');
    expect(mail.text).toContain('2025-01-15T12:00:00.000Z');
    expect(mail.html).toContain('how do bonds work? &lt;script&gt;alert(1)&lt;/script&gt; &amp; more');
    expect(mail.html).toContain('Ada Lovelace &lt;visitor@example.org&gt;');
    expect(mail.html).not.toContain('<script>');
  });

  it('works without name and subject', async () => {
    const before = smtp.messages().length;
    await relay.relay({ email: 'plain@example.org', message: 'Just a note.', name: '  ', subject: '' });
    const mails = smtp.messages().slice(before);
    expect(mails).toHaveLength(1);
    expect(mails[0]?.subject).toBe('Contact form: message from plain@example.org');
    expect(mails[0]?.text).toContain('From: plain@example.org\n');
    expect(mails[0]?.header('Reply-To')).toBe('plain@example.org');
  });

  it('accepts a message of exactly 5,000 characters, counted as code points', async () => {
    const before = smtp.messages().length;
    await relay.relay({ email: 'long@example.org', message: `${'€'.repeat(MAX_CONTACT_MESSAGE_LENGTH - 1)}😀` });
    expect(smtp.messages().length).toBe(before + 1);
    expect(smtp.messages()[before]?.text).toContain('€'.repeat(100));
  });

  const valid = { email: 'someone@example.org', message: 'Hello' };
  const invalidInputs: Array<[string, ContactInput, RegExp]> = [
    ['a missing e-mail', { ...valid, email: undefined }, /^email: must be a string/],
    ['a malformed e-mail', { ...valid, email: 'not-an-address' }, /^email: must be an e-mail address/],
    ['an e-mail with a line break', { ...valid, email: 'a@example.org\r\nBcc: victim@example.com' }, /^email: /],
    ['a missing message', { email: valid.email, message: undefined }, /^message: must be a string/],
    ['an empty message', { ...valid, message: '' }, /^message: must not be empty/],
    ['a blank message', { ...valid, message: ' \n\t ' }, /^message: must not be empty/],
    [
      'a message over 5,000 characters',
      { ...valid, message: 'x'.repeat(MAX_CONTACT_MESSAGE_LENGTH + 1) },
      /^message: must be at most 5000/,
    ],
    ['a message with a NUL', { ...valid, message: 'a\u0000b' }, /^message: must not hold control characters/],
    ['a name that is not a string', { ...valid, name: 42 }, /^name: must be a string/],
    ['a name over 100 characters', { ...valid, name: 'n'.repeat(MAX_CONTACT_NAME_LENGTH + 1) }, /^name: must be at most 100/],
    ['a subject over 200 characters', { ...valid, subject: 's'.repeat(MAX_CONTACT_SUBJECT_LENGTH + 1) }, /^subject: must be at most 200/],
    ['a subject that is not a string', { ...valid, subject: ['x'] }, /^subject: must be a string/],
  ];

  it.each(invalidInputs)('refuses %s with bad_request naming the field', async (_label, input, detail) => {
    const before = smtp.messages().length;
    const error = await ocFailure(relay.relay(input));
    expect(error.code).toBe('bad_request');
    expect(error.status).toBe(400);
    expect(error.detail).toMatch(detail);
    expect(smtp.messages()).toHaveLength(before);
  });

  it('accepts name and subject at their limits', async () => {
    const before = smtp.messages().length;
    await relay.relay({
      ...valid,
      name: 'n'.repeat(MAX_CONTACT_NAME_LENGTH),
      subject: 's'.repeat(MAX_CONTACT_SUBJECT_LENGTH),
    });
    expect(smtp.messages()).toHaveLength(before + 1);
  });

  it.each([
    ['subject', 'Hello\r\nBcc: victim@example.com'],
    ['subject', 'Hello\nBcc: victim@example.com'],
    ['subject', 'Hello\r'],
    ['subject', 'Hello\u2028Bcc: victim@example.com'],
    ['name', 'Eve\r\nBcc: victim@example.com'],
    ['name', 'Eve\n'],
    ['name', 'Eve\u0007'],
  ])('refuses a header injection attempt in %s (%j) and sends nothing', async (field, value) => {
    const before = smtp.messages().length;
    const error = await ocFailure(relay.relay({ ...valid, [field]: value }));
    expect(error.code).toBe('bad_request');
    expect(error.detail).toMatch(new RegExp(`^${field}: must be a single line`));
    expect(smtp.messages()).toHaveLength(before);
  });

  it('pretends success and sends nothing when the honeypot is filled', async () => {
    const before = smtp.messages().length;
    await expect(relay.relay({ ...valid, website: 'https://spam.example' })).resolves.toEqual({ ok: true });
    // Even with otherwise invalid fields: a bot learns nothing from the answer.
    await expect(relay.relay({ email: 'nope', message: '', website: 'x' })).resolves.toEqual({ ok: true });
    expect(smtp.messages()).toHaveLength(before);
    // An empty honeypot is what people send.
    await expect(relay.relay({ ...valid, website: '' })).resolves.toEqual({ ok: true });
    expect(smtp.messages()).toHaveLength(before + 1);
  });

  it('passes mail_unavailable on when the mail cannot be sent', async () => {
    smtp.setMode('reject-data');
    const error = await ocFailure(relay.relay(valid));
    expect(error.code).toBe('mail_unavailable');
    expect(error.status).toBe(503);
  });
});

describe('contact relay configuration', () => {
  const mailer: Mailer = {
    send: async () => {
      throw new Error('must not send');
    },
    close: async () => {},
  };

  it('answers not_found when CONTACT_TO is unset', async () => {
    const relay = createContactRelay({ mailer, contactTo: undefined, now: () => T0 });
    const error = await ocFailure(relay.relay({ email: 'someone@example.org', message: 'Hello' }));
    expect(error.code).toBe('not_found');
    expect(error.status).toBe(404);
    expect(error.detail).toBe('contact: not configured');
  });

  it('refuses a CONTACT_TO that is not one address at creation', () => {
    for (const contactTo of ['', 'not-an-address', 'a@example.com, b@example.com', 'Team <team@example.com>']) {
      expect(() => createContactRelay({ mailer, contactTo, now: () => T0 })).toThrow(/CONTACT_TO/);
    }
  });
});
