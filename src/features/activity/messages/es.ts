import type { ActivityPageMessageKey } from './en.js';

/** Español (tú, como en los correos). */
export const activityPagesEs: Readonly<Record<ActivityPageMessageKey, string>> = {
  // Página de la cuenta (account.js)
  'method.bip322': 'cartera de Bitcoin',
  'method.email_otp': 'código por correo',
  'method.passkey': 'llave de acceso',
  'method.key': 'una llave de seguridad',
  'method.unknown': 'una forma desconocida',
  'account.unknown_browser': 'Un navegador desconocido',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'device.on': '{browser} en {os}',
  'device.mobile': '{device} (móvil)',
  'device.tablet': '{device} (tableta)',
  'device.some_browser': 'Un navegador',
  'account.device_signed_in': 'Sesión iniciada el {date} con {method}',
  'account.device_seen': 'visto por última vez el {date}',
  'account.network': 'red {network}',
  'account.this_browser': 'Este navegador',
  'account.sign_out_this_browser': 'Cerrar sesión de {name} (este navegador)',
  'account.sign_out_named': 'Cerrar sesión de {name}',
  'action.sign_out_device': 'cerrar la sesión de {name}',
  'account.no_browser_signed_out': 'No se cerró la sesión de ningún navegador.',
  'account.browser_gone': 'Ese navegador ya había cerrado la sesión.',
  'account.browser_signed_out': 'Se cerró la sesión de {name} en esta cuenta.',
  'action.sign_out_others': 'cerrar la sesión en todos los demás navegadores',
  'account.others_signed_out':
    '{count, plural, one {Se cerró la sesión de otro navegador.} other {Se cerró la sesión de otros # navegadores.}}',
  'field.display_name': 'nombre visible',
  'event.signin':
    'Inicio de sesión con {method}{placed, select, yes { ({where})} other {}}{added, select, yes {, añadido a un navegador que tenía otra cuenta} other {}}',
  'event.sudo': 'Confirmaste que eras tú con {method}',
  'event.sudo_key': 'Confirmaste que eras tú con la llave {key}',
  'event.sudo_failed': 'Falló una confirmación con {method} ({reason})',
  'event.step_up': 'Confirmación reforzada con la llave {key}',
  'event.step_up_failed': 'Falló una confirmación reforzada con una llave de seguridad ({reason})',
  'event.identity_linked':
    'Se vinculó {kind, select, btc {la dirección de Bitcoin} email {el correo} did {el ID de cuenta} nostr {la clave de Nostr} oauth {el proveedor de inicio de sesión} connect {la app conectada} other {la identidad}} {value}',
  'event.identity_unlinked':
    'Se quitó {kind, select, btc {la dirección de Bitcoin} email {el correo} did {el ID de cuenta} nostr {la clave de Nostr} oauth {el proveedor de inicio de sesión} connect {la app conectada} other {la identidad}} {value}',
  'event.merged_from': 'La cuenta {account} se unió a esta',
  'event.merged_into': 'Esta cuenta se unió a {account}',
  'event.edited': 'Se cambió: {fields}',
  'event.edited_account': 'Se cambió la cuenta',
  'event.key_added': 'Se añadió la {passkey, select, yes {llave de acceso} other {llave de seguridad}} {name}',
  'event.key_removed': 'Se quitó la llave {name}',
  'event.revoked_all':
    'El operador cerró la sesión de esta cuenta en todas partes ({count, plural, one {# navegador} other {# navegadores}})',
  'event.revoked_others': 'Sesión cerrada en todos los demás ({count, plural, one {# navegador} other {# navegadores}})',
  'event.revoked_one': 'Se cerró la sesión de otro navegador',
  'event.tab_pinned':
    'Se abrió una pestaña con esta cuenta mientras la cuenta {account} estaba activa{placed, select, yes { ({where})} other {}}',
  'event.app_created': 'Se creó la app de Connect {name}',
  'event.app_rotated': 'Se sustituyó la clave de API de la app de Connect {name}',
  'event.app_deleted': 'Se eliminó la app de Connect {name}',
  'event.app_webhook_removed': 'Se quitó el webhook de la app de Connect {name}',
  'event.app_webhook_set': 'El webhook de la app de Connect {name} ahora es {url}',
  'event.exported': 'Se descargaron los datos de la cuenta',
  'event.disabled': 'El operador desactivó esta cuenta',
  'event.enabled': 'El operador volvió a activar esta cuenta',
  'event.key_removed_operator': 'El operador quitó la llave {name}',
  'event.revoked_one_operator': 'El operador cerró la sesión de esta cuenta en un navegador',
  'event.disabled_reason': 'El operador desactivó esta cuenta: «{reason}»',
  'event.enabled_reason': 'El operador volvió a activar esta cuenta: «{reason}»',
  'account.failed': 'Fallido',
};
