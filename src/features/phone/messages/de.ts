import type { PhonePageMessageKey } from './en.js';

/** Deutsch (Sie, wie in den E-Mails). */
export const phonePagesDe: Readonly<Record<PhonePageMessageKey, string>> = {
  // Anmeldeseite (signin.js)
  'wallet.connecting': 'Verbindung mit {wallet}…',
  // Signing in from a phone (docs/protocol.md §6 "Signing in from a phone"): the phone page and the dialog of /signin
  'phone.title': 'Auf einem anderen Bildschirm anmelden',
  'phone.lead': 'Ihre Wallet signiert hier eine kurze Nachricht, und der Bildschirm, der den Code zeigt, wird angemeldet.',
  'phone.loading': 'Anmeldung wird gesucht…',
  'phone.question': 'Mit {desktop} bei {site} anmelden?',
  'phone.question_unknown': 'Mit einem anderen Browser bei {site} anmelden?',
  'phone.caution':
    'Fahren Sie nur fort, wenn Sie dies selbst an einem Bildschirm vor Ihnen begonnen haben und dieser den Code {code} zeigt.',
  'phone.other_network':
    'Vorsicht: Dieser Bildschirm ist in einem anderen Netz als dieses Telefon. Wenn Sie nicht selbst an diesem Bildschirm sind, fahren Sie nicht fort.',
  'phone.expires': 'Diese Anfrage läuft in {clock} ab.',
  'phone.sign_with': 'Mit {wallet} anmelden',
  'phone.no_wallet':
    'In diesem Browser wurde keine Wallet gefunden. Öffnen Sie diese Seite im Browser Ihrer Wallet-App: Scannen Sie den Code mit der Wallet.',
  'phone.decline': 'Das war ich nicht',
  'phone.approved_title': 'Erledigt',
  'phone.approved': 'Als {address} signiert. Der andere Bildschirm wird jetzt angemeldet; Sie können diese Seite schließen.',
  'phone.declined_title': 'Abgebrochen',
  'phone.declined': 'Die Anmeldung wurde abgebrochen. Niemand wurde angemeldet.',
  'phone.no_key': 'Dieser Link ist unvollständig. Scannen Sie den Code auf dem anderen Bildschirm noch einmal.',
  'phone.invalid': 'Diese Anmeldung wurde nicht gefunden. Scannen Sie den Code auf dem anderen Bildschirm noch einmal.',
  'phone.used': 'Diese Anmeldung wurde bereits beantwortet. Wenn Sie das nicht waren, beginnen Sie auf dem anderen Bildschirm neu.',
  'phone.expired': 'Diese Anmeldung ist abgelaufen. Beginnen Sie auf dem anderen Bildschirm neu, um einen neuen Code zu erhalten.',
  'phone_signin.open': 'Eine Wallet auf dem Telefon verwenden',
  'phone_signin.title': 'Mit dem Telefon anmelden',
  'phone_signin.scan': 'Scannen Sie diesen Code mit Ihrem Telefon, im Browser Ihrer Wallet-App, falls sie einen hat.',
  'phone_signin.qr_label': 'QR-Code zur Anmeldung auf dem Telefon',
  'phone_signin.code': 'Ihr Telefon zeigt den Code {code}.',
  'phone_signin.waiting': 'Bestätigen Sie auf Ihrem Telefon.',
  'phone_signin.expires': 'Der Code läuft in {clock} ab.',
  'phone_signin.expired': 'Der Code ist abgelaufen. Fordern Sie einen neuen an.',
  'phone_signin.declined': 'Die Anmeldung wurde auf dem Telefon abgebrochen.',
  'phone_signin.new_code': 'Neuer Code',
  'phone_signin.close': 'Schließen',
  'phone_signin.signed_in': 'Angemeldet als {name}. Es geht weiter…',
  'phone_signin.used': 'Dieser Code wurde bereits verwendet. Fordern Sie einen neuen an.',
  'phone_signin.confirm_question': 'Als {name} anmelden?',
  'phone_signin.confirm_hint':
    'Ein Telefon hat diese Anmeldung mit der Wallet-Adresse {address} bestätigt. Bestätigen Sie nur, wenn es Ihre ist.',
  'phone_signin.confirm': 'Bestätigen',
  'phone_signin.cancel': 'Abbrechen',
  'phone_signin.cancelled': 'Die Anmeldung wurde abgebrochen. Fordern Sie einen neuen Code an, um neu zu beginnen.',
  'phone_signin.mismatch': 'Das Telefon hat ein anderes Konto bestätigt. Fordern Sie einen neuen Code an.',
};
