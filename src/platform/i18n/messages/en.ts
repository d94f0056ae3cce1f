/** English: the reference catalog; every other language has exactly these keys. */
export const en = {
  'code.subject': '{code} is your sign-in code for {name}',
  'code.intro': 'Your code to sign in to {name} is:',
  'code.expires': 'It expires in {minutes, plural, one {# minute} other {# minutes}} (on {date} at {time}) and works once.',
  'code.enter': 'Enter it on the page where you asked for it. Never give it to anyone: nobody from {name} will ask you for it.',
  'code.link': 'Or sign in with this link, in the same browser where you asked for the code (anywhere else it asks you to type the code):',
  'code.link_button': 'Sign in to {name}',
  'code.ignore':
    'If you did not ask for this code, ignore this e-mail. Nobody can sign in without the code, and it stops working on its own.',
  'notice.subject': 'New sign-in to {name}',
  'notice.intro': 'Your account on {name} was just signed in to from a device or network it had not used before:',
  'notice.device': 'Device',
  'notice.network': 'Network',
  'notice.time': 'Time',
  'notice.method': 'Method',
  'notice.unknown_device': 'an unknown device',
  // A device label ("Chrome 156 on Linux (mobile)", src/identity/session/device.ts) in this language.
  'device.on': '{browser} on {os}',
  'device.mobile': '{device} (phone)',
  'device.tablet': '{device} (tablet)',
  'device.some_browser': 'A browser',
  'notice.unknown': 'unknown',
  'notice.method_bip322': 'a Bitcoin signature',
  'notice.method_email_otp': 'an e-mail code',
  'notice.method_passkey': 'a passkey',
  'notice.method_provider': '{provider} sign-in',
  'notice.fine': 'If this was you, there is nothing to do.',
  'notice.not_you':
    'If it was not you, open the account page, choose "Sign out everywhere else" under "Where you are signed in", and check the ways to sign in listed there:',
  'notice.account_page': 'the account page',
  'mail.support': 'Need help? Contact {name} support: {contact}',
  'mail.support_link': 'Contact {name} support',
} as const;

export type MailMessageKey = keyof typeof en;
