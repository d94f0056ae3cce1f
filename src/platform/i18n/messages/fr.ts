import type { MailMessageKey } from './en.js';

/** Français. */
export const fr: Readonly<Record<MailMessageKey, string>> = {
  'code.subject': '{code} est votre code de connexion à {name}',
  'code.intro': 'Votre code pour vous connecter à {name} :',
  'code.expires': 'Il expire dans {minutes, plural, one {# minute} other {# minutes}} (le {date} à {time}) et ne sert qu’une fois.',
  'code.enter': 'Saisissez-le sur la page où vous l’avez demandé. Ne le donnez à personne : personne de {name} ne vous le demandera.',
  'code.link':
    'Ou connectez-vous avec ce lien, dans le même navigateur que celui où vous avez demandé le code (ailleurs, il vous demandera de saisir le code) :',
  'code.link_button': 'Se connecter à {name}',
  'code.ignore':
    'Si vous n’avez pas demandé ce code, ignorez cet e-mail. Personne ne peut se connecter sans le code, et il cesse de fonctionner de lui-même.',
  'notice.subject': 'Nouvelle connexion à {name}',
  'notice.intro': 'Votre compte {name} vient d’être connecté depuis un appareil ou un réseau qu’il n’avait jamais utilisé :',
  'notice.device': 'Appareil',
  'notice.network': 'Réseau',
  'notice.time': 'Heure',
  'notice.method': 'Méthode',
  'notice.unknown_device': 'un appareil inconnu',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'device.on': '{browser} sur {os}',
  'device.mobile': '{device} (mobile)',
  'device.tablet': '{device} (tablette)',
  'device.some_browser': 'Un navigateur',
  'notice.unknown': 'inconnu',
  'notice.method_bip322': 'une signature Bitcoin',
  'notice.method_email_otp': 'un code par e-mail',
  'notice.method_passkey': 'une clé d’accès',
  'notice.method_provider': 'connexion avec {provider}',
  'notice.fine': 'Si c’était vous, il n’y a rien à faire.',
  'notice.not_you':
    'Sinon, ouvrez la page de votre compte, déconnectez tous les autres navigateurs et vérifiez les moyens de connexion qui y figurent :',
  'notice.account_page': 'la page de votre compte',
  'mail.support': 'Besoin d’aide ? Contactez le support de {name} : {contact}',
  'mail.support_link': 'Contacter le support de {name}',
};
