import type { EmailCodePageMessageKey } from './en.js';

/** Français (vous, comme dans les e-mails ; apostrophes typographiques). */
export const emailCodePagesFr: Readonly<Record<EmailCodePageMessageKey, string>> = {
  // Page de connexion (signin.js)
  'signin.link_elsewhere':
    'Ce lien de connexion ne fonctionne que dans le navigateur où le code a été demandé. Ouvrez-le là-bas, ou saisissez dans ce navigateur le code reçu par e-mail. Pour vous connecter ici, continuez avec votre adresse e-mail afin de recevoir un nouveau code.',
  'page.code_replaced': 'Ce code vient d’un e-mail précédent : un code plus récent l’a remplacé. Saisissez le code du dernier e-mail.',
  'signin.resend_in': 'Envoyer un nouveau code (dans {seconds} s)',
  'page.code_expires_in': 'Le code expire dans {clock}.',
  'page.code_expired_short': 'Ce code a expiré.',
  'signin.code_expired': 'Le code a expiré. Envoyez un nouveau code et saisissez celui-ci.',
  'signin.code_sent_to': 'Nous avons envoyé un code à {email}. Il est valable 10 minutes.',
  'page.code_digits': 'Saisissez les 6 chiffres de l’e-mail.',
  'signin.code_dead':
    'Ce code n’est plus utilisable : ses essais sont épuisés ou un code plus récent l’a remplacé. Envoyez un nouveau code.',
  'signin.code_wrong_tries':
    'Ce code est incorrect. {left, plural, one {Encore # essai} other {Encore # essais}} avant qu’il ne cesse de fonctionner.',
  'signin.resend_wait': 'Vous pourrez demander un nouveau code dans {seconds, plural, one {# seconde} other {# secondes}}.',
  'signin.code_resent': 'Un nouveau code est en route vers {email}. Seul le plus récent fonctionne.',
};
