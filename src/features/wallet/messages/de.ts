import type { WalletPageMessageKey } from './en.js';

/** Deutsch (Sie, wie in den E-Mails). */
export const walletPagesDe: Readonly<Record<WalletPageMessageKey, string>> = {
  // Anmeldeseite (signin.js)
  'signin.wallet_check':
    'Sehen Sie in Ihre Wallet… {wallet} bittet Sie, Ihre Adresse freizugeben und eine kurze Nachricht zu signieren. Das beweist, dass die Adresse Ihnen gehört, und kostet nichts.',
  'page.address_refused': 'Diese Bitcoin-Adresse akzeptiert dieser Dienst nicht. Prüfen Sie sie und versuchen Sie es erneut.',
  'signin.message_ready': 'Die Nachricht ist bereit. Signieren Sie sie mit Ihrer Wallet und fügen Sie dann die Signatur ein.',
  'signin.message_one_minute': 'Noch eine Minute, um die Nachricht zu signieren.',
  'signin.message_expires_in': 'Läuft ab in {clock}.',
  'signin.message_expired': 'Diese Nachricht ist abgelaufen.',
  'signin.message_expired_unsigned': 'Die Nachricht ist abgelaufen, bevor sie signiert wurde. Holen Sie eine neue und signieren Sie diese.',
  'signin.message_expires_at': 'Sie läuft um {time} ab.',
  'signin.wallet_signed': '{wallet} hat als {address} signiert. Anmeldung läuft…',
  'wallet.sign_with': 'Mit {wallet} signieren',
  'wallet.address_refused': 'Die Adresse {address} von {wallet} akzeptiert dieser Dienst nicht.',
  'wallet.connect': '{wallet} verbinden',
  'signin.new_message_ready': 'Eine neue Nachricht ist zum Signieren bereit.',
  'signin.legacy_wallet':
    '{wallet} hat mit dem alten Verfahren (ECDSA) signiert, das nur für Adressen funktioniert, die mit 1 beginnen. Wählen Sie in den Signieroptionen BIP-322 und signieren Sie erneut.',
  'signin.legacy_pasted':
    'Ihre Wallet hat mit dem alten Verfahren (ECDSA) signiert, das nur für Adressen funktioniert, die mit 1 beginnen. Wählen Sie in den Signieroptionen BIP-322 und signieren Sie erneut.',
  'signin.mismatch_wallet':
    'Die Signatur von {wallet} passt nicht: Vielleicht wurde mit einem anderen Konto signiert oder die Nachricht verändert. Prüfen Sie das Konto in {wallet} und signieren Sie erneut.',
  'signin.mismatch_pasted':
    'Die Signatur passt nicht. Signieren Sie genau die angezeigte Nachricht, jede Zeile, auch die leere letzte Zeile, die manche Wallets weglassen, mit der Wallet, die diese Adresse hält, per BIP-322.',
  // Wallets (wallets.js) und Sicherheitsschlüssel (passkeys.js)
  'wallet.wrong_account':
    '{wallet} verwendet {active}, nicht {wanted}. Wechseln Sie in {wallet} zu {wanted} oder beginnen Sie neu mit {active}.',
  'wallet.declined': 'Sie haben in {wallet} abgelehnt, es wurde also nichts signiert.',
  'wallet.failed_because': '{wallet} konnte nicht signieren: {reason}',
  'wallet.failed': '{wallet} konnte nicht signieren. Kopieren Sie die Nachricht und signieren Sie sie auf anderem Weg.',
  // API-Explorer (explorer.js)
  'wallet.accounts_prompt': 'Mit Ihrer Bitcoin-Adresse anmelden',
};
