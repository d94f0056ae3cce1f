import type { EmailCodePageMessageKey } from './en.js';

/** Español (tú, como en los correos). */
export const emailCodePagesEs: Readonly<Record<EmailCodePageMessageKey, string>> = {
  // Página de inicio de sesión (signin.js)
  'signin.link_elsewhere':
    'Este enlace de acceso solo funciona en el navegador donde se pidió el código. Ábrelo allí o escribe en ese navegador el código del correo. Para iniciar sesión aquí, continúa con tu dirección de correo y recibirás un código nuevo.',
  'page.code_replaced': 'Ese código es de un correo anterior: lo sustituyó uno más reciente. Escribe el código del correo más reciente.',
  'signin.resend_in': 'Enviar un código nuevo (en {seconds} s)',
  'page.code_expires_in': 'El código caduca en {clock}.',
  'page.code_expired_short': 'Este código ha caducado.',
  'signin.code_expired': 'El código ha caducado. Envía un código nuevo y escribe ese.',
  'signin.code_sent_to': 'Hemos enviado un código a {email}. Vale durante 10 minutos.',
  'page.code_digits': 'Escribe las 6 cifras del correo.',
  'signin.code_dead': 'Este código ya no sirve: se agotaron sus intentos o lo sustituyó uno más reciente. Envía un código nuevo.',
  'signin.code_wrong_tries':
    'El código no es correcto. {left, plural, one {Queda # intento} other {Quedan # intentos}} antes de que deje de servir.',
  'signin.resend_wait': 'Podrás pedir un código nuevo dentro de {seconds, plural, one {# segundo} other {# segundos}}.',
  'signin.code_resent': 'Hay un código nuevo de camino a {email}. Solo sirve el más reciente.',
};
