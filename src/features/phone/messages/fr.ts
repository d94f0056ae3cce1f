import type { PhonePageMessageKey } from './en.js';

/** Français (vous, comme dans les e-mails ; apostrophes typographiques). */
export const phonePagesFr: Readonly<Record<PhonePageMessageKey, string>> = {
  // Page de connexion (signin.js)
  'wallet.connecting': 'Connexion à {wallet}…',
  // Signing in from a phone (docs/protocol.md §6 "Signing in from a phone"): the phone page and the dialog of /signin
  'phone.title': 'Se connecter sur un autre écran',
  'phone.lead': "Votre portefeuille signe ici un court message, et l'écran qui a affiché le code est connecté.",
  'phone.loading': 'Recherche de la connexion…',
  'phone.question': 'Se connecter sur {desktop} à {site} ?',
  'phone.question_unknown': 'Se connecter sur un autre navigateur à {site} ?',
  'phone.caution': "Ne continuez que si vous avez commencé vous-même sur un écran devant vous, et qu'il affiche le code {code}.",
  'phone.other_network':
    "Attention : cet écran est sur un autre réseau que ce téléphone. Si vous n'êtes pas vous-même devant cet écran, ne continuez pas.",
  'phone.expires': 'Cette demande expire dans {clock}.',
  'phone.sign_with': 'Se connecter avec {wallet}',
  'phone.no_wallet':
    "Aucun portefeuille n'a été trouvé dans ce navigateur. Ouvrez cette page dans le navigateur de votre application de portefeuille : scannez le code avec le portefeuille.",
  'phone.decline': "Ce n'était pas moi",
  'phone.approved_title': 'Terminé',
  'phone.approved': "Signé en tant que {address}. L'autre écran se connecte maintenant ; vous pouvez fermer cette page.",
  'phone.declined_title': 'Arrêté',
  'phone.declined': "La connexion a été arrêtée. Personne n'a été connecté.",
  'phone.no_key': "Ce lien est incomplet. Scannez à nouveau le code de l'autre écran.",
  'phone.invalid': "Cette connexion est introuvable. Scannez à nouveau le code de l'autre écran.",
  'phone.used': "Cette connexion a déjà reçu une réponse. Si ce n'était pas vous, recommencez sur l'autre écran.",
  'phone.expired': "Cette connexion a expiré. Recommencez sur l'autre écran pour obtenir un nouveau code.",
  'phone_signin.open': 'Utiliser un portefeuille sur votre téléphone',
  'phone_signin.title': 'Se connecter avec votre téléphone',
  'phone_signin.scan': "Scannez ce code avec votre téléphone, dans le navigateur de votre application de portefeuille s'il en a un.",
  'phone_signin.qr_label': 'Code QR pour se connecter sur votre téléphone',
  'phone_signin.code': 'Votre téléphone affichera le code {code}.',
  'phone_signin.waiting': 'Confirmez sur votre téléphone.',
  'phone_signin.expires': 'Le code expire dans {clock}.',
  'phone_signin.expired': 'Le code a expiré. Demandez-en un nouveau.',
  'phone_signin.declined': 'La connexion a été arrêtée sur le téléphone.',
  'phone_signin.new_code': 'Nouveau code',
  'phone_signin.close': 'Fermer',
  'phone_signin.signed_in': 'Connecté en tant que {name}. Redirection…',
  'phone_signin.used': 'Ce code a déjà été utilisé. Demandez-en un nouveau.',
  'phone_signin.confirm_question': 'Se connecter en tant que {name} ?',
  'phone_signin.confirm_hint':
    'Un téléphone a approuvé cette connexion avec l’adresse de portefeuille {address}. Confirmez seulement si c’est la vôtre.',
  'phone_signin.confirm': 'Confirmer',
  'phone_signin.cancel': 'Annuler',
  'phone_signin.cancelled': 'La connexion a été annulée. Demandez un nouveau code pour recommencer.',
  'phone_signin.mismatch': 'Le téléphone a approuvé un autre compte. Demandez un nouveau code.',
};
