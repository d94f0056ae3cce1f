import type { PasskeysPageMessageKey } from './en.js';

/** Deutsch (Sie, wie in den E-Mails). */
export const passkeysPagesDe: Readonly<Record<PasskeysPageMessageKey, string>> = {
  // Anmeldeseite (signin.js)
  'signin.passkey_not_allowed':
    'Mit diesem Passkey kann dieser Dienst Sie nicht anmelden. Melden Sie sich anders an und fügen Sie ihn dann auf Ihrer Kontoseite hinzu.',
  // Wallets (wallets.js) und Sicherheitsschlüssel (passkeys.js)
  'key.prompt_closed':
    'Die Abfrage des Sicherheitsschlüssels wurde geschlossen, bevor sie fertig war. Versuchen Sie es erneut, wenn Sie bereit sind.',
  'key.already_added_here': 'Dieser Sicherheitsschlüssel ist diesem Konto bereits hinzugefügt.',
  'key.browser_refused': 'Dieser Browser hat Sicherheitsschlüssel für diese Website abgelehnt.',
  'key.browser_failed':
    'Der Browser konnte den Sicherheitsschlüssel nicht verwenden. Versuchen Sie es erneut oder nehmen Sie einen anderen Weg.',
  'key.verify_failed': 'Die Antwort des Sicherheitsschlüssels konnte nicht geprüft werden. Versuchen Sie es erneut.',
  'key.cloned_authenticator':
    'Dieser Sicherheitsschlüssel hat mit einem alten Zähler geantwortet, was auf eine Kopie hindeuten kann. Er wurde abgelehnt; entfernen Sie ihn und fügen Sie ihn erneut hinzu, wenn Sie ihm vertrauen.',
  'key.credential_outside_allowlist':
    'Diesen Schlüssel kann dieses Konto hier nicht verwenden. Wählen Sie einen anderen Schlüssel oder einen anderen Weg.',
  'key.no_credentials_registered': 'Dieses Konto hat noch keinen Sicherheitsschlüssel.',
  'key.credential_exists': 'Dieser Sicherheitsschlüssel ist bereits hinzugefügt.',
  'key.credential_not_discoverable':
    'Mit diesem Schlüssel kann man sich nicht ohne Namen anmelden. Fügen Sie ihn stattdessen als Sicherheitsschlüssel zum Bestätigen hinzu.',
  'key.webauthn_origin_mismatch': 'Sicherheitsschlüssel für diesen Dienst funktionieren nur auf seinen eigenen Websites.',
  'key.webauthn_rp_id_mismatch': 'Der Schlüssel hat für eine andere Website geantwortet.',
  'key.webauthn_unavailable': 'Sicherheitsschlüssel sind bei diesem Dienst nicht verfügbar.',
  'key.nonce_reused': 'Diese Antwort wurde bereits verwendet. Versuchen Sie es erneut.',
  'key.invalid_challenge': 'Die Anfrage ist abgelaufen, bevor der Schlüssel geantwortet hat. Versuchen Sie es erneut.',
  // Kontoseite (account.js)
  'account.key_kind_passkey': 'Passkey',
  'account.key_kind_security': 'Sicherheitsschlüssel',
  'account.key_added_on': 'hinzugefügt am {date}',
  'account.key_last_used': 'zuletzt verwendet am {date}',
  'account.key_unused': 'noch nicht verwendet',
  'account.rename_named': '{name} umbenennen',
  'account.rename': 'Umbenennen',
  'account.rename_label': 'Neuer Name für {name}',
  'account.key_name_invalid': 'Dieser Name geht nicht. Verwenden Sie 1 bis 64 gewöhnliche Zeichen.',
  'account.key_renamed': 'Der Schlüssel heißt jetzt {name}.',
  'action.remove_key': 'den Schlüssel {name} zu entfernen',
  'action.add_key': 'einen Sicherheitsschlüssel hinzuzufügen',
  'account.no_key_added': 'Es wurde kein Schlüssel hinzugefügt.',
  'account.key_prompt_closed': 'Es wurde kein Schlüssel hinzugefügt: Die Abfrage wurde geschlossen.',
  'account.passkey_added': '{name} wurde hinzugefügt: Sie können sich jetzt damit anmelden.',
  'account.key_added': '{name} wurde hinzugefügt.',
};
