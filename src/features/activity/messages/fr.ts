import type { ActivityPageMessageKey } from './en.js';

/** Français (vous, comme dans les e-mails ; apostrophes typographiques). */
export const activityPagesFr: Readonly<Record<ActivityPageMessageKey, string>> = {
  // Page du compte (account.js)
  'method.bip322': 'un portefeuille Bitcoin',
  'method.email_otp': 'un code par e-mail',
  'method.passkey': 'une clé d’accès',
  'method.key': 'une clé de sécurité',
  'method.unknown': 'un moyen inconnu',
  'account.unknown_browser': 'Un navigateur inconnu',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'device.on': '{browser} sur {os}',
  'device.mobile': '{device} (mobile)',
  'device.tablet': '{device} (tablette)',
  'device.some_browser': 'Un navigateur',
  'account.device_signed_in': 'Connecté le {date} avec {method}',
  'account.device_seen': 'vu pour la dernière fois le {date}',
  'account.network': 'réseau {network}',
  'account.this_browser': 'Ce navigateur',
  'account.sign_out_this_browser': 'Se déconnecter de {name} (ce navigateur)',
  'account.sign_out_named': 'Se déconnecter de {name}',
  'action.sign_out_device': 'déconnecter {name}',
  'account.no_browser_signed_out': 'Aucun navigateur n’a été déconnecté.',
  'account.browser_gone': 'Ce navigateur était déjà déconnecté.',
  'account.browser_signed_out': '{name} a été déconnecté de ce compte.',
  'action.sign_out_others': 'déconnecter tous les autres navigateurs',
  'account.others_signed_out':
    '{count, plural, one {Un autre navigateur a été déconnecté.} other {# autres navigateurs ont été déconnectés.}}',
  'field.display_name': 'nom affiché',
  'event.signin':
    'Connexion avec {method}{placed, select, yes { ({where})} other {}}{added, select, yes {, ajoutée à un navigateur qui avait un autre compte} other {}}',
  'event.sudo': 'Confirmation que c’était vous avec {method}',
  'event.sudo_key': 'Confirmation que c’était vous avec la clé {key}',
  'event.sudo_failed': 'Échec d’une confirmation avec {method} ({reason})',
  'event.step_up': 'Confirmation renforcée avec la clé {key}',
  'event.step_up_failed': 'Échec d’une confirmation renforcée avec une clé de sécurité ({reason})',
  'event.identity_linked':
    '{kind, select, btc {Adresse Bitcoin} email {E-mail} did {Identifiant du compte} nostr {Clé Nostr} oauth {Fournisseur de connexion} connect {Application connectée} other {Identité}} {value} liée',
  'event.identity_unlinked':
    '{kind, select, btc {Adresse Bitcoin} email {E-mail} did {Identifiant du compte} nostr {Clé Nostr} oauth {Fournisseur de connexion} connect {Application connectée} other {Identité}} {value} retirée',
  'event.merged_from': 'Le compte {account} a été fusionné avec celui-ci',
  'event.merged_into': 'Ce compte a été fusionné avec {account}',
  'event.edited': 'Modification : {fields}',
  'event.edited_account': 'Modification du compte',
  'event.key_added': 'Ajout de la {passkey, select, yes {clé d’accès} other {clé de sécurité}} {name}',
  'event.key_removed': 'Retrait de la clé {name}',
  'event.revoked_all': 'L’opérateur a déconnecté ce compte partout ({count, plural, one {# navigateur} other {# navigateurs}})',
  'event.revoked_others': 'Déconnexion partout ailleurs ({count, plural, one {# navigateur} other {# navigateurs}})',
  'event.revoked_one': 'Déconnexion d’un autre navigateur',
  'event.tab_pinned':
    'Ouverture d’un onglet avec ce compte pendant que le compte {account} était actif{placed, select, yes { ({where})} other {}}',
  'event.app_created': 'Création de l’application Connect {name}',
  'event.app_rotated': 'Remplacement de la clé d’API de l’application Connect {name}',
  'event.app_deleted': 'Suppression de l’application Connect {name}',
  'event.app_webhook_removed': 'Retrait du webhook de l’application Connect {name}',
  'event.app_webhook_set': 'Webhook de l’application Connect {name} défini sur {url}',
  'event.exported': 'Téléchargement des données du compte',
  'event.disabled': 'L’opérateur a désactivé ce compte',
  'event.enabled': 'L’opérateur a réactivé ce compte',
  'account.failed': 'Échec',
};
