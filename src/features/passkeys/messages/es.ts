import type { PasskeysPageMessageKey } from './en.js';

/** Español (tú, como en los correos). */
export const passkeysPagesEs: Readonly<Record<PasskeysPageMessageKey, string>> = {
  // Página de inicio de sesión (signin.js)
  'signin.passkey_not_allowed':
    'Este servicio no puede iniciar tu sesión con esta llave de acceso. Usa otra forma y luego añádela en la página de tu cuenta.',
  // Carteras (wallets.js) y llaves de seguridad (passkeys.js)
  'key.prompt_closed': 'La ventana de la llave de seguridad se cerró antes de terminar. Inténtalo de nuevo cuando quieras.',
  'key.already_added_here': 'Esta llave de seguridad ya está añadida a esta cuenta.',
  'key.browser_refused': 'Este navegador se negó a usar llaves de seguridad en este sitio.',
  'key.browser_failed': 'El navegador no pudo usar la llave de seguridad. Inténtalo de nuevo o usa otra forma.',
  'key.verify_failed': 'No se pudo verificar la respuesta de la llave de seguridad. Inténtalo de nuevo.',
  'key.cloned_authenticator':
    'Esta llave de seguridad respondió con un contador antiguo, lo que puede indicar que se copió. Se rechazó; quítala y vuelve a añadirla si confías en ella.',
  'key.credential_outside_allowlist': 'Esta cuenta no puede usar esta llave aquí. Elige otra llave u otra forma.',
  'key.no_credentials_registered': 'Esta cuenta aún no tiene llaves de seguridad.',
  'key.credential_exists': 'Esta llave de seguridad ya está añadida.',
  'key.credential_not_discoverable':
    'Esta llave no sirve para iniciar sesión sin un nombre. Añádela como llave de seguridad para confirmar.',
  'key.webauthn_origin_mismatch': 'Las llaves de seguridad de este servicio solo funcionan en sus propios sitios.',
  'key.webauthn_rp_id_mismatch': 'La llave respondió para otro sitio.',
  'key.webauthn_unavailable': 'Las llaves de seguridad no están disponibles en este servicio.',
  'key.nonce_reused': 'Esa respuesta ya se usó. Inténtalo de nuevo.',
  'key.invalid_challenge': 'La solicitud caducó antes de que respondiera la llave. Inténtalo de nuevo.',
  // Página de la cuenta (account.js)
  'account.key_kind_passkey': 'Llave de acceso',
  'account.key_kind_security': 'Llave de seguridad',
  'account.key_added_on': 'añadida el {date}',
  'account.key_last_used': 'usada por última vez el {date}',
  'account.key_unused': 'aún sin usar',
  'account.rename_named': 'Cambiar nombre de {name}',
  'account.rename': 'Cambiar nombre',
  'account.rename_label': 'Nombre nuevo para {name}',
  'account.key_name_invalid': 'Ese nombre no se puede usar. Usa de 1 a 64 caracteres normales.',
  'account.key_renamed': 'La llave ahora se llama {name}.',
  'action.remove_key': 'quitar la llave {name}',
  'action.add_key': 'añadir una llave de seguridad',
  'account.no_key_added': 'No se añadió ninguna llave.',
  'account.key_prompt_closed': 'No se añadió ninguna llave: se cerró la ventana.',
  'account.passkey_added': 'Se añadió {name}: ya puedes iniciar sesión con ella.',
  'account.key_added': 'Se añadió {name}.',
};
