import type { AccountPageMessageKey } from './en.js';

/** Español (tú, como en los correos). */
export const accountPagesEs: Readonly<Record<AccountPageMessageKey, string>> = {
  // Página de inicio de sesión (signin.html)
  'signin.email_title': 'Con un código por correo',
  'page.send_code': 'Enviar código',
  // Página de la cuenta (account.html)
  'account.title': 'Tu cuenta',
  'account.noscript': 'Esta página necesita JavaScript para mostrar tu cuenta.',
  'account.display_name': 'Nombre visible',
  'account.shown_as': 'Se muestra como',
  'account.name_hint': 'Hasta 64 caracteres. Déjalo vacío para quitar el nombre.',
  'account.save_name': 'Guardar el nombre',
  'account.roster_title': 'Otras cuentas en este navegador',
  'account.roster_empty': 'No hay ninguna otra cuenta con la sesión iniciada en este navegador.',
  'account.add_account': 'Añadir otra cuenta',
  'account.identities_title': 'Identidades vinculadas',
  'account.identities_hint': 'Con cualquiera de ellas puedes iniciar sesión en esta cuenta.',
  'account.link_title': 'Vincular otra forma de iniciar sesión',
  'account.link_hint':
    'Demuestra una dirección de Bitcoin o de correo y también servirá para entrar en esta cuenta. Vincular requiere una confirmación reciente.',
  'account.link_btc_title': 'Una dirección de Bitcoin',
  'account.link_btc_hint': 'Firmas un mensaje corto con la cartera que la tiene.',
  'account.link_address': 'Vincular la dirección',
  'account.link_email_title': 'Una dirección de correo',
  'account.link_email': 'Vincular el correo',
  'account.keys_title': 'Llaves de seguridad y llaves de acceso',
  'account.keys_hint':
    'Una llave de seguridad confirma que eres tú antes de un cambio delicado. Una llave de acceso además inicia tu sesión en esta cuenta, sin cartera ni código por correo.',
  'account.keys_empty': 'Todavía no hay llaves de seguridad ni llaves de acceso.',
  'account.key_label': 'Nombre de la llave nueva',
  'account.key_label_hint': 'Opcional, por ejemplo «YubiKey» o «Portátil del trabajo».',
  'account.key_sign_in': 'Iniciar sesión también con ella (llave de acceso)',
  'account.key_sign_in_hint': 'Una llave de acceso se desbloquea con tu huella, tu cara o tu PIN.',
  'account.key_add': 'Añadir una llave de seguridad',
  'account.devices_title': 'Dónde tienes la sesión iniciada',
  'account.devices_hint': 'Todos los navegadores con sesión en esta cuenta. Cerrar la sesión de otro requiere una confirmación reciente.',
  'account.devices_others': 'Cerrar la sesión en todos los demás',
  'account.activity_title': 'Actividad reciente',
  'account.activity_hint': 'Inicios de sesión y cambios en la seguridad de esta cuenta, de más reciente a más antiguo.',
  'account.activity_more': 'Mostrar actividad anterior',
  'account.data_title': 'Tus datos',
  'account.data_hint':
    'Todo lo que este servicio guarda sobre esta cuenta, en un archivo: identidades, sesiones, llaves, apps de Connect y actividad. Requiere una confirmación reciente.',
  'account.export': 'Descargar tus datos',
  'account.delete_title': 'Eliminar esta cuenta',
  'account.delete_hint':
    'Cierra su sesión en todas partes y borra para siempre sus identidades, llaves, apps de Connect y actividad. Sus direcciones y correos podrán crear después una cuenta nueva. No se puede deshacer.',
  'account.signout_hint': 'Si cierras la sesión de esta cuenta, las demás cuentas de este navegador siguen con la sesión iniciada.',
  'account.logout_current': 'Cerrar la sesión de esta cuenta',
  'stepup.intro': 'Este cambio requiere una prueba reciente de que controlas esta cuenta. La prueba vale 5 minutos.',
  // Página de inicio de sesión (signin.js)
  'wallet.will_sign': '{wallet} firmará como {address}.',
  // Confirmación (stepup.js), en el diálogo y en /sudo
  'stepup.key_button': 'Usar una llave de seguridad o de acceso',
  'stepup.key_title': 'Con una llave de seguridad',
  'stepup.key_hint': 'Toca o desbloquea una llave que hayas añadido a esta cuenta.',
  'stepup.btc_title': 'Con tu cartera de Bitcoin',
  'stepup.confirm': 'Confirmar',
  'stepup.none':
    'Esta cuenta no tiene ninguna dirección de Bitcoin ni de correo con la que confirmar. Cierra la sesión, vuelve a entrar e inténtalo otra vez.',
  'stepup.code_dead': 'Este código ya no sirve. Cancela y vuelve a confirmar para recibir un código nuevo.',
  // Vincular (link.js)
  'link.cancelled': 'No se vinculó nada.',
  'action.link': 'vincular {identity}',
  'link.another_account': 'otra cuenta',
  'link.move_title': '¿Mover {identity} a esta cuenta?',
  'link.move_text':
    '{identity} pertenece a {holder}. La dirección pasará aquí, y esa cuenta se unirá con esta: su sesión se cerrará en todas partes y después dejará de existir. No se puede deshacer.',
  'link.move_confirm': 'Mover y unir',
  'link.move_declined': '{identity} se queda en {holder}.',
  'link.merged': '{identity} está vinculada, y {merged} se unió a esta cuenta.',
  'link.linked': '{identity} está vinculada a esta cuenta.',
  'link.address_refused': 'Este servicio no acepta esa dirección de Bitcoin.',
  'link.with_wallet': 'Vincular con {wallet}',
  'link.wallet_no_address': '{wallet} no compartió ninguna dirección de Bitcoin.',
  'link.code_sent_to': 'Hemos enviado un código a {email}.',
  'link.move_identities': 'Sus otras formas de iniciar sesión',
  'link.move_identities_hint':
    'Marca solo las que reconozcas. Lo que no marques se elimina con esa cuenta y queda libre para que inicie sesión con ello quien lo controle.',
  'link.move_apps': 'Sus apps de Connect',
  'link.move_apps_hint':
    'Marca las que quieras conservar. Las apps sin marcar se borran con esa cuenta, y sus claves de API dejan de funcionar.',
  'link.move_keys': 'Sus llaves de seguridad y llaves de acceso',
  'link.move_keys_hint':
    'Nunca se mueven: una llave demuestra quién la registró, no que seas tú, así que cada una se elimina con esa cuenta.',
  'link.will_be_removed': 'Se eliminará',
  'link.look_again': 'Volver a mirar',
  'link.holder_disabled':
    '{identity} pertenece a una cuenta que el operador de este servicio ha desactivado, así que no se puede mover aquí.',
  'link.app_named': 'la app de Connect {name}',
  'link.merged_moved': 'También se movió aquí: {items}.',
  'link.merged_removed_identities':
    '{count, plural, one {Se eliminó con ella y queda libre para quien lo controle: {items}.} other {Se eliminaron con ella y quedan libres para quien los controle: {items}.}}',
  'link.merged_removed_keys':
    '{count, plural, one {Se eliminó su llave de seguridad o llave de acceso: {names}.} other {Se eliminaron sus # llaves de seguridad y llaves de acceso: {names}.}}',
  'link.merged_removed_apps':
    '{count, plural, one {Se borró su app de Connect: {names}.} other {Se borraron sus # apps de Connect: {names}.}}',
  'link.merged_nothing_removed': 'No tenía nada más, así que no se eliminó nada.',
  // Página de la cuenta (account.js)
  'account.delete_confirm_label': 'Escribe <b>eliminar</b> para confirmar',
  'account.delete_word': 'eliminar',
  'account.signed_in_as': 'Sesión iniciada como {name}',
  'account.name_not_set': 'Sin definir',
  'account.copy_identity':
    '{kind, select, btc {Copiar la dirección de Bitcoin} email {Copiar el correo} nostr {Copiar la clave de Nostr} oauth {Copiar el proveedor de inicio de sesión} connect {Copiar la app conectada} other {Copiar el ID de cuenta}}',
  'account.copied_identity':
    '{kind, select, btc {Se copió la dirección de Bitcoin.} email {Se copió el correo.} nostr {Se copió la clave de Nostr.} oauth {Se copió el proveedor de inicio de sesión.} connect {Se copió la app conectada.} other {Se copió el ID de cuenta.}}',
  'account.copy_selected': 'Está seleccionado: cópialo con el teclado o el menú.',
  'account.switch_to': 'Cambiar a {name}',
  'account.switch': 'Cambiar',
  'account.no_identities': 'No hay identidades vinculadas.',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'account.now_using': 'Ahora estás usando {name}.',
  'account.logout_all_title': '{count, plural, one {¿Cerrar sesión?} other {¿Cerrar la sesión de las # cuentas?}}',
  'account.logout_one_text': 'Este navegador dejará de tener la sesión iniciada.',
  'account.logout_all_text':
    'Se cerrará la sesión de todas las cuentas de este navegador, no solo de {name}. Tendrás que volver a entrar en cada una para usarla aquí.',
  'account.logout_all_confirm': '{count, plural, one {Cerrar sesión} other {Cerrar las #}}',
  'account.still_signed_in': 'Sigues con la sesión iniciada.',
  'account.signed_out_of': 'Se cerró la sesión de {previous}. Ahora estás usando {name}.',
  'action.export': 'descargar tus datos',
  'account.nothing_downloaded': 'No se descargó nada.',
  'account.downloaded': 'Tus datos se descargaron en un archivo JSON.',
  'account.delete_mismatch': 'Escribe la palabra {word} para confirmar que quieres eliminar esta cuenta.',
  'action.delete': 'eliminar {name}',
  'account.not_deleted': 'No se eliminó la cuenta.',
  'account.deleted_switched': 'Se eliminó {deleted}. Ahora estás usando {name}.',
  'account.name_too_long': 'El nombre puede tener como máximo 64 caracteres.',
  'action.rename_account': 'cambiar el nombre visible',
  'account.name_removed': 'Nombre visible quitado.',
  'account.name_saved': 'Nombre visible guardado.',
  'account.remove_title': '¿Quitar {name}?',
  'account.remove_text':
    '{name} dejará de servir para entrar en esta cuenta, y se cerrará la sesión de los navegadores que entraron con ella. Puedes volver a vincularla más tarde.',
  'action.remove_identity': 'quitar {name}',
  'stepup.intro_action': 'Para {action}, demuestra otra vez que controlas esta cuenta. La prueba vale 5 minutos.',
  // La aplicación de un inicio de sesión (signin.html, sudo.html) y «Aplicaciones en las que has iniciado sesión» en la página de la cuenta (account-apps.js)
  'apps.title': 'Aplicaciones en las que has iniciado sesión',
  'apps.hint':
    'Estas aplicaciones pueden iniciar tu sesión con esta cuenta y ver lo que figura debajo de cada una. Si le quitas el acceso a una, termina en el acto; la próxima vez que la uses te lo volverá a pedir.',
  'apps.empty': 'Todavía no has permitido que ninguna aplicación inicie tu sesión.',
  // El menú de cuenta de la cabecera (account-menu.js) y las secciones de la página de cuenta (account.html)
  'account.nav_label': 'Secciones de la cuenta',
  'account.nav_profile': 'Perfil',
  'account.nav_sign_in': 'Formas de iniciar sesión',
  'account.nav_security': 'Seguridad',
  'account.nav_apps': 'Aplicaciones',
  'account.edit_name': 'Editar el nombre',
  'account.did_explained':
    'El ID permanente de tu cuenta. Las aplicaciones en las que inicias sesión lo ven en lugar de tu correo, y no cambia cuando vinculas o quitas una forma de iniciar sesión.',
  'account.connect_explained':
    'Las apps de Connect son otra cosa: aplicaciones que registraste con esta cuenta para usar la API de este servicio, cada una con su propia clave de API.',
  'account.passkeys_elsewhere': 'Las llaves de acceso, que inician tu sesión sin cartera ni código, están en <link>Seguridad</link>.',
  'account.link_btc_open': 'Vincular una dirección',
  'account.link_email_open': 'Vincular un correo',
  'account.key_create': 'Añadir la llave',
  'account.delete_open': 'Eliminar la cuenta',
  'account.copy_value': '{action}: {value}',
};
