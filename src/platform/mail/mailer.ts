/**
 * Outgoing mail: the one interface the e-mail code sign-in and the contact
 * relay send through, with two implementations.
 *
 * - SMTP (`SMTP_URL` set, docs/protocol.md §1), through nodemailer: every message
 *   has a plain-text and an HTML part, `From: MAIL_FROM`, a `Date`, and a
 *   `Message-ID` on the service's own domain (the host of `PUBLIC_URL`), which
 *   keeps spam filters and threading happy.
 * - The development outbox (`SMTP_URL` unset, docs/protocol.md §1): each message is
 *   written as an `.eml` file under `./data/outbox/` instead of being sent.
 *   The caller warns loudly at start with {@link OUTBOX_WARNING}.
 *
 * Failure to send is `OcError('mail_unavailable')` (503) and nothing more: the
 * SMTP server's reply can name hosts, accounts or policies, so it travels only
 * as the error's `cause`, for the caller's log, never in a response.
 *
 * Logs never hold an address, a subject or a body: they would carry the
 * recipient's identity and, for sign-in mail, the code itself (docs/architecture.md).
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import type { Config } from '../config.js';
import { randomHex } from '../crypto.js';
import { OcError } from '../errors.js';

/** One message. Addresses are bare (`name@example.com`), already validated by the caller. */
export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** Where replies go; the contact relay sets the sender's address here. */
  readonly replyTo?: string | undefined;
}

export interface Mailer {
  /** Resolves once the message is handed over; throws `OcError('mail_unavailable')` otherwise. */
  send(message: MailMessage): Promise<void>;
  /** Releases connections; safe to call twice. */
  close(): Promise<void>;
}

/** What the mailers log through; a pino/Fastify logger fits. */
export interface MailLog {
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
}

/**
 * Connection, greeting and socket timeouts, ms. nodemailer's defaults (2 min
 * to connect, 30 s for the greeting, 10 min of socket idle) would hold a
 * sign-in request open for minutes when the SMTP server is dead; a few seconds
 * is plenty for a healthy one and lets the request fail fast with 503.
 */
interface SmtpTimeouts {
  readonly connectionMs: number;
  readonly greetingMs: number;
  readonly socketMs: number;
}

const DEFAULT_SMTP_TIMEOUTS: SmtpTimeouts = Object.freeze({
  connectionMs: 5_000,
  greetingMs: 5_000,
  socketMs: 10_000,
});

/** docs/protocol.md §1: where mail goes without `SMTP_URL`. */
const DEFAULT_OUTBOX_DIR = './data/outbox';

/**
 * Logged (as a warning) at start when `SMTP_URL` is unset: docs/protocol.md §1 asks
 * to say loudly that mail, sign-in codes included, is not being delivered.
 */
export const OUTBOX_WARNING =
  'mail: SMTP_URL is not set, so NO e-mail is sent. Sign-in codes and contact messages are written as files to ' +
  'the development outbox instead. This is for development only: set SMTP_URL (and MAIL_FROM) in production.';

/** The one detail a client sees when mail fails; the SMTP reply stays in `cause`. */
const MAIL_FAILED = 'mail: the message could not be sent, try again later';

/** Header fields must not break a line (RFC 5322 §2.2): a CR or LF would start a new header. */
const LINE_BREAK = /[\r\n]/;

export interface SmtpMailerOptions {
  /** `SMTP_URL`: `smtp://` or `smtps://`, credentials and nodemailer options in the URL as usual. */
  readonly smtpUrl: string;
  /** `MAIL_FROM`, e.g. `oc-host <no-reply@example.com>`. */
  readonly from: string;
  /** `PUBLIC_URL`; its host names the Message-ID domain. */
  readonly publicUrl: string;
  readonly timeouts?: Partial<SmtpTimeouts> | undefined;
  /** Clock for the `Date` header; defaults to the system clock. */
  readonly now?: (() => Date) | undefined;
}

export interface OutboxMailerOptions {
  /** Default {@link DEFAULT_OUTBOX_DIR}. */
  readonly dir?: string | undefined;
  readonly log: MailLog;
  /** Written as `From` so the files look like what SMTP would have sent. */
  readonly from?: string | undefined;
  readonly publicUrl?: string | undefined;
  readonly now?: (() => Date) | undefined;
}

function assertSetting(name: string, value: string): void {
  // Programmer or operator misuse: fail at start, not on the first sign-in (docs/architecture.md Errors).
  if (typeof value !== 'string' || value.trim() === '' || LINE_BREAK.test(value)) {
    throw new TypeError(`mail: ${name} must be a non-empty single line`);
  }
}

function messageIdDomain(publicUrl: string | undefined): string {
  if (publicUrl === undefined) return 'localhost';
  try {
    return new URL(publicUrl).hostname || 'localhost';
  } catch {
    throw new TypeError('mail: publicUrl must be a URL');
  }
}

/** RFC 5322 §3.6.4: `<unique@domain>`; 128 random bits make it unique. */
function newMessageId(domain: string): string {
  return `<${randomHex(16)}@${domain}>`;
}

/**
 * The checks every message passes before it reaches nodemailer. The domain
 * code validates its input already; this is the last line against a header
 * injection, and an empty part would be a bug.
 */
function assertMessage(message: MailMessage): void {
  for (const [name, value] of [
    ['to', message.to],
    ['subject', message.subject],
    ['replyTo', message.replyTo],
  ] as const) {
    if (value === undefined && name === 'replyTo') continue;
    if (typeof value !== 'string' || LINE_BREAK.test(value) || (name !== 'subject' && value === '')) {
      throw new TypeError(`mail: message ${name} must be a single line`);
    }
  }
  if (typeof message.text !== 'string' || typeof message.html !== 'string') {
    throw new TypeError('mail: a message needs a text and an HTML part');
  }
}

/** The nodemailer message: the same fields for SMTP and for the outbox. */
function composeMessage(message: MailMessage, from: string, messageId: string, date: Date): SendMailOptions {
  return {
    from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    html: message.html,
    ...(message.replyTo === undefined ? {} : { replyTo: message.replyTo }),
    messageId,
    date,
    // Sign-in and contact mail must not be tracked or rewritten by nodemailer:
    // no data: image conversion, no fetching of linked resources.
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

export function createSmtpMailer(options: SmtpMailerOptions): Mailer {
  assertSetting('smtpUrl', options.smtpUrl);
  assertSetting('from', options.from);
  const domain = messageIdDomain(options.publicUrl);
  const timeouts = { ...DEFAULT_SMTP_TIMEOUTS, ...options.timeouts };
  const now = options.now ?? (() => new Date());
  // Pooled: opening a connection (greeting, EHLO) cost about 100 ms against
  // the loopback server, more than the rest of an e-mail sign-in. An idle
  // pooled connection is closed after `socketTimeout` of inactivity, so none
  // lingers long enough to go stale behind a firewall.
  const transport = nodemailer.createTransport({
    url: options.smtpUrl,
    pool: true,
    maxConnections: 3,
    maxMessages: 100,
    connectionTimeout: timeouts.connectionMs,
    greetingTimeout: timeouts.greetingMs,
    socketTimeout: timeouts.socketMs,
    dnsTimeout: timeouts.connectionMs,
    // nodemailer would otherwise log envelopes (addresses) when a logger is set.
    logger: false,
    debug: false,
  });
  let closed = false;
  return {
    async send(message) {
      assertMessage(message);
      if (closed) throw new OcError('mail_unavailable', MAIL_FAILED);
      let info: { accepted: unknown[]; rejected: unknown[] };
      try {
        info = await transport.sendMail(composeMessage(message, options.from, newMessageId(domain), now()));
      } catch (error) {
        throw new OcError('mail_unavailable', MAIL_FAILED, { cause: error });
      }
      // One recipient per message: anything short of "accepted" is a failure
      // (nodemailer resolves when at least one of several recipients was accepted).
      if (info.rejected.length > 0 || info.accepted.length === 0) {
        throw new OcError('mail_unavailable', MAIL_FAILED, {
          cause: new Error('mail: the SMTP server refused the recipient'),
        });
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      transport.close();
    },
  };
}

/**
 * Development only (docs/protocol.md §1). The file holds the whole message, the
 * sign-in code included, so it is written readable by the owner only; the log
 * line names the file, never the address or the code.
 */
export function createOutboxMailer(options: OutboxMailerOptions): Mailer {
  const dir = resolve(options.dir ?? DEFAULT_OUTBOX_DIR);
  const from = options.from ?? `oc-host <no-reply@${messageIdDomain(options.publicUrl)}>`;
  assertSetting('from', from);
  const domain = messageIdDomain(options.publicUrl);
  const now = options.now ?? (() => new Date());
  // nodemailer builds the same RFC 5322 message it would send over SMTP, so a
  // developer can open the .eml in any mail client.
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(message) {
      assertMessage(message);
      const date = now();
      try {
        const info = await composer.sendMail(composeMessage(message, from, newMessageId(domain), date));
        await mkdir(dir, { recursive: true, mode: 0o700 });
        // Sortable by time, unique by the random suffix; no address in the name.
        const stamp = date.toISOString().replace(/[:.]/g, '-');
        const file = join(dir, `${stamp}-${randomHex(4)}.eml`);
        await writeFile(file, info.message, { mode: 0o600, flag: 'wx' });
        await chmod(file, 0o600);
        options.log.info({ file }, 'mail: written to the development outbox instead of being sent (SMTP_URL is not set)');
      } catch (error) {
        throw new OcError('mail_unavailable', MAIL_FAILED, { cause: error });
      }
    },
    async close() {},
  };
}

export interface CreateMailerOptions {
  readonly log: MailLog;
  /** Default {@link DEFAULT_OUTBOX_DIR}. */
  readonly outboxDir?: string | undefined;
  readonly timeouts?: Partial<SmtpTimeouts> | undefined;
  readonly now?: (() => Date) | undefined;
}

/** SMTP when `SMTP_URL` is set, else the development outbox (docs/protocol.md §1). */
export function createMailer(config: Pick<Config, 'smtpUrl' | 'mailFrom' | 'publicUrl'>, options: CreateMailerOptions): Mailer {
  if (config.smtpUrl !== undefined) {
    return createSmtpMailer({
      smtpUrl: config.smtpUrl,
      from: config.mailFrom,
      publicUrl: config.publicUrl,
      timeouts: options.timeouts,
      now: options.now,
    });
  }
  return createOutboxMailer({
    dir: options.outboxDir,
    log: options.log,
    from: config.mailFrom,
    publicUrl: config.publicUrl,
    now: options.now,
  });
}
