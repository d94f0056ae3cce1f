import type { MailMessageKey } from './en.js';

/** Deutsch. */
export const de: Readonly<Record<MailMessageKey, string>> = {
  'code.subject': '{code} ist Ihr Anmeldecode für {name}',
  'code.intro': 'Ihr Code für die Anmeldung bei {name}:',
  'code.expires': 'Er läuft in {minutes, plural, one {# Minute} other {# Minuten}} ab (am {date} um {time}) und gilt nur einmal.',
  'code.enter':
    'Geben Sie ihn auf der Seite ein, auf der Sie ihn angefordert haben. Geben Sie ihn niemandem weiter: Niemand von {name} wird Sie danach fragen.',
  'code.link':
    'Oder melden Sie sich mit diesem Link an, im selben Browser, in dem Sie den Code angefordert haben (anderswo werden Sie gebeten, den Code einzugeben):',
  'code.link_button': 'Bei {name} anmelden',
  'code.ignore':
    'Wenn Sie diesen Code nicht angefordert haben, ignorieren Sie diese E-Mail. Ohne den Code kann sich niemand anmelden, und er verfällt von selbst.',
  'notice.subject': 'Neue Anmeldung bei {name}',
  'notice.intro': 'Ihr Konto bei {name} wurde soeben von einem Gerät oder Netz aus angemeldet, das es bisher nicht genutzt hat:',
  'notice.device': 'Gerät',
  'notice.network': 'Netz',
  'notice.time': 'Zeit',
  'notice.method': 'Methode',
  'notice.unknown_device': 'ein unbekanntes Gerät',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'device.on': '{browser} unter {os}',
  'device.mobile': '{device} (Smartphone)',
  'device.tablet': '{device} (Tablet)',
  'device.some_browser': 'Ein Browser',
  'notice.unknown': 'unbekannt',
  'notice.method_bip322': 'eine Bitcoin-Signatur',
  'notice.method_email_otp': 'ein E-Mail-Code',
  'notice.method_passkey': 'ein Passkey',
  'notice.method_provider': 'Anmeldung mit {provider}',
  'notice.fine': 'Wenn Sie das waren, ist nichts zu tun.',
  'notice.not_you':
    'Wenn nicht, öffnen Sie die Kontoseite, melden Sie alle anderen Browser ab und prüfen Sie die dort aufgeführten Anmeldewege:',
  'notice.account_page': 'die Kontoseite',
  'mail.support': 'Brauchen Sie Hilfe? Wenden Sie sich an den Support von {name}: {contact}',
  'mail.support_link': 'Support von {name} kontaktieren',
};
