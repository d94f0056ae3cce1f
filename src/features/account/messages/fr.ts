import type { AccountPageMessageKey } from './en.js';

/** Français (vous, comme dans les e-mails ; apostrophes typographiques). */
export const accountPagesFr: Readonly<Record<AccountPageMessageKey, string>> = {
  // Page de connexion (signin.html)
  'signin.email_title': 'Avec un code par e-mail',
  'page.send_code': 'Envoyer le code',
  // Page du compte (account.html)
  'account.title': 'Votre compte',
  'account.noscript': 'Cette page a besoin de JavaScript pour afficher votre compte.',
  'account.display_name': 'Nom affiché',
  'account.shown_as': 'Affiché comme',
  'account.name_hint': 'Jusqu’à 64 caractères. Laissez vide pour retirer le nom.',
  'account.save_name': 'Enregistrer le nom',
  'account.roster_title': 'Autres comptes dans ce navigateur',
  'account.roster_empty': 'Aucun autre compte n’est connecté dans ce navigateur.',
  'account.add_account': 'Ajouter un autre compte',
  'account.identities_title': 'Identités liées',
  'account.identities_hint': 'Chacune d’elles permet de se connecter à ce compte.',
  'account.link_title': 'Lier un autre moyen de connexion',
  'account.link_hint':
    'Prouvez une adresse Bitcoin ou une adresse e-mail : elle permettra aussi de se connecter à ce compte. Lier demande une confirmation récente.',
  'account.link_btc_title': 'Une adresse Bitcoin',
  'account.link_btc_hint': 'Vous signez un court message avec le portefeuille qui la détient.',
  'account.link_address': 'Lier l’adresse',
  'account.link_email_title': 'Une adresse e-mail',
  'account.link_email': 'Lier l’e-mail',
  'account.keys_title': 'Clés de sécurité et clés d’accès',
  'account.keys_hint':
    'Une clé de sécurité confirme que c’est vous avant un changement sensible. Une clé d’accès vous connecte aussi à ce compte, sans portefeuille ni code par e-mail.',
  'account.keys_empty': 'Aucune clé de sécurité ni clé d’accès pour l’instant.',
  'account.key_label': 'Nom de la nouvelle clé',
  'account.key_label_hint': 'Facultatif, par exemple « YubiKey » ou « Portable du travail ».',
  'account.key_sign_in': 'Se connecter aussi avec elle (clé d’accès)',
  'account.key_sign_in_hint': 'Une clé d’accès se déverrouille avec votre empreinte, votre visage ou votre code PIN.',
  'account.key_add': 'Ajouter une clé de sécurité',
  'account.devices_title': 'Où vous êtes connecté',
  'account.devices_hint': 'Tous les navigateurs connectés à ce compte. En déconnecter un autre demande une confirmation récente.',
  'account.devices_others': 'Se déconnecter partout ailleurs',
  'account.activity_title': 'Activité récente',
  'account.activity_hint': 'Connexions et changements de sécurité de ce compte, les plus récents d’abord.',
  'account.activity_more': 'Afficher l’activité plus ancienne',
  'account.data_title': 'Vos données',
  'account.data_hint':
    'Tout ce que ce service conserve sur ce compte, en un seul fichier : identités, sessions, clés, applications Connect et activité. Cela demande une confirmation récente.',
  'account.export': 'Télécharger vos données',
  'account.delete_title': 'Supprimer ce compte',
  'account.delete_hint':
    'Le déconnecte partout et supprime définitivement ses identités, clés, applications Connect et son activité. Ses adresses et e-mails pourront ensuite créer un nouveau compte. Cette action est irréversible.',
  'account.signout_hint': 'Se déconnecter de ce compte laisse les autres comptes de ce navigateur connectés.',
  'account.logout_current': 'Se déconnecter de ce compte',
  'stepup.intro': 'Ce changement demande une preuve récente que vous contrôlez ce compte. La preuve reste valable 5 minutes.',
  // Page de connexion (signin.js)
  'wallet.will_sign': '{wallet} signera en tant que {address}.',
  // Confirmation (stepup.js), dans la boîte de dialogue et sur /sudo
  'stepup.key_button': 'Utiliser une clé de sécurité ou d’accès',
  'stepup.key_title': 'Avec une clé de sécurité',
  'stepup.key_hint': 'Touchez ou déverrouillez une clé ajoutée à ce compte.',
  'stepup.btc_title': 'Avec votre portefeuille Bitcoin',
  'stepup.confirm': 'Confirmer',
  'stepup.none': 'Ce compte n’a ni adresse Bitcoin ni adresse e-mail pour confirmer. Déconnectez-vous, reconnectez-vous, puis réessayez.',
  'stepup.code_dead': 'Ce code n’est plus utilisable. Annulez et confirmez à nouveau pour recevoir un nouveau code.',
  // Liaison (link.js)
  'link.cancelled': 'Rien n’a été lié.',
  'action.link': 'lier {identity}',
  'link.another_account': 'un autre compte',
  'link.move_title': 'Déplacer {identity} vers ce compte ?',
  'link.move_text':
    '{identity} appartient à {holder}. L’adresse sera déplacée ici, et ce compte sera fusionné avec celui-ci : déconnecté partout, puis fermé. Cette action est irréversible.',
  'link.move_confirm': 'Déplacer et fusionner',
  'link.move_declined': '{identity} reste chez {holder}.',
  'link.merged': '{identity} est lié, et {merged} a été fusionné avec ce compte.',
  'link.linked': '{identity} est lié à ce compte.',
  'link.address_refused': 'Ce service n’accepte pas cette adresse Bitcoin.',
  'link.with_wallet': 'Lier avec {wallet}',
  'link.wallet_no_address': '{wallet} n’a partagé aucune adresse Bitcoin.',
  'link.code_sent_to': 'Nous avons envoyé un code à {email}.',
  'link.move_identities': 'Ses autres moyens de connexion',
  'link.move_identities_hint':
    'Cochez seulement ceux que vous reconnaissez. Tout ce qui n’est pas coché est supprimé avec ce compte et redevient libre : quiconque le contrôle pourra s’en servir pour se connecter.',
  'link.move_apps': 'Ses applications Connect',
  'link.move_apps_hint':
    'Cochez celles à garder. Les applications non cochées sont supprimées avec ce compte, et leurs clés d’API cessent de fonctionner.',
  'link.move_keys': 'Ses clés de sécurité et clés d’accès',
  'link.move_keys_hint':
    'Elles ne sont jamais déplacées : une clé prouve qui l’a enregistrée, pas que c’est vous ; chacune est donc supprimée avec ce compte.',
  'link.will_be_removed': 'Sera supprimée',
  'link.look_again': 'Regarder à nouveau',
  'link.holder_disabled':
    '{identity} appartient à un compte que l’opérateur de ce service a désactivé ; il ne peut donc pas être déplacé ici.',
  'link.app_named': 'l’application Connect {name}',
  'link.merged_moved': 'Également déplacé ici : {items}.',
  'link.merged_removed_identities':
    '{count, plural, one {Supprimé avec lui et de nouveau libre pour quiconque le contrôle : {items}.} other {Supprimés avec lui et de nouveau libres pour quiconque les contrôle : {items}.}}',
  'link.merged_removed_keys':
    '{count, plural, one {Sa clé de sécurité ou clé d’accès a été supprimée : {names}.} other {Ses # clés de sécurité et clés d’accès ont été supprimées : {names}.}}',
  'link.merged_removed_apps':
    '{count, plural, one {Son application Connect a été supprimée : {names}.} other {Ses # applications Connect ont été supprimées : {names}.}}',
  'link.merged_nothing_removed': 'Il ne contenait rien d’autre : rien n’a été supprimé.',
  // Page du compte (account.js)
  'account.delete_confirm_label': 'Saisissez <b>supprimer</b> pour confirmer',
  'account.delete_word': 'supprimer',
  'account.signed_in_as': 'Connecté en tant que {name}',
  'account.name_not_set': 'Non défini',
  'account.copy_identity':
    '{kind, select, btc {Copier l’adresse Bitcoin} email {Copier l’e-mail} nostr {Copier la clé Nostr} oauth {Copier le fournisseur de connexion} connect {Copier l’application connectée} other {Copier l’identifiant du compte}}',
  'account.copied_identity':
    '{kind, select, btc {L’adresse Bitcoin a été copiée.} email {L’e-mail a été copié.} nostr {La clé Nostr a été copiée.} oauth {Le fournisseur de connexion a été copié.} connect {L’application connectée a été copiée.} other {L’identifiant du compte a été copié.}}',
  'account.copy_selected': 'Le texte est sélectionné : copiez-le avec le clavier ou le menu.',
  'account.switch_to': 'Changer pour {name}',
  'account.switch': 'Changer',
  'account.no_identities': 'Aucune identité liée.',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'account.now_using': 'Vous utilisez maintenant {name}.',
  'account.logout_all_title': '{count, plural, one {Se déconnecter ?} other {Se déconnecter des # comptes ?}}',
  'account.logout_one_text': 'Ce navigateur ne sera plus connecté.',
  'account.logout_all_text':
    'Tous les comptes de ce navigateur seront déconnectés, pas seulement {name}. Reconnectez chacun pour l’utiliser ici.',
  'account.logout_all_confirm': '{count, plural, one {Se déconnecter} other {Déconnecter les #}}',
  'account.still_signed_in': 'Vous êtes toujours connecté.',
  'account.signed_out_of': 'Déconnecté de {previous}. Vous utilisez maintenant {name}.',
  'action.export': 'télécharger vos données',
  'account.nothing_downloaded': 'Rien n’a été téléchargé.',
  'account.downloaded': 'Vos données ont été téléchargées dans un fichier JSON.',
  'account.delete_mismatch': 'Saisissez le mot {word} pour confirmer la suppression de ce compte.',
  'action.delete': 'supprimer {name}',
  'account.not_deleted': 'Le compte n’a pas été supprimé.',
  'account.deleted_switched': '{deleted} a été supprimé. Vous utilisez maintenant {name}.',
  'account.name_too_long': 'Le nom peut compter au plus 64 caractères.',
  'action.rename_account': 'modifier le nom affiché',
  'account.name_removed': 'Nom affiché retiré.',
  'account.name_saved': 'Nom affiché enregistré.',
  'account.remove_title': 'Retirer {name} ?',
  'account.remove_text':
    '{name} ne permettra plus de se connecter à ce compte, et les navigateurs connectés avec seront déconnectés. Vous pourrez le lier de nouveau plus tard.',
  'action.remove_identity': 'retirer {name}',
  'stepup.intro_action': 'Pour {action}, prouvez de nouveau que vous contrôlez ce compte. La preuve reste valable 5 minutes.',
  // L’application d’une connexion (signin.html, sudo.html) et « Applications auxquelles vous vous êtes connecté » sur la page du compte (account-apps.js)
  'apps.title': 'Applications auxquelles vous vous êtes connecté',
  'apps.hint':
    'Ces applications peuvent vous connecter avec ce compte et voir ce qui est indiqué sous chacune. Retirer l’accès d’une application y met fin aussitôt ; elle vous le redemandera la prochaine fois que vous l’utiliserez.',
  'apps.empty': 'Vous n’avez encore autorisé aucune application à vous connecter.',
  // Le menu du compte dans l’en-tête (account-menu.js) et les sections de la page du compte (account.html)
  'account.nav_label': 'Sections du compte',
  'account.nav_profile': 'Profil',
  'account.nav_sign_in': 'Moyens de connexion',
  'account.nav_security': 'Sécurité',
  'account.nav_apps': 'Applications',
  'account.edit_name': 'Modifier le nom',
  'account.did_explained':
    'L’identifiant permanent de votre compte. Les applications auxquelles vous vous connectez le voient à la place de votre e-mail, et il ne change pas quand vous liez ou retirez un moyen de connexion.',
  'account.connect_explained':
    'Les applications Connect sont autre chose : des applications que vous avez enregistrées avec ce compte pour utiliser l’API de ce service, chacune avec sa propre clé d’API.',
  'account.passkeys_elsewhere': 'Les clés d’accès, qui vous connectent sans portefeuille ni code, sont dans <link>Sécurité</link>.',
  'account.link_btc_open': 'Lier une adresse',
  'account.link_email_open': 'Lier un e-mail',
  'account.key_create': 'Ajouter la clé',
  'account.delete_open': 'Supprimer le compte',
  'account.copy_value': '{action} : {value}',
};
