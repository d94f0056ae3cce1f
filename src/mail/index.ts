/**
 * Outgoing mail (docs/protocol.md §1 `SMTP_URL`, `MAIL_FROM`) and the one
 * definition of an acceptable e-mail address.
 */
export {
  DEFAULT_OUTBOX_DIR,
  DEFAULT_SMTP_TIMEOUTS,
  OUTBOX_WARNING,
  createMailer,
  createOutboxMailer,
  createSmtpMailer,
} from './mailer.js';
export type {
  CreateMailerOptions,
  MailLog,
  MailMessage,
  Mailer,
  OutboxMailerOptions,
  SmtpMailerOptions,
  SmtpTimeouts,
} from './mailer.js';
export { MAX_EMAIL_LENGTH, isSaneEmail, normalizeEmail } from './address.js';
export { escapeHtml } from './html.js';
export { frameMail, mailBrandOf } from './brand.js';
export type { MailBrand } from './brand.js';
