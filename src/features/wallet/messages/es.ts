import type { WalletPageMessageKey } from './en.js';

/** Español (tú, como en los correos). */
export const walletPagesEs: Readonly<Record<WalletPageMessageKey, string>> = {
  // Página de inicio de sesión (signin.js)
  'signin.wallet_check':
    'Revisa tu cartera… {wallet} te pide compartir tu dirección y firmar un mensaje corto. Así demuestras que la dirección es tuya, y no cuesta nada.',
  'page.address_refused': 'Este servicio no acepta esa dirección de Bitcoin. Revísala e inténtalo de nuevo.',
  'signin.message_ready': 'Mensaje listo. Fírmalo con tu cartera y luego pega la firma.',
  'signin.message_one_minute': 'Queda un minuto para firmar el mensaje.',
  'signin.message_expires_in': 'Caduca en {clock}.',
  'signin.message_expired': 'Este mensaje ha caducado.',
  'signin.message_expired_unsigned': 'El mensaje caducó antes de firmarse. Pide uno nuevo y fírmalo.',
  'signin.message_expires_at': 'Caduca a las {time}.',
  'signin.wallet_signed': '{wallet} firmó como {address}. Iniciando sesión…',
  'wallet.sign_with': 'Firmar con {wallet}',
  'wallet.address_refused': 'Este servicio no acepta la dirección {address} de {wallet}.',
  'wallet.connect': 'Conectar {wallet}',
  'signin.new_message_ready': 'Hay un mensaje nuevo listo para firmar.',
  'signin.legacy_wallet':
    '{wallet} firmó con el método antiguo (ECDSA), que solo sirve para direcciones que empiezan por 1. Elige BIP-322 en sus opciones de firma y vuelve a firmar.',
  'signin.legacy_pasted':
    'Tu cartera firmó con el método antiguo (ECDSA), que solo sirve para direcciones que empiezan por 1. Elige BIP-322 en sus opciones de firma y vuelve a firmar.',
  'signin.mismatch_wallet':
    'La firma de {wallet} no coincide: puede que firmara con otra cuenta o que cambiara el mensaje. Revisa la cuenta en {wallet} y vuelve a firmar.',
  'signin.mismatch_pasted':
    'La firma no coincide. Firma exactamente el mensaje mostrado, todas sus líneas, incluida la última línea vacía que algunas carteras quitan, con la cartera que tiene esta dirección, usando BIP-322.',
  // Carteras (wallets.js) y llaves de seguridad (passkeys.js)
  'wallet.wrong_account': '{wallet} está usando {active}, no {wanted}. Cambia a {wanted} en {wallet} o vuelve a empezar con {active}.',
  'wallet.declined': 'Lo rechazaste en {wallet}, así que no se firmó nada.',
  'wallet.failed_because': '{wallet} no pudo firmar: {reason}',
  'wallet.failed': '{wallet} no pudo firmar. Copia el mensaje y fírmalo de otra forma.',
  // Explorador de la API (explorer.js)
  'wallet.accounts_prompt': 'Inicia sesión con tu dirección de Bitcoin',
};
