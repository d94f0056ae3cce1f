import type { AccountPageMessageKey } from './en.js';

/** Deutsch (Sie, wie in den E-Mails). */
export const accountPagesDe: Readonly<Record<AccountPageMessageKey, string>> = {
  // Anmeldeseite (signin.html)
  'signin.email_title': 'Mit einem E-Mail-Code',
  'page.send_code': 'Code senden',
  // Kontoseite (account.html)
  'account.title': 'Ihr Konto',
  'account.noscript': 'Diese Seite braucht JavaScript, um Ihr Konto anzuzeigen.',
  'account.display_name': 'Anzeigename',
  'account.shown_as': 'Angezeigt als',
  'account.name_hint': 'Bis zu 64 Zeichen. Leer lassen, um den Namen zu entfernen.',
  'account.save_name': 'Namen speichern',
  'account.roster_title': 'Weitere Konten in diesem Browser',
  'account.roster_empty': 'In diesem Browser ist kein weiteres Konto angemeldet.',
  'account.add_account': 'Weiteres Konto hinzufügen',
  'account.identities_title': 'Verknüpfte Identitäten',
  'account.identities_hint': 'Mit jeder davon können Sie sich bei diesem Konto anmelden.',
  'account.link_title': 'Weiteren Anmeldeweg verknüpfen',
  'account.link_hint':
    'Weisen Sie eine Bitcoin-Adresse oder eine E-Mail-Adresse nach, dann meldet sie ebenfalls bei diesem Konto an. Zum Verknüpfen ist eine frische Bestätigung nötig.',
  'account.link_btc_title': 'Eine Bitcoin-Adresse',
  'account.link_btc_hint': 'Sie signieren eine kurze Nachricht mit der Wallet, die sie hält.',
  'account.link_address': 'Adresse verknüpfen',
  'account.link_email_title': 'Eine E-Mail-Adresse',
  'account.link_email': 'E-Mail verknüpfen',
  'account.keys_title': 'Sicherheitsschlüssel und Passkeys',
  'account.keys_hint':
    'Ein Sicherheitsschlüssel bestätigt vor einer heiklen Änderung, dass Sie es sind. Ein Passkey meldet Sie außerdem bei diesem Konto an, ohne Wallet oder E-Mail-Code.',
  'account.keys_empty': 'Noch kein Sicherheitsschlüssel und kein Passkey.',
  'account.key_label': 'Name des neuen Schlüssels',
  'account.key_label_hint': 'Optional, zum Beispiel „YubiKey“ oder „Arbeitslaptop“.',
  'account.key_sign_in': 'Auch damit anmelden (als Passkey)',
  'account.key_sign_in_hint': 'Ein Passkey wird mit Fingerabdruck, Gesicht oder PIN entsperrt.',
  'account.key_add': 'Sicherheitsschlüssel hinzufügen',
  'account.devices_title': 'Wo Sie angemeldet sind',
  'account.devices_hint': 'Alle Browser, die bei diesem Konto angemeldet sind. Einen anderen abzumelden braucht eine frische Bestätigung.',
  'account.devices_others': 'Überall sonst abmelden',
  'account.activity_title': 'Letzte Aktivitäten',
  'account.activity_hint': 'Anmeldungen und Änderungen an der Sicherheit dieses Kontos, die neuesten zuerst.',
  'account.activity_more': 'Ältere Aktivitäten anzeigen',
  'account.data_title': 'Ihre Daten',
  'account.data_hint':
    'Alles, was dieser Dienst über dieses Konto speichert, als eine Datei: Identitäten, Sitzungen, Schlüssel, Connect-Apps und Aktivitäten. Dafür ist eine frische Bestätigung nötig.',
  'account.export': 'Ihre Daten herunterladen',
  'account.delete_title': 'Dieses Konto löschen',
  'account.delete_hint':
    'Meldet es überall ab und entfernt seine Identitäten, Schlüssel, Connect-Apps und Aktivitäten endgültig. Seine Adressen und E-Mails können danach ein neues Konto beginnen. Das lässt sich nicht rückgängig machen.',
  'account.signout_hint': 'Wenn Sie sich von diesem Konto abmelden, bleiben die anderen Konten in diesem Browser angemeldet.',
  'account.logout_current': 'Von diesem Konto abmelden',
  'stepup.intro': 'Diese Änderung braucht einen frischen Nachweis, dass Sie dieses Konto kontrollieren. Der Nachweis gilt 5 Minuten.',
  // Anmeldeseite (signin.js)
  'wallet.will_sign': '{wallet} signiert als {address}.',
  // Bestätigung (stepup.js), im Dialog und auf /sudo
  'stepup.key_button': 'Sicherheitsschlüssel oder Passkey verwenden',
  'stepup.key_title': 'Mit einem Sicherheitsschlüssel',
  'stepup.key_hint': 'Berühren oder entsperren Sie einen Schlüssel, den Sie diesem Konto hinzugefügt haben.',
  'stepup.btc_title': 'Mit Ihrer Bitcoin-Wallet',
  'stepup.confirm': 'Bestätigen',
  'stepup.none':
    'Dieses Konto hat keine Bitcoin-Adresse und keine E-Mail-Adresse zum Bestätigen. Melden Sie sich ab und wieder an und versuchen Sie es dann erneut.',
  'stepup.code_dead': 'Dieser Code ist nicht mehr gültig. Brechen Sie ab und bestätigen Sie erneut, um einen neuen Code zu erhalten.',
  // Verknüpfen (link.js)
  'link.cancelled': 'Es wurde nichts verknüpft.',
  'action.link': '{identity} zu verknüpfen',
  'link.another_account': 'einem anderen Konto',
  'link.move_title': '{identity} in dieses Konto verschieben?',
  'link.move_text':
    '{identity} gehört zu {holder}. Die Adresse kommt hierher, und jenes Konto wird mit diesem zusammengeführt: überall abgemeldet, dann geschlossen. Das lässt sich nicht rückgängig machen.',
  'link.move_confirm': 'Verschieben und zusammenführen',
  'link.move_declined': '{identity} bleibt bei {holder}.',
  'link.merged': '{identity} ist verknüpft, und {merged} wurde mit diesem Konto zusammengeführt.',
  'link.linked': '{identity} ist mit diesem Konto verknüpft.',
  'link.address_refused': 'Diese Bitcoin-Adresse akzeptiert dieser Dienst nicht.',
  'link.with_wallet': 'Mit {wallet} verknüpfen',
  'link.wallet_no_address': '{wallet} hat keine Bitcoin-Adresse geteilt.',
  'link.code_sent_to': 'Wir haben einen Code an {email} gesendet.',
  'link.move_identities': 'Seine anderen Anmeldewege',
  'link.move_identities_hint':
    'Haken Sie nur an, was Sie wiedererkennen. Alles ohne Haken wird mit jenem Konto entfernt und ist dann frei: Wer es kontrolliert, kann sich damit anmelden.',
  'link.move_apps': 'Seine Connect-Apps',
  'link.move_apps_hint':
    'Haken Sie die an, die Sie behalten möchten. Apps ohne Haken werden mit jenem Konto gelöscht, und ihre API-Schlüssel funktionieren nicht mehr.',
  'link.move_keys': 'Seine Sicherheitsschlüssel und Passkeys',
  'link.move_keys_hint':
    'Diese werden nie verschoben: Ein Schlüssel beweist, wer ihn registriert hat, nicht Sie. Darum wird jeder mit jenem Konto entfernt.',
  'link.will_be_removed': 'Wird entfernt',
  'link.look_again': 'Erneut ansehen',
  'link.holder_disabled':
    '{identity} gehört zu einem Konto, das der Betreiber dieses Dienstes gesperrt hat, und kann daher nicht hierher verschoben werden.',
  'link.app_named': 'die Connect-App {name}',
  'link.merged_moved': 'Außerdem hierher verschoben: {items}.',
  'link.merged_removed_identities':
    'Mit ihm entfernt und wieder frei für jeden, der {count, plural, one {es} other {sie}} kontrolliert: {items}.',
  'link.merged_removed_keys':
    '{count, plural, one {Sein Sicherheitsschlüssel oder Passkey wurde entfernt: {names}.} other {Seine # Sicherheitsschlüssel und Passkeys wurden entfernt: {names}.}}',
  'link.merged_removed_apps':
    '{count, plural, one {Seine Connect-App wurde gelöscht: {names}.} other {Seine # Connect-Apps wurden gelöscht: {names}.}}',
  'link.merged_nothing_removed': 'Es enthielt nichts weiter, also wurde nichts entfernt.',
  // Kontoseite (account.js)
  'account.delete_confirm_label': 'Geben Sie zur Bestätigung <b>löschen</b> ein',
  'account.delete_word': 'löschen',
  'account.signed_in_as': 'Angemeldet als {name}',
  'account.name_not_set': 'Nicht festgelegt',
  'account.copy_identity':
    '{kind, select, btc {Bitcoin-Adresse kopieren} email {E-Mail kopieren} nostr {Nostr-Schlüssel kopieren} oauth {Anmeldeanbieter kopieren} connect {Verbundene App kopieren} other {Konto-ID kopieren}}',
  'account.copied_identity':
    '{kind, select, btc {Die Bitcoin-Adresse wurde kopiert.} email {Die E-Mail wurde kopiert.} nostr {Der Nostr-Schlüssel wurde kopiert.} oauth {Der Anmeldeanbieter wurde kopiert.} connect {Die verbundene App wurde kopiert.} other {Die Konto-ID wurde kopiert.}}',
  'account.copy_selected': 'Der Text ist markiert: Kopieren Sie ihn mit Tastatur oder Menü.',
  'account.switch_to': 'Zu {name} wechseln',
  'account.switch': 'Wechseln',
  'account.no_identities': 'Keine verknüpften Identitäten.',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'account.now_using': 'Sie verwenden jetzt {name}.',
  'account.logout_all_title': '{count, plural, one {Abmelden?} other {Von allen # Konten abmelden?}}',
  'account.logout_one_text': 'Dieser Browser ist dann nicht mehr angemeldet.',
  'account.logout_all_text':
    'Alle Konten in diesem Browser werden abgemeldet, nicht nur {name}. Um eines hier zu verwenden, melden Sie es erneut an.',
  'account.logout_all_confirm': '{count, plural, one {Abmelden} other {Von allen # abmelden}}',
  'account.still_signed_in': 'Sie sind weiterhin angemeldet.',
  'account.signed_out_of': 'Von {previous} abgemeldet. Sie verwenden jetzt {name}.',
  'action.export': 'Ihre Daten herunterzuladen',
  'account.nothing_downloaded': 'Es wurde nichts heruntergeladen.',
  'account.downloaded': 'Ihre Daten wurden als JSON-Datei heruntergeladen.',
  'account.delete_mismatch': 'Geben Sie das Wort {word} ein, um zu bestätigen, dass dieses Konto gelöscht werden soll.',
  'action.delete': '{name} zu löschen',
  'account.not_deleted': 'Das Konto wurde nicht gelöscht.',
  'account.deleted_switched': '{deleted} wurde gelöscht. Sie verwenden jetzt {name}.',
  'account.name_too_long': 'Der Name darf höchstens 64 Zeichen haben.',
  'action.rename_account': 'den Anzeigenamen zu ändern',
  'account.name_removed': 'Anzeigename entfernt.',
  'account.name_saved': 'Anzeigename gespeichert.',
  'account.remove_title': '{name} entfernen?',
  'account.remove_text':
    '{name} meldet dann nicht mehr bei diesem Konto an, und Browser, die damit angemeldet sind, werden abgemeldet. Sie können es später wieder verknüpfen.',
  'action.remove_identity': '{name} zu entfernen',
  'stepup.intro_action': 'Um {action}, weisen Sie erneut nach, dass Sie dieses Konto kontrollieren. Der Nachweis gilt 5 Minuten.',
  // Die App einer Anmeldung (signin.html, sudo.html) und „Apps, bei denen Sie sich angemeldet haben“ auf der Kontoseite (account-apps.js)
  'apps.title': 'Apps, bei denen Sie sich angemeldet haben',
  'apps.hint':
    'Diese Apps dürfen Sie mit diesem Konto anmelden und sehen, was jeweils darunter steht. Wenn Sie einer App den Zugriff entziehen, endet er sofort; beim nächsten Mal fragt sie Sie erneut.',
  'apps.empty': 'Sie haben noch keiner App erlaubt, Sie anzumelden.',
  // Das Kontomenü in der Kopfzeile (account-menu.js) und die Bereiche der Kontoseite (account.html)
  'account.nav_label': 'Bereiche des Kontos',
  'account.nav_profile': 'Profil',
  'account.nav_sign_in': 'Anmeldewege',
  'account.nav_security': 'Sicherheit',
  'account.nav_apps': 'Apps',
  'account.edit_name': 'Namen bearbeiten',
  'account.did_explained':
    'Die dauerhafte ID Ihres Kontos. Apps, bei denen Sie sich anmelden, sehen sie statt Ihrer E-Mail-Adresse, und sie bleibt gleich, wenn Sie einen Anmeldeweg verknüpfen oder entfernen.',
  'account.connect_explained':
    'Connect-Apps sind etwas anderes: Apps, die Sie mit diesem Konto registriert haben, um die API dieses Dienstes zu nutzen, jede mit ihrem eigenen API-Schlüssel.',
  'account.passkeys_elsewhere':
    'Passkeys, mit denen Sie sich ohne Wallet und ohne Code anmelden, finden Sie unter <link>Sicherheit</link>.',
  'account.link_btc_open': 'Adresse verknüpfen',
  'account.link_email_open': 'E-Mail verknüpfen',
  'account.key_create': 'Schlüssel hinzufügen',
  'account.delete_open': 'Konto löschen',
  'account.copy_value': '{action}: {value}',
};
