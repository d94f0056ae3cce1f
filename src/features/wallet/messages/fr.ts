import type { WalletPageMessageKey } from './en.js';

/** Français (vous, comme dans les e-mails ; apostrophes typographiques). */
export const walletPagesFr: Readonly<Record<WalletPageMessageKey, string>> = {
  // Page de connexion (signin.js)
  'signin.wallet_check':
    'Regardez votre portefeuille… {wallet} vous demande de partager votre adresse et de signer un court message. Cela prouve que l’adresse est à vous et ne coûte rien.',
  'page.address_refused': 'Ce service n’accepte pas cette adresse Bitcoin. Vérifiez-la et réessayez.',
  'signin.message_ready': 'Message prêt. Signez-le avec votre portefeuille, puis collez la signature.',
  'signin.message_one_minute': 'Il reste une minute pour signer le message.',
  'signin.message_expires_in': 'Expire dans {clock}.',
  'signin.message_expired': 'Ce message a expiré.',
  'signin.message_expired_unsigned': 'Le message a expiré avant d’être signé. Demandez-en un nouveau et signez-le.',
  'signin.message_expires_at': 'Il expire à {time}.',
  'signin.wallet_signed': '{wallet} a signé en tant que {address}. Connexion…',
  'wallet.sign_with': 'Signer avec {wallet}',
  'wallet.address_refused': 'Ce service n’accepte pas l’adresse {address} de {wallet}.',
  'wallet.connect': 'Connecter {wallet}',
  'signin.new_message_ready': 'Un nouveau message est prêt à être signé.',
  'signin.legacy_wallet':
    '{wallet} a signé avec l’ancienne méthode (ECDSA), qui ne fonctionne que pour les adresses commençant par 1. Choisissez BIP-322 dans ses options de signature et signez à nouveau.',
  'signin.legacy_pasted':
    'Votre portefeuille a signé avec l’ancienne méthode (ECDSA), qui ne fonctionne que pour les adresses commençant par 1. Choisissez BIP-322 dans ses options de signature et signez à nouveau.',
  'signin.mismatch_wallet':
    'La signature de {wallet} ne correspond pas : il a peut-être signé avec un autre compte ou modifié le message. Vérifiez le compte dans {wallet} et signez à nouveau.',
  'signin.mismatch_pasted':
    'La signature ne correspond pas. Signez exactement le message affiché, chaque ligne, y compris la dernière ligne vide que certains portefeuilles omettent, avec le portefeuille qui détient cette adresse, en BIP-322.',
  // Portefeuilles (wallets.js) et clés de sécurité (passkeys.js)
  'wallet.wrong_account': '{wallet} utilise {active}, pas {wanted}. Passez à {wanted} dans {wallet}, ou recommencez avec {active}.',
  'wallet.declined': 'Vous avez refusé dans {wallet} : rien n’a été signé.',
  'wallet.failed_because': '{wallet} n’a pas pu signer : {reason}',
  'wallet.failed': '{wallet} n’a pas pu signer. Copiez le message et signez-le autrement.',
  // Explorateur de l’API (explorer.js)
  'wallet.accounts_prompt': 'Se connecter avec votre adresse Bitcoin',
};
