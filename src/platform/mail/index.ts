/**
 * Outgoing mail (docs/protocol.md §1 `SMTP_URL`, `MAIL_FROM`) and the one
 * definition of an acceptable e-mail address.
 */
export {
  OUTBOX_WARNING,
  createMailer,
  createOutboxMailer,
  createSmtpMailer,
} from './mailer.js';
export type {
  MailLog,
  MailMessage,
  Mailer,
} from './mailer.js';
export { isSaneEmail, normalizeEmail } from './address.js';
export { escapeHtml } from './html.js';
export { frameMail, mailBrandOf } from './brand.js';
export type { MailBrand } from './brand.js';
