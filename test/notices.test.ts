/**
 * The new sign-in notice (docs/protocol.md §6 "New sign-in notice"): mailed
 * through a real SMTP server on loopback to the account's e-mail addresses
 * when a sign-in comes from a device and network the account has not used,
 * never for a new account or a known place, never holding a full address;
 * on by default with SMTP, and a failing mailer never fails the sign-in.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSignInNotice, SignInNotices } from '../src/identity/account/notices.js';
import { loadConfig } from '../src/platform/config.js';
import { OcError } from '../src/platform/errors.js';
import type { Mailer, MailMessage } from '../src/platform/mail/index.js';
import { AuthHarness, type TimedBrowser } from './support/auth-harness.js';
import { MINUTE } from './support/clock.js';
import { extractCode, startSmtpServer, type ReceivedMail, type TestSmtpServer } from './support/smtp-server.js';
import { formatUtc } from '../src/platform/i18n/index.js';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0';
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

describe('new sign-in notices over SMTP', () => {
  let smtp: TestSmtpServer;
  let harness: AuthHarness;
  let app: FastifyInstance;
  let quiet: FastifyInstance;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    harness = await AuthHarness.open('sqlite');
    app = await harness.app({ SMTP_URL: smtp.url, RATE_LIMIT_OTP_PER_HOUR: '0' });
    quiet = await harness.app({ SMTP_URL: smtp.url, RATE_LIMIT_OTP_PER_HOUR: '0', NOTIFY_NEW_SIGNIN: 'false' });
  });
  afterAll(async () => {
    await harness?.close();
    await smtp?.close();
  });

  function browser(on: FastifyInstance, userAgent: string, remoteAddress: string): TimedBrowser {
    const client = harness.browser(on);
    client.userAgent = userAgent;
    client.remoteAddress = remoteAddress;
    return client;
  }

  const notices = (to: string): ReceivedMail[] =>
    smtp.messages().filter((mail) => mail.envelope.to.includes(to) && (mail.subject ?? '').startsWith('New sign-in'));

  async function signInByEmail(client: TimedBrowser, email: string): Promise<void> {
    const before = smtp.messages().length;
    const started = await client.post('/api/auth/email-otp/start', { email });
    expect(started.status).toBe(200);
    const mail = await smtp.waitForMessage(
      (received) =>
        received.envelope.to.includes(email) &&
        smtp.messages().indexOf(received) >= before &&
        (received.subject ?? '').includes('sign-in code'),
    );
    const verified = await client.post('/api/auth/email-otp/verify', { email, code: extractCode(mail), token: started.body.token });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
  }

  /** Waits until the notices in flight are out: a sign-in's notice is mailed after its response. */
  async function settle(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, 300));
  }

  it('mails the account on a sign-in from a new device, once, and not for the first sign-in or a known place', async () => {
    const email = 'notice-one@example.org';
    await signInByEmail(browser(app, IPHONE, '203.0.113.9'), email);
    await settle();
    expect(notices(email)).toHaveLength(0); // the account was created by this sign-in
    harness.clock.advance(5 * MINUTE);
    await signInByEmail(browser(app, IPHONE, '203.0.113.200'), email); // same device, same /24
    await settle();
    expect(notices(email)).toHaveLength(0);

    await signInByEmail(browser(app, FIREFOX, '198.51.100.77'), email);
    const mail = await smtp.waitForMessage(
      (received) => received.envelope.to.includes(email) && (received.subject ?? '').startsWith('New sign-in'),
    );
    expect(mail.subject).toBe('New sign-in to localhost:8787');
    expect(mail.text).toContain('Firefox 140 on Linux');
    expect(mail.text).toContain('198.51.100.0/24');
    expect(mail.text).toContain('an e-mail code');
    expect(mail.text).toContain(formatUtc(new Date(harness.clock.ms), 'en'));
    expect(mail.text).toContain('http://localhost:8787/account');
    expect(mail.text).toContain('Sign out everywhere else');
    expect(mail.raw).not.toContain('198.51.100.77');

    harness.clock.advance(MINUTE);
    await signInByEmail(browser(app, FIREFOX, '198.51.100.5'), email);
    await settle();
    expect(notices(email)).toHaveLength(1);
  });

  it('is off with NOTIFY_NEW_SIGNIN=false', async () => {
    const email = 'notice-quiet@example.org';
    await signInByEmail(browser(quiet, IPHONE, '203.0.113.9'), email);
    harness.clock.advance(5 * MINUTE);
    await signInByEmail(browser(quiet, FIREFOX, '192.0.2.1'), email);
    await settle();
    expect(notices(email)).toHaveLength(0);
  });
});

describe('new sign-in notice parts', () => {
  it('is on by default only with SMTP_URL, and NOTIFY_NEW_SIGNIN decides when set', () => {
    expect(loadConfig({}).notifyNewSignin).toBe(false);
    expect(loadConfig({ SMTP_URL: 'smtp://127.0.0.1:2525' }).notifyNewSignin).toBe(true);
    expect(loadConfig({ SMTP_URL: 'smtp://127.0.0.1:2525', NOTIFY_NEW_SIGNIN: 'off' }).notifyNewSignin).toBe(false);
    expect(loadConfig({ NOTIFY_NEW_SIGNIN: 'true' }).notifyNewSignin).toBe(true);
    expect(() => loadConfig({ NOTIFY_NEW_SIGNIN: 'sometimes' })).toThrow(/NOTIFY_NEW_SIGNIN/);
  });

  it('escapes what it shows in the HTML part and names each method', () => {
    const at = new Date('2026-11-25T10:00:00Z');
    const mail = composeSignInNotice({ method: 'oauth:github', device: '<b>Bot</b>', network: null }, at, 'https://auth.example.com');
    expect(mail.subject).toBe('New sign-in to auth.example.com');
    expect(mail.html).toContain('&lt;b&gt;Bot&lt;/b&gt;');
    expect(mail.html).not.toContain('<b>Bot</b>');
    expect(mail.text).toContain('github sign-in');
    expect(mail.text).toContain(formatUtc(at, 'en'));
    // In the sign-in's language.
    const german = composeSignInNotice({ method: 'email_otp', device: null, network: null, locale: 'de' }, at, 'https://auth.example.com');
    expect(german.subject).toBe('Neue Anmeldung bei auth.example.com');
    expect(german.text).toContain('ein E-Mail-Code');
    expect(german.text).toContain(formatUtc(at, 'de'));
    const phone = composeSignInNotice(
      { method: 'bip322', device: 'Safari 18 on iOS (mobile)', network: null, locale: 'fr' },
      at,
      'https://auth.example.com',
    );
    expect(phone.text).toContain('Safari 18 sur iOS (mobile)');
    expect(german.html).toContain('<html lang="de">');
    expect(composeSignInNotice({ method: 'passkey', device: null, network: null }, at, 'https://a.example').text).toContain(
      'an unknown device',
    );
  });

  it('reports a mail failure by its code, sends to at most three addresses, and never throws', async () => {
    const sent: MailMessage[] = [];
    const errors: unknown[] = [];
    const mailer: Mailer = {
      async send(message) {
        if (message.to === 'b@example.org') throw new OcError('mail_unavailable', 'mail: down');
        sent.push(message);
      },
      async close() {},
    };
    const identity = (value: string, kind = 'email') => ({ id: value, account_id: 'a', kind, value, verified: true, created_at: 0 });
    const notices = new SignInNotices({
      store: {
        findAccount: async () => ({
          id: 'a',
          kind: 'federated' as const,
          display_name: null,
          display_identity_kind: null,
          primary_btc: null,
          merged_into: null,
          created_at: 0,
          updated_at: 0,
          disabled_at: null,
          deleted_at: null,
        }),
        listIdentities: async () =>
          [
            identity('bc1qexample', 'btc'),
            identity('a@example.org'),
            identity('b@example.org'),
            identity('c@example.org'),
            identity('d@example.org'),
          ] as never,
        listActivity: async () => [],
      },
      mailer,
      publicUrl: 'https://auth.example.com',
      now: () => new Date(10 * MINUTE),
      onError: (error) => errors.push(error),
    });
    const pending = await notices.assess('a', { method: 'bip322', device: 'Chrome 140 on macOS', network: '192.0.2.0/24' });
    expect(pending).not.toBeNull();
    expect(await notices.send(pending!)).toBe(2);
    expect(sent.map((message) => message.to)).toEqual(['a@example.org', 'c@example.org']);
    expect(errors).toHaveLength(1);

    const broken = new SignInNotices({
      store: {
        findAccount: async () => Promise.reject(new Error('db down')),
        listIdentities: async () => [],
        listActivity: async () => [],
      },
      mailer,
      publicUrl: 'https://auth.example.com',
      now: () => new Date(),
      onError: (error) => errors.push(error),
    });
    expect(await broken.assess('a', { method: 'bip322', device: null, network: null })).toBeNull();
    expect(errors).toHaveLength(2);
  });
});
