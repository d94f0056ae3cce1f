/**
 * English: the words of the email-code pages (src/features/email-code/pages/),
 * the reference for every other language of this folder
 * (docs/architecture.md "Words on a page"; the rules are in
 * src/platform/i18n/pages/en.ts).
 */
export const emailCodePagesEn = {
  // Sign-in page (signin.js)
  'signin.link_elsewhere':
    'This sign-in link works only in the browser where the code was asked for. Open it there, or type the code from the e-mail in that browser. To sign in here instead, continue with your e-mail address to get a new code.',
  'page.code_replaced': 'That code is from an earlier e-mail: a newer code replaced it. Enter the code from the newest e-mail.',
  'signin.resend_in': 'Send a new code (in {seconds} s)',
  'page.code_expires_in': 'The code expires in {clock}.',
  'page.code_expired_short': 'This code has expired.',
  'signin.code_expired': 'The code has expired. Send a new code and enter that one.',
  'signin.code_sent_to': 'We sent a code to {email}. It is valid for 10 minutes.',
  'page.code_digits': 'Enter the 6 digits from the e-mail.',
  'signin.code_dead': 'This code can no longer be used: its tries are spent, or a newer code replaced it. Send a new code.',
  'signin.code_wrong_tries': 'That code is not right. {left, plural, one {# try} other {# tries}} left before it stops working.',
  'signin.resend_wait': 'You can ask for a new code in {seconds, plural, one {# second} other {# seconds}}.',
  'signin.code_resent': 'A new code is on its way to {email}. Only the newest code works.',
} as const;

export type EmailCodePageMessageKey = keyof typeof emailCodePagesEn;
