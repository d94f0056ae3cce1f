import type { EmailCodePageMessageKey } from './en.js';

/** Deutsch (Sie, wie in den E-Mails). */
export const emailCodePagesDe: Readonly<Record<EmailCodePageMessageKey, string>> = {
  // Anmeldeseite (signin.js)
  'signin.link_elsewhere':
    'Dieser Anmeldelink funktioniert nur in dem Browser, in dem der Code angefordert wurde. Öffnen Sie ihn dort oder geben Sie den Code aus der E-Mail in diesem Browser ein. Um sich stattdessen hier anzumelden, fahren Sie mit Ihrer E-Mail-Adresse fort und erhalten einen neuen Code.',
  'page.code_replaced':
    'Dieser Code stammt aus einer früheren E-Mail: Ein neuerer Code hat ihn ersetzt. Geben Sie den Code aus der neuesten E-Mail ein.',
  'signin.resend_in': 'Neuen Code senden (in {seconds} s)',
  'page.code_expires_in': 'Der Code läuft ab in {clock}.',
  'page.code_expired_short': 'Dieser Code ist abgelaufen.',
  'signin.code_expired': 'Der Code ist abgelaufen. Senden Sie einen neuen Code und geben Sie diesen ein.',
  'signin.code_sent_to': 'Wir haben einen Code an {email} gesendet. Er gilt 10 Minuten.',
  'page.code_digits': 'Geben Sie die 6 Ziffern aus der E-Mail ein.',
  'signin.code_dead':
    'Dieser Code ist nicht mehr gültig: Seine Versuche sind aufgebraucht oder ein neuerer Code hat ihn ersetzt. Senden Sie einen neuen Code.',
  'signin.code_wrong_tries': 'Der Code ist falsch. Noch {left, plural, one {# Versuch} other {# Versuche}}, bevor er ungültig wird.',
  'signin.resend_wait': 'Einen neuen Code können Sie in {seconds, plural, one {# Sekunde} other {# Sekunden}} anfordern.',
  'signin.code_resent': 'Ein neuer Code ist unterwegs an {email}. Nur der neueste Code gilt.',
};
