import type { MailMessageKey } from './en.js';

/** Español. */
export const es: Readonly<Record<MailMessageKey, string>> = {
  'code.subject': '{code} es tu código de acceso a {name}',
  'code.intro': 'Tu código para iniciar sesión en {name} es:',
  'code.expires': 'Caduca en {minutes, plural, one {# minuto} other {# minutos}} (el {date} a las {time}) y solo sirve una vez.',
  'code.enter': 'Escríbelo en la página donde lo pediste. No se lo des a nadie: nadie de {name} te lo pedirá.',
  'code.link':
    'O inicia sesión con este enlace, en el mismo navegador donde pediste el código (en cualquier otro te pedirá que escribas el código):',
  'code.link_button': 'Iniciar sesión en {name}',
  'code.ignore':
    'Si no pediste este código, ignora este correo. Nadie puede iniciar sesión sin el código, y deja de funcionar por sí solo.',
  'notice.subject': 'Nuevo inicio de sesión en {name}',
  'notice.intro': 'Se acaba de iniciar sesión en tu cuenta de {name} desde un dispositivo o una red que no había usado antes:',
  'notice.device': 'Dispositivo',
  'notice.network': 'Red',
  'notice.time': 'Hora',
  'notice.method': 'Método',
  'notice.unknown_device': 'un dispositivo desconocido',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'device.on': '{browser} en {os}',
  'device.mobile': '{device} (móvil)',
  'device.tablet': '{device} (tableta)',
  'device.some_browser': 'Un navegador',
  'notice.unknown': 'desconocida',
  'notice.method_bip322': 'una firma de Bitcoin',
  'notice.method_email_otp': 'un código por correo',
  'notice.method_passkey': 'una llave de acceso',
  'notice.method_provider': 'inicio de sesión con {provider}',
  'notice.fine': 'Si fuiste tú, no tienes que hacer nada.',
  'notice.not_you':
    'Si no fuiste tú, abre la página de tu cuenta, cierra la sesión en todos los demás navegadores y revisa las formas de acceso que aparecen allí:',
  'notice.account_page': 'la página de tu cuenta',
  'mail.support': '¿Necesitas ayuda? Escribe al soporte de {name}: {contact}',
  'mail.support_link': 'Contactar con el soporte de {name}',
};
