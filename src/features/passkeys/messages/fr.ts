import type { PasskeysPageMessageKey } from './en.js';

/** Français (vous, comme dans les e-mails ; apostrophes typographiques). */
export const passkeysPagesFr: Readonly<Record<PasskeysPageMessageKey, string>> = {
  // Page de connexion (signin.js)
  'signin.passkey_not_allowed':
    'Ce service ne peut pas vous connecter avec cette clé d’accès. Connectez-vous autrement, puis ajoutez-la sur la page de votre compte.',
  // Portefeuilles (wallets.js) et clés de sécurité (passkeys.js)
  'key.prompt_closed': 'La fenêtre de la clé de sécurité a été fermée avant la fin. Réessayez quand vous serez prêt.',
  'key.already_added_here': 'Cette clé de sécurité est déjà ajoutée à ce compte.',
  'key.browser_refused': 'Ce navigateur a refusé d’utiliser des clés de sécurité pour ce site.',
  'key.browser_failed': 'Le navigateur n’a pas pu utiliser la clé de sécurité. Réessayez ou utilisez un autre moyen.',
  'key.verify_failed': 'La réponse de la clé de sécurité n’a pas pu être vérifiée. Réessayez.',
  'key.cloned_authenticator':
    'Cette clé de sécurité a répondu avec un ancien compteur, ce qui peut signifier qu’elle a été copiée. Elle a été refusée ; retirez-la et ajoutez-la à nouveau si vous lui faites confiance.',
  'key.credential_outside_allowlist': 'Ce compte ne peut pas utiliser cette clé ici. Choisissez une autre clé ou un autre moyen.',
  'key.no_credentials_registered': 'Ce compte n’a pas encore de clé de sécurité.',
  'key.credential_exists': 'Cette clé de sécurité est déjà ajoutée.',
  'key.credential_not_discoverable':
    'Cette clé ne permet pas de se connecter sans nom. Ajoutez-la plutôt comme clé de sécurité pour confirmer.',
  'key.webauthn_origin_mismatch': 'Les clés de sécurité de ce service ne fonctionnent que sur ses propres sites.',
  'key.webauthn_rp_id_mismatch': 'La clé a répondu pour un autre site.',
  'key.webauthn_unavailable': 'Les clés de sécurité ne sont pas disponibles sur ce service.',
  'key.nonce_reused': 'Cette réponse a déjà servi. Réessayez.',
  'key.invalid_challenge': 'La demande a expiré avant la réponse de la clé. Réessayez.',
  // Page du compte (account.js)
  'account.key_kind_passkey': 'Clé d’accès',
  'account.key_kind_security': 'Clé de sécurité',
  'account.key_added_on': 'ajoutée le {date}',
  'account.key_last_used': 'dernière utilisation le {date}',
  'account.key_unused': 'pas encore utilisée',
  'account.rename_named': 'Renommer {name}',
  'account.rename': 'Renommer',
  'account.rename_label': 'Nouveau nom pour {name}',
  'account.key_name_invalid': 'Ce nom n’est pas utilisable. Utilisez de 1 à 64 caractères ordinaires.',
  'account.key_renamed': 'La clé s’appelle désormais {name}.',
  'action.remove_key': 'retirer la clé {name}',
  'action.add_key': 'ajouter une clé de sécurité',
  'account.no_key_added': 'Aucune clé n’a été ajoutée.',
  'account.key_prompt_closed': 'Aucune clé n’a été ajoutée : la fenêtre a été fermée.',
  'account.passkey_added': '{name} a été ajoutée : vous pouvez maintenant vous connecter avec.',
  'account.key_added': '{name} a été ajoutée.',
};
